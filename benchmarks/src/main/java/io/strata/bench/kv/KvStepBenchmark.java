package io.strata.bench.kv;

import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ReferenceModel;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvCapacity;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PrefixMatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Host-side KV bookkeeping per engine step for DeepSeek-V4-Flash (FP8 + FP4 layout):
 * <ul>
 *   <li>{@link #decodeStep}: 256 running requests at a long context each decode one token, as the scheduler
 *       runs it: {@code allocate} (which checks the step's pages fit), then after the (absent) forward pass
 *       {@code appendToken} and {@code commit}, which releases window pages and publishes full blocks.</li>
 *   <li>{@link #decodeStepAndTables}: the same step, then every running request's block tables handed over as
 *       the engine hands them to the backend ({@code BackendStepRunner.blockTables}): {@code snapshot}, each
 *       table's array as the engine takes it (an unchanged table's array again), or {@code copy}, every table
 *       copied each step (what the engine did before).</li>
 *   <li>{@link #prefillChunk}: one 8,192-token prefill chunk as the engine runs it ({@code allocate}, the
 *       best-effort {@code cacheBoundaryWindows} for its 31 inner boundaries, {@code commit}: hashing and
 *       publishing its 32 blocks, caching the boundary windows); every 32nd chunk also frees the request and
 *       admits a fresh one.</li>
 * </ul>
 * Run: {@code java -jar benchmarks/target/benchmarks.jar KvStepBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class KvStepBenchmark {

    static final KvLayout FLASH = KvLayout.of(KvModelShape.of("deepseek-v4-flash", ReferenceModel.V4_FLASH.config()),
            KvPrecision.DEFAULT);

    /** Decode: 256 requests around {@code context} positions. */
    @State(Scope.Thread)
    public static class Decode {
        @Param({"32768", "131072"})
        public int context;

        @Param({"256"})
        public int requests;

        /** With caching on, released window pages near block boundaries are published (hash-map work). */
        @Param({"true", "false"})
        public boolean prefixCaching = true;

        KvCacheManager manager;
        KvRequest[] running;

        @Setup(Level.Iteration)
        public void setUp() {
            // room for the prompts plus ~100k decode steps per request
            long[] d = KvPoolSizes.demand(FLASH, context + 100_000L);
            manager = new KvCacheManager(FLASH, new KvPoolSizes(Math.toIntExact(requests * d[0]),
                    Math.toIntExact(requests * d[1]), Math.toIntExact(requests * d[2])), prefixCaching);
            SplittableRandom rnd = new SplittableRandom(42);
            running = new KvRequest[requests];
            for (int i = 0; i < requests; i++) {
                // spread lengths so window and block boundaries fall on different steps
                int len = context - rnd.nextInt(256);
                int[] prompt = rnd.ints(len, 0, 129_280).toArray();
                KvRequest r = manager.newRequest("r" + i, prompt, null);
                PrefixMatch m = manager.match(r);
                manager.admit(r, m);
                for (long done = r.computed(); done < len; ) {
                    int chunk = (int) Math.min(8192, len - done);
                    if (!manager.allocate(r, chunk)) {
                        throw new IllegalStateException("pools too small for the benchmark prompts");
                    }
                    manager.commit(r, chunk);
                    done += chunk;
                }
                running[i] = r;
            }
        }
    }

    @Benchmark
    public long decodeStep(Decode s) {
        KvCacheManager m = s.manager;
        KvRequest[] rs = s.running;
        for (KvRequest r : rs) {
            if (!m.allocate(r, 1)) {
                throw new IllegalStateException("pool exhausted");
            }
        }
        long sum = 0;
        for (KvRequest r : rs) {
            r.appendToken((int) (r.computed() & 0xffff));
            m.commit(r, 1);
            sum += r.computed();
        }
        return sum;
    }

    /** How the step's block tables reach the backend. */
    @State(Scope.Thread)
    public static class Tables {
        @Param({"snapshot", "copy"})
        public String handOver;
    }

    @Benchmark
    public long decodeStepAndTables(Decode s, Tables t) {
        long sum = decodeStep(s);
        boolean copy = t.handOver.equals("copy");
        for (KvRequest r : s.running) {
            for (int g = 0; g < r.groups(); g++) {
                int[] pages = r.table(g).snapshot();
                if (copy) {
                    pages = Arrays.copyOf(pages, pages.length);
                }
                sum += pages.length == 0 ? 0 : pages.length + pages[pages.length - 1];
            }
        }
        return sum;
    }

    /** Prefill: one request consuming a long prompt 8,192 positions per step. */
    @State(Scope.Thread)
    public static class Prefill {
        @Param({"8192"})
        public int chunk;

        static final int CHUNKS = 32;

        KvCacheManager manager;
        KvRequest request;
        int[] prompt;
        int next;
        int serial;

        @Setup(Level.Iteration)
        public void setUp() {
            // twice the exact peak of one request prefilled in chunks of this size, plus room for the boundary
            // windows of a chunk (41 pages each, best effort: they must all fit for the benchmark to measure them)
            long[] d = new KvCapacity(FLASH, new KvPoolSizes(0, 0, 0)).peakDemand((long) chunk * CHUNKS, chunk);
            int boundaryRoom = 64 * (chunk / 256);
            manager = new KvCacheManager(FLASH, new KvPoolSizes(Math.toIntExact(2 * d[0] + boundaryRoom),
                    Math.toIntExact(2 * d[1] + boundaryRoom), Math.toIntExact(2 * d[2])), true);
            prompt = new SplittableRandom(7).ints(chunk * CHUNKS, 0, 129_280).toArray();
            request = null; // the previous iteration's request belongs to the previous manager
            fresh();
        }

        void fresh() {
            if (request != null) {
                manager.free(request);
            }
            // a new salt per request: no prefix hits, every block is hashed and published
            request = manager.newRequest("p" + serial, prompt, "salt-" + serial++);
            manager.admit(request, manager.match(request));
            next = 0;
        }
    }

    @Benchmark
    public long prefillChunk(Prefill s) {
        if (s.next == Prefill.CHUNKS) {
            s.fresh();
        }
        KvCacheManager m = s.manager;
        if (!m.allocate(s.request, s.chunk)) {
            throw new IllegalStateException("pool exhausted");
        }
        if (m.cacheBoundaryWindows(s.request, s.chunk) != s.chunk / 256 - 1) {
            throw new IllegalStateException("pools too small for the chunk's boundary windows");
        }
        m.commit(s.request, s.chunk);
        s.next++;
        return s.request.computed();
    }
}
