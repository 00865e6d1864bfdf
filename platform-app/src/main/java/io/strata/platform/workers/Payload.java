package io.strata.platform.workers;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A growable little-endian buffer for building a frame's body, and the matching readers for strings and
 * arrays (arrays go as a count then the values, copied in bulk).
 */
final class Payload {
    /** A float in the body: little-endian, at any byte offset of the heap buffer. */
    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ByteBuffer buf;

    Payload(int initialBytes) {
        buf = ByteBuffer.allocate(Math.max(16, initialBytes)).order(ByteOrder.LITTLE_ENDIAN);
    }

    Payload() {
        this(64);
    }

    private void room(int bytes) {
        if (buf.remaining() < bytes) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + bytes))
                    .order(ByteOrder.LITTLE_ENDIAN);
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }
    }

    Payload putInt(int v) {
        room(4);
        buf.putInt(v);
        return this;
    }

    Payload putLong(long v) {
        room(8);
        buf.putLong(v);
        return this;
    }

    Payload putBoolean(boolean v) {
        room(1);
        buf.put((byte) (v ? 1 : 0));
        return this;
    }

    /** A string as its UTF-8 byte count then the bytes; null as count -1. */
    Payload putString(String s) {
        if (s == null) {
            return putInt(-1);
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        putInt(b.length);
        room(b.length);
        buf.put(b);
        return this;
    }

    Payload putInts(int[] v) {
        putInt(v.length);
        room(4 * v.length);
        buf.asIntBuffer().put(v);
        buf.position(buf.position() + 4 * v.length);
        return this;
    }

    /** fp32 values in native order (a step's logits), copied in bulk to the little-endian body. */
    Payload putFloats(MemorySegment v) {
        int n = Math.toIntExact(v.byteSize() / 4);
        putInt(n);
        room(4 * n);
        MemorySegment.copy(v, ValueLayout.JAVA_FLOAT, 0, MemorySegment.ofBuffer(buf), LE_FLOAT, 0, n);
        buf.position(buf.position() + 4 * n);
        return this;
    }

    /** The bytes written so far, ready to send. */
    ByteBuffer done() {
        return buf.duplicate().order(ByteOrder.LITTLE_ENDIAN).flip();
    }

    static String string(ByteBuffer b) {
        int n = b.getInt();
        if (n < 0) {
            return null;
        }
        byte[] bytes = new byte[n];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static boolean bool(ByteBuffer b) {
        return b.get() != 0;
    }

    static int[] ints(ByteBuffer b) {
        int[] v = new int[b.getInt()];
        b.asIntBuffer().get(v);
        b.position(b.position() + 4 * v.length);
        return v;
    }

    static float[] floats(ByteBuffer b) {
        float[] v = new float[b.getInt()];
        b.asFloatBuffer().get(v);
        b.position(b.position() + 4 * v.length);
        return v;
    }
}
