package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cuda.CudaBackendProvider;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Decode throughput of the CUDA executor on a V4-Flash-shaped slice: the real V4-Flash dimensions (hidden
 * 4096, 64 heads × 512, q_lora 1024, 8 × 1024 output groups, 256 experts top-6 with FP4 weights, FP8 linears,
 * indexer 64 heads top-512) and three layers (window, C4A, C128A), seeded random weights written on the GPU
 * host. For each batch size: prefill every request to {@code context} tokens, then time decode steps.
 *
 * <p>usage: {@code ModelDecodeBench <work dir> [context] [steps] [batch ...]}
 */
public final class ModelDecodeBench {
    static final SyntheticCheckpoint.Shape FLASH_SLICE = new SyntheticCheckpoint.Shape(4096, 3, 64, 1024, 8, 1024,
        256, 6, 2048, 64, 512, 129280, 1);

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int context = args.length > 1 ? Integer.parseInt(args[1]) : 2048;
        int steps = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        int[] batches = args.length > 3 ? Arrays.stream(args, 3, args.length).mapToInt(Integer::parseInt).toArray()
            : new int[] {1, 8, 64};
        if (!Files.exists(dir.resolve("config.json"))) {
            long t0 = System.nanoTime();
            SyntheticCheckpoint.write(FLASH_SLICE, dir);
            System.out.printf("wrote the V4-Flash-shaped slice in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
        ModelConfig config = ModelConfig.parse(dir.resolve("config.json"));
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        try (Checkpoint ckpt = Checkpoint.open(dir);
             ModelExecutor gpu = new CudaBackendProvider().load(config, ckpt, new LoadOptions("flash-slice", 2048,
                 Math.max(maxBatch, 8), 0))) {
            KvLayout layout = KvLayout.of(KvModelShape.of("flash-slice", config), KvPrecision.DEFAULT);
            Map<PageBucket, Integer> pages = PageAllocator.pagesNeeded(layout, context + steps + 1, maxBatch);
            gpu.allocateKv(layout, pages);
            System.out.printf("weights %.2f GiB on the device; KV pools %s%n", gpu.weightBytes() / (double) (1L << 30),
                pages);
            SplittableRandom rnd = new SplittableRandom(1);
            for (int batch : batches) {
                run(gpu, new PageAllocator(layout, pages), config, batch, context, steps, rnd);
            }
        }
    }

    private static void run(ModelExecutor gpu, PageAllocator pages, ModelConfig config, int batch, int context,
                            int steps, SplittableRandom rnd) {
        List<BlockTable[]> tables = new ArrayList<>();
        for (int r = 0; r < batch; r++) {
            tables.add(BlockTable.fromZero(pages.tables(context + steps + 1)));
        }
        int vocab = config.vocabSize();
        // prefill: chunks of up to 2048 tokens over all requests
        long tp = System.nanoTime();
        for (int r = 0; r < batch; r++) {
            for (int p = 0; p < context; p += 2048) {
                int len = Math.min(2048, context - p);
                int[] tok = rnd.ints(len, 2, vocab).toArray();
                gpu.execute(new StepBatch(List.of(new SequenceChunk(r, tok, p, tables.get(r), 0, 0,
                    new int[] {len - 1}))));
            }
        }
        double prefill = (System.nanoTime() - tp) / 1e9;
        double[] ms = new double[steps];
        for (int s = 0; s < steps; s++) {
            List<SequenceChunk> chunks = new ArrayList<>();
            for (int r = 0; r < batch; r++) {
                chunks.add(new SequenceChunk(r, new int[] {rnd.nextInt(2, vocab)}, context + s, tables.get(r), 0, 0,
                    new int[] {0}));
            }
            long t0 = System.nanoTime();
            gpu.execute(new StepBatch(chunks));
            ms[s] = (System.nanoTime() - t0) / 1e6;
        }
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        double median = sorted[steps / 2];
        System.out.printf("batch %3d context %5d: prefill %.2f s (%.0f tok/s); decode step median %.2f ms (min %.2f, max"
                + " %.2f) = %.0f tokens/s for this 3-layer slice%n", batch, context, prefill, batch * (double) context
                / prefill, median, sorted[0], sorted[steps - 1], batch * 1000 / median);
    }

    private ModelDecodeBench() {
    }
}
