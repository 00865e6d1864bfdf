package io.strata.platform.web;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP server under the platform (Reactor Netty, the version this build ships) keeps answering a keep-alive
 * connection after a request had to wait behind an unfinished one. Reactor Netty 1.3.6 stopped reading such a
 * connection when the waiting request was answered at once: every later request on it went unanswered, which is how
 * the console's browser tests stalled for 90 s on a style sheet after a form post whose answer was written from
 * another thread. A browser or an OpenAI client reusing its connection would hang the same way.
 */
class KeepAliveAfterQueuedRequestTest {

    @Test
    void theRequestAfterOneQueuedBehindASlowAnswerIsAnswered() throws IOException {
        DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
                .handle((request, response) -> response.sendString(request.uri().equals("/slow")
                        // answered from a timer thread, after the request behind it has been queued
                        ? Mono.delay(Duration.ofMillis(50)).thenReturn("slow")
                        : Mono.just("fast")))
                .bindNow(Duration.ofSeconds(10));
        try {
            for (int round = 0; round < 5; round++) {
                try (Socket socket = new Socket("127.0.0.1", server.port())) {
                    socket.setSoTimeout(5_000);
                    OutputStream out = socket.getOutputStream();
                    InputStream in = socket.getInputStream();
                    out.write((get("/slow") + get("/fast")).getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    assertThat(body(in)).isEqualTo("slow");
                    assertThat(body(in)).isEqualTo("fast");
                    out.write(get("/fast").getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    String third;
                    try {
                        third = body(in);
                    } catch (SocketTimeoutException e) {
                        third = "no answer within 5 s";
                    }
                    assertThat(third).as("round %d: the next request on the connection", round).isEqualTo("fast");
                }
            }
        } finally {
            server.disposeNow();
        }
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    }

    /** Reads one response (Content-Length or chunked) and returns its body. */
    private static String body(InputStream in) throws IOException {
        int length = -1;
        boolean chunked = false;
        String line;
        while (!(line = line(in)).isEmpty()) {
            String header = line.toLowerCase(Locale.ROOT);
            if (header.startsWith("content-length:")) {
                length = Integer.parseInt(header.substring(15).trim());
            } else if (header.startsWith("transfer-encoding:") && header.contains("chunked")) {
                chunked = true;
            }
        }
        if (!chunked) {
            return new String(in.readNBytes(Math.max(length, 0)), StandardCharsets.UTF_8);
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        int size;
        do {
            size = Integer.parseInt(line(in).split(";")[0].trim(), 16);
            body.write(in.readNBytes(size));
            line(in);
        } while (size > 0);
        return body.toString(StandardCharsets.UTF_8);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new IOException("connection closed in the middle of a response");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }
}
