package io.strata.model.checkpoint;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

import io.strata.model.format.Bf16;
import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;

/**
 * One tensor of a checkpoint: a typed, shaped view of memory-mapped bytes (little-endian, row-major).
 * Nothing is copied onto the heap until a read method is called; reads are bounds-checked by the segment, so
 * a bad index throws instead of touching foreign memory. The view stays valid until its checkpoint is closed.
 *
 * <p>Index arguments are flat element indices in the tensor's own dtype. For packed FP4 ({@link DType#I8}
 * experts) an element is a byte holding two values; {@link #readFp4(long, float[], int, int)} unpacks them.
 */
public final class Tensor {

    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final DType dtype;
    private final int[] shape;
    private final long elementCount;
    private final MemorySegment data;
    private final String file;

    /**
     * @param data exactly {@code product(shape) * dtype.byteSize()} bytes
     * @param file the file it came from, for messages
     */
    public Tensor(String name, DType dtype, int[] shape, MemorySegment data, String file) {
        this.name = name;
        this.dtype = dtype;
        this.shape = shape.clone();
        long count = 1;
        for (int d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in " + Arrays.toString(shape));
            }
            count = Math.multiplyExact(count, d);
        }
        this.elementCount = count;
        if (data.byteSize() != count * dtype.byteSize()) {
            throw new IllegalArgumentException("tensor " + name + ": " + data.byteSize() + " bytes for shape "
                    + Arrays.toString(shape) + " of " + dtype);
        }
        this.data = data;
        this.file = file;
    }

    public String name() {
        return name;
    }

    public DType dtype() {
        return dtype;
    }

    public int[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public int dim(int axis) {
        return shape[axis];
    }

    /** Last dimension (1 for a scalar). */
    public int cols() {
        return shape.length == 0 ? 1 : shape[shape.length - 1];
    }

    /** Product of all dimensions but the last (1 for a scalar or vector). */
    public long rows() {
        long rows = 1;
        for (int axis = 0; axis < shape.length - 1; axis++) {
            rows *= shape[axis];
        }
        return rows;
    }

    public long elementCount() {
        return elementCount;
    }

    public long byteSize() {
        return data.byteSize();
    }

    /** The mapped bytes themselves (read-only), for vectorised or native consumers. */
    public MemorySegment segment() {
        return data;
    }

    /** The safetensors file holding it. */
    public String file() {
        return file;
    }

    public boolean hasShape(int... expected) {
        return Arrays.equals(shape, expected);
    }

    // ---- single elements -------------------------------------------------------------------------------

    public float f32(long index) {
        return data.getAtIndex(FLOAT, index);
    }

    public float bf16(long index) {
        return Bf16.toFloat(data.getAtIndex(SHORT, index));
    }

    public float f16(long index) {
        return Float.float16ToFloat(data.getAtIndex(SHORT, index));
    }

    public float e4m3(long index) {
        return Fp8E4m3.decode(data.get(ValueLayout.JAVA_BYTE, index));
    }

    public float e8m0(long index) {
        return E8m0.decode(data.get(ValueLayout.JAVA_BYTE, index));
    }

    public byte int8(long index) {
        return data.get(ValueLayout.JAVA_BYTE, index);
    }

    public int i32(long index) {
        return data.getAtIndex(INT, index);
    }

    public long i64(long index) {
        return data.getAtIndex(LONG, index);
    }

    /** Any integer dtype widened to long (I8/U8/I32/I64). */
    public long integer(long index) {
        return switch (dtype) {
            case I8 -> data.get(ValueLayout.JAVA_BYTE, index);
            case U8 -> data.get(ValueLayout.JAVA_BYTE, index) & 0xFF;
            case I32 -> i32(index);
            case I64 -> i64(index);
            default -> throw new UnsupportedOperationException(name + " is " + dtype + ", not an integer tensor");
        };
    }

    /** Any dtype as float: floating types decoded, integers converted (FP8 without its block scale). */
    public float getFloat(long index) {
        return switch (dtype) {
            case F32 -> f32(index);
            case BF16 -> bf16(index);
            case F16 -> f16(index);
            case F8_E4M3 -> e4m3(index);
            case F8_E8M0 -> e8m0(index);
            case F64 -> (float) data.getAtIndex(DOUBLE, index);
            case I8, U8, I32, I64 -> (float) integer(index);
        };
    }

    // ---- bulk ----------------------------------------------------------------------------------------

    /** Decodes {@code count} elements starting at flat element {@code from} into {@code dst[dstOff..]}. */
    public void readFloats(long from, float[] dst, int dstOff, int count) {
        checkRange(from, count, elementCount);
        switch (dtype) {
            case F32 -> MemorySegment.copy(data, FLOAT, from * 4, dst, dstOff, count);
            case BF16 -> {
                // Two bf16 per 32-bit load: the low half is the even element (little-endian).
                long off = from * 2;
                int pairs = count >>> 1;
                for (int i = 0; i < pairs; i++) {
                    int two = data.get(INT, off + 4L * i);
                    dst[dstOff + 2 * i] = Float.intBitsToFloat(two << 16);
                    dst[dstOff + 2 * i + 1] = Float.intBitsToFloat(two & 0xFFFF0000);
                }
                if ((count & 1) != 0) {
                    dst[dstOff + count - 1] = Float.intBitsToFloat(data.get(SHORT, off + 2L * (count - 1)) << 16);
                }
            }
            case F16 -> {
                long off = from * 2;
                for (int i = 0; i < count; i++) {
                    dst[dstOff + i] = Float.float16ToFloat(data.get(SHORT, off + 2L * i));
                }
            }
            case F8_E4M3 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOff + i] = Fp8E4m3.decode(data.get(ValueLayout.JAVA_BYTE, from + i));
                }
            }
            case F8_E8M0 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOff + i] = E8m0.decode(data.get(ValueLayout.JAVA_BYTE, from + i));
                }
            }
            default -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOff + i] = getFloat(from + i);
                }
            }
        }
    }

    /** Decodes row {@code row} (the last dimension) into {@code dst[0..cols)}. */
    public void readRow(long row, float[] dst) {
        readFloats(row * cols(), dst, 0, cols());
    }

    /**
     * Unpacks packed FP4 e2m1 bytes (I8/U8): {@code byteCount} bytes from flat byte {@code fromByte} become
     * {@code 2*byteCount} unscaled values, low nibble first.
     */
    public void readFp4(long fromByte, float[] dst, int dstOff, int byteCount) {
        if (dtype != DType.I8 && dtype != DType.U8) {
            throw new UnsupportedOperationException(name + " is " + dtype + ", not packed FP4 (I8)");
        }
        checkRange(fromByte, byteCount, elementCount);
        for (int i = 0; i < byteCount; i++) {
            byte b = data.get(ValueLayout.JAVA_BYTE, fromByte + i);
            dst[dstOff + 2 * i] = Fp4E2m1.low(b);
            dst[dstOff + 2 * i + 1] = Fp4E2m1.high(b);
        }
    }

    public void readBytes(long fromByte, byte[] dst, int dstOff, int count) {
        checkRange(fromByte, count, data.byteSize());
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, fromByte, dst, dstOff, count);
    }

    /** The whole tensor decoded to floats on the heap; for small tensors (norms, biases, tests). */
    public float[] toFloatArray() {
        float[] out = new float[heapLength()];
        readFloats(0, out, 0, out.length);
        return out;
    }

    public long[] toLongArray() {
        long[] out = new long[heapLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = integer(i);
        }
        return out;
    }

    public int[] toIntArray() {
        int[] out = new int[heapLength()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.toIntExact(integer(i));
        }
        return out;
    }

    /** Rows {@code [fromRow, toRow)} along the first axis, as a view (no copy). */
    public Tensor sliceRows(int fromRow, int toRow) {
        if (shape.length == 0 || fromRow < 0 || toRow > shape[0] || fromRow > toRow) {
            throw new IndexOutOfBoundsException("rows [" + fromRow + ", " + toRow + ") of " + this);
        }
        long rowBytes = shape[0] == 0 ? 0 : data.byteSize() / shape[0];
        int[] s = shape.clone();
        s[0] = toRow - fromRow;
        return new Tensor(name, dtype, s, data.asSlice(fromRow * rowBytes, (toRow - fromRow) * rowBytes), file);
    }

    private int heapLength() {
        if (elementCount > Integer.MAX_VALUE - 8) {
            throw new UnsupportedOperationException(name + " has " + elementCount + " elements, too many for one array");
        }
        return (int) elementCount;
    }

    private void checkRange(long from, int count, long limit) {
        if (from < 0 || count < 0 || from + count > limit) {
            throw new IndexOutOfBoundsException("elements [" + from + ", " + (from + count) + ") outside " + this);
        }
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape) + " (" + file + ")";
    }
}
