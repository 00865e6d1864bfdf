package io.strata.bench.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.SafetensorsWriter;
import io.strata.model.format.ActivationQuant;
import io.strata.model.weights.WeightMatrix;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of decoding one 4096-wide weight row (V4-Flash hidden size) from a memory-mapped checkpoint into a
 * float[] — the CPU backend's inner step — for each storage format, plus the FP8 activation simulation of one
 * 4096-wide token. Run: {@code java -jar benchmarks/target/benchmarks.jar WeightDecodeBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class WeightDecodeBenchmark {

    static final int ROWS = 512;
    static final int COLS = 4096;

    Path dir;
    Checkpoint checkpoint;
    WeightMatrix bf16;
    WeightMatrix fp8;
    WeightMatrix fp4;
    final float[] row = new float[COLS];
    final float[] activation = new float[COLS];
    final float[] scratch = new float[COLS];
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("decode-bench");
        SplittableRandom random = new SplittableRandom(1);
        byte[] bf16Bytes = new byte[ROWS * COLS * 2];
        byte[] fp8Bytes = new byte[ROWS * COLS];
        byte[] fp4Bytes = new byte[ROWS * COLS / 2];
        random.nextBytes(fp8Bytes);
        random.nextBytes(fp4Bytes);
        for (int i = 0; i < ROWS * COLS; i++) {
            short bits = io.strata.model.format.Bf16.fromFloat((float) random.nextGaussian());
            bf16Bytes[2 * i] = (byte) bits;
            bf16Bytes[2 * i + 1] = (byte) (bits >> 8);
        }
        byte[] fp8Scale = new byte[(ROWS / 128) * (COLS / 128)];
        byte[] fp4Scale = new byte[ROWS * COLS / 32];
        java.util.Arrays.fill(fp8Scale, (byte) 120);
        java.util.Arrays.fill(fp4Scale, (byte) 121);
        new SafetensorsWriter()
                .add("bf16.weight", DType.BF16, new int[] {ROWS, COLS}, bf16Bytes)
                .add("fp8.weight", DType.F8_E4M3, new int[] {ROWS, COLS}, fp8Bytes)
                .add("fp8.scale", DType.F8_E8M0, new int[] {ROWS / 128, COLS / 128}, fp8Scale)
                .add("fp4.weight", DType.I8, new int[] {ROWS, COLS / 2}, fp4Bytes)
                .add("fp4.scale", DType.F8_E8M0, new int[] {ROWS, COLS / 32}, fp4Scale)
                .write(dir.resolve(Checkpoint.SINGLE_FILE));
        checkpoint = Checkpoint.open(dir);
        bf16 = WeightMatrix.of(checkpoint.tensor("bf16.weight"), null);
        fp8 = WeightMatrix.of(checkpoint.tensor("fp8.weight"), checkpoint.tensor("fp8.scale"));
        fp4 = WeightMatrix.of(checkpoint.tensor("fp4.weight"), checkpoint.tensor("fp4.scale"));
        for (int i = 0; i < COLS; i++) {
            activation[i] = (float) random.nextGaussian();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        checkpoint.close();
        Files.deleteIfExists(dir.resolve(Checkpoint.SINGLE_FILE));
        Files.deleteIfExists(dir);
    }

    private int nextRow() {
        next = (next + 1) & (ROWS - 1);
        return next;
    }

    @Benchmark
    public float bf16Row() {
        bf16.readRow(nextRow(), row);
        return row[COLS - 1];
    }

    @Benchmark
    public float fp8Row() {
        fp8.readRow(nextRow(), row);
        return row[COLS - 1];
    }

    @Benchmark
    public float fp4Row() {
        fp4.readRow(nextRow(), row);
        return row[COLS - 1];
    }

    @Benchmark
    public float fp8ActivationSimulation() {
        System.arraycopy(activation, 0, scratch, 0, COLS);
        ActivationQuant.fp8RoundTrip(scratch, 0, COLS, ActivationQuant.GEMM_BLOCK);
        return scratch[COLS - 1];
    }
}
