package io.strata.platform.workers;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * Length-prefixed frames over a local stream channel (a Unix-domain socket): {@code [int length][byte type][body]},
 * little-endian, {@code length} counting the type byte and the body. One request, one reply; calls are
 * serialised on this object, so the engine thread and a restart never interleave frames.
 */
final class FrameChannel implements AutoCloseable {
    /** Largest frame either side accepts (a step's logits for the biggest batch fit well inside). */
    static final int MAX_FRAME = 1 << 30;

    /** A received frame; {@code body} is positioned at its start and little-endian. */
    record Frame(byte type, ByteBuffer body) {
    }

    private final SocketChannel channel;
    private final ByteBuffer header = ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN);

    FrameChannel(SocketChannel channel) {
        this.channel = channel;
    }

    synchronized void send(byte type, ByteBuffer body) throws IOException {
        header.clear();
        header.putInt(body.remaining() + 1).put(type).flip();
        ByteBuffer[] parts = {header, body};
        while (header.hasRemaining() || body.hasRemaining()) {
            channel.write(parts);
        }
    }

    /** Blocks for the next frame; {@link EOFException} when the other side closed the channel (or died). */
    synchronized Frame receive() throws IOException {
        header.clear();
        readFully(header);
        header.flip();
        int length = header.getInt();
        byte type = header.get();
        if (length < 1 || length > MAX_FRAME) {
            throw new IOException("bad frame length " + length);
        }
        ByteBuffer body = ByteBuffer.allocate(length - 1).order(ByteOrder.LITTLE_ENDIAN);
        readFully(body);
        body.flip();
        return new Frame(type, body);
    }

    /** Sends a request and waits for its reply. */
    synchronized Frame call(byte type, ByteBuffer body) throws IOException {
        send(type, body);
        return receive();
    }

    private void readFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException("the channel closed");
            }
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // closing a dead channel: nothing left to release
        }
    }
}
