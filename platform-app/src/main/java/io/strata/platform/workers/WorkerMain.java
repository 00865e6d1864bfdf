package io.strata.platform.workers;

import io.strata.model.LoadedModel;
import io.strata.model.ModelLoader;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A worker process: loads one backend plugin and the model, then serves one {@link ModelExecutor} to the
 * platform over a Unix-domain socket ({@link WorkerProtocol}). Started by {@link WorkerSupervisor} with the
 * platform's own java binary and class path; arguments are {@code --key=value} ({@link WorkerLaunch#arguments}).
 * The socket is bound only once the model is loaded, so the platform's connect doubles as "ready"; the platform
 * connects twice (control, then heartbeat: {@link WorkerProtocol}) and the worker beats every
 * {@code --heartbeat-interval-ms} from then on. Exit codes:
 * 0 closed by the platform (or the platform went away), 2 could not start, 3 the executor failed fatally.
 */
public final class WorkerMain {
    private static final Logger log = LoggerFactory.getLogger(WorkerMain.class);

    private WorkerMain() {
    }

    public static void main(String[] args) {
        quietLogging();
        Map<String, String> a = parse(args);
        PluginBackend plugin;
        LoadedModel model;
        ModelExecutor executor;
        try {
            plugin = PluginBackend.load(Path.of(a.get("plugin-jar")), a.get("plugin"));
            model = ModelLoader.load(Path.of(a.get("model")));
            executor = plugin.backend().load(model.config(), model.checkpoint(), new LoadOptions(a.get("model-id"),
                    Integer.parseInt(a.get("max-batch-tokens")), Integer.parseInt(a.get("max-batch-requests")),
                    Integer.parseInt(a.getOrDefault("threads", "0")), settings(a)));
        } catch (RuntimeException | LinkageError e) {
            System.err.println("strata worker: cannot start: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            System.exit(2);
            return;
        }
        int code = 0;
        Path socket = Path.of(a.get("socket"));
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Files.deleteIfExists(socket);
            server.bind(UnixDomainSocketAddress.of(socket));
            log.info("worker ready: backend '{}', model {}, socket {}", a.get("plugin"), a.get("model-id"), socket);
            try (SocketChannel ch = server.accept(); FrameChannel channel = new FrameChannel(ch);
                 SocketChannel beats = server.accept(); FrameChannel heartbeat = new FrameChannel(beats)) {
                Heartbeat.start(heartbeat, Duration.ofMillis(Long.parseLong(a.get("heartbeat-interval-ms"))));
                new WorkerServer(executor, a.get("model-id"), channel).serve();
            }
        } catch (Exception | Error e) {
            System.err.println("strata worker: failed: " + e);
            code = 3;
        } finally {
            executor.close();
            model.close();
            plugin.close();
        }
        System.exit(code);
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                System.err.println("strata worker: bad argument " + arg + " (want --key=value)");
                System.exit(2);
            }
            out.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return out;
    }

    private static Map<String, String> settings(Map<String, String> args) {
        Map<String, String> out = new LinkedHashMap<>();
        args.forEach((k, v) -> {
            if (k.startsWith("setting.")) {
                out.put(k.substring("setting.".length()), v);
            }
        });
        return out;
    }

    /** Without Spring's configuration logback logs DEBUG; the platform prefixes and relays what we print. */
    private static void quietLogging() {
        if (LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME) instanceof ch.qos.logback.classic.Logger root) {
            root.setLevel(ch.qos.logback.classic.Level.INFO);
        }
    }
}
