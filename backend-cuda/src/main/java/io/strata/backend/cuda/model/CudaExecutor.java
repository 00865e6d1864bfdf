package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaException;
import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.NativeLibrary;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.MainKvDtype;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;

/**
 * A model on one GPU: weights uploaded once in their checkpoint formats, the KV pools in device memory,
 * and each step's rows run through {@link DeviceModel} on its {@link StepStreams} (the main stream, and
 * with {@code strata.cuda.streams=2} a side stream for the indexer and the C128A compressor). Decode steps
 * replay CUDA graphs captured once the pools exist ({@code strata.cuda.cuda-graphs}, see
 * {@link DecodeGraphs}); prefill and other shapes run eagerly. The KV offer is
 * {@code strata.cuda.memory-fraction} of the device memory left free after the weights and a step's
 * activations at the engine's largest batch.
 */
public final class CudaExecutor implements ModelExecutor {
    /** Default share of free device memory (after weights and activations) the KV pools may take. */
    public static final double DEFAULT_MEMORY_FRACTION = 0.9;
    private static final long GIB = 1L << 30;
    private static final int DEVICE = 0;
    private static final int DEFAULT_GRAPH_CONTEXT = 32768;
    private static final int DEFAULT_CAPTURE_BUDGET_MS = 60_000;
    // the 105 shapes of an 8-layer V4-Flash slice took 0.67 GiB; a 43-layer model about five times that
    private static final int DEFAULT_CAPTURE_MEMORY_MB = 8192;

    private final ModelConfig config;
    private final String device;
    private final WeightStore weights;
    private final DeviceModel model;
    private final Workspace workspace = new Workspace();
    private final PlanStaging planHost = new PlanStaging();
    private final HostStaging logitHost = new HostStaging();
    private final HostStaging tokenHost = new HostStaging();
    private final BackendCapabilities caps;
    private StepStreams streams;
    private GraphSettings graphSettings;
    private DeviceKvCache kv;
    private DecodeGraphs graphs;
    private HostTimes lastHostTimes = new HostTimes(0, 0, 0, 0);

    /**
     * Where the host's time in the last step went: the plan (of which {@code buildNanos} building its arrays, the rest
     * its copy and the RoPE gathers), issuing the kernels (or the graph) and the copies, and waiting for the device.
     * For the benchmark's breakdown; read on the thread that executes.
     */
    record HostTimes(long planNanos, long buildNanos, long issueNanos, long waitNanos) {
    }

    /** What {@code strata.cuda.*} asks of decode graphs: none when {@code enabled} is false. */
    record GraphSettings(boolean enabled, int maxBatch, int maxContext, CaptureBudget budget) {
        static GraphSettings of(LoadOptions o, int maxBatchRequests) {
            int cap = Math.min(DeviceModel.headRows(), maxBatchRequests);
            return new GraphSettings(o.flag("cuda-graphs", true), o.integer("graph-max-batch", cap, 1, cap),
                o.integer("graph-max-context", DEFAULT_GRAPH_CONTEXT, 256, 1 << 20),
                new CaptureBudget(o.integer("graph-capture-budget-ms", DEFAULT_CAPTURE_BUDGET_MS, 0, Integer.MAX_VALUE),
                    (long) o.integer("graph-capture-memory-mb", DEFAULT_CAPTURE_MEMORY_MB, 0, 1 << 20) << 20));
        }
    }

    private CudaExecutor(ModelConfig config, String device, WeightStore weights, DeviceModel model,
                         BackendCapabilities caps, StepStreams streams, GraphSettings graphSettings) {
        this.config = config;
        this.device = device;
        this.weights = weights;
        this.model = model;
        this.caps = caps;
        this.streams = streams;
        this.graphSettings = graphSettings;
    }

    /**
     * Uploads the model to the device.
     *
     * @throws IllegalStateException when the device has too little free memory (the message says how much was
     *                               needed, how much was free, and what to change)
     */
    public static CudaExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options, int maxBatchTokens,
                                    int maxBatchRequests) {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_cuda_set_device(DEVICE), "cudaSetDevice");
        double fraction = options.fraction("memory-fraction", DEFAULT_MEMORY_FRACTION);
        int streamCount = options.integer("streams", 2, 1, 2);
        GraphSettings graphSettings = GraphSettings.of(options, maxBatchRequests);
        String device = "cuda:" + DEVICE + " " + CudaRuntime.devices().get(DEVICE).name();
        long weightBytes = checkpoint.tensors().values().stream()
            .filter(t -> !t.name().startsWith("mtp.")).mapToLong(Tensor::byteSize).sum();
        long context = Math.min(config.maxPositionEmbeddings(), 1L << 20);
        long[] mem = memInfo();
        WeightStore store = new WeightStore();
        DeviceModel model;
        try {
            model = new DeviceModel(config, checkpoint, store);
        } catch (CudaException e) {
            store.close();
            throw new IllegalStateException("model " + options.modelId() + " does not fit on " + device + ": its weights"
                + " need " + gib(weightBytes) + " and " + gib(mem[0]) + " were free (" + e.getMessage() + "); free the GPU,"
                + " serve a smaller model, or choose another backend with strata.backend", e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        long activations = model.activationBytes(maxBatchTokens, (int) (model.window() + Math.max(
            config.indexer().topk(), context / 128))) + (long) maxBatchTokens * (context / 4) * 2;
        long free = memInfo()[0];
        if (free < activations) {
            long resident = store.bytes();
            store.close();
            throw new IllegalStateException("model " + options.modelId() + " does not fit on " + device + ": weights "
                + gib(resident) + " are resident, a step of strata.engine.max-num-batched-tokens=" + maxBatchTokens
                + " needs " + gib(activations) + " of activations, but only " + gib(free) + " are free; lower"
                + " strata.engine.max-num-batched-tokens or strata.model.max-model-len, or free the GPU");
        }
        long kvOffer = (long) ((free - activations) * fraction);
        BackendCapabilities caps = new BackendCapabilities(kvOffer, EnumSet.of(MainKvDtype.FP8),
            EnumSet.of(IndexerKvDtype.FP4), graphSettings.enabled(), maxBatchTokens, maxBatchRequests);
        return new CudaExecutor(config, device, store, model, caps, StepStreams.create(streamCount), graphSettings);
    }

    /** {free, total} device bytes now. */
    static long[] memInfo() {
        long[] free = new long[1];
        long[] total = new long[1];
        CudaRuntime.check(CudaNative.strata_cuda_mem_info(free, total), "cudaMemGetInfo");
        return new long[] {free[0], total[0]};
    }

    private static String gib(long bytes) {
        return bytes >= GIB ? String.format(java.util.Locale.ROOT, "%.2f GiB", bytes / (double) GIB)
            : String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public synchronized BackendCapabilities capabilities() {
        long used = kv == null ? 0 : kv.totalBytes();
        return new BackendCapabilities(Math.max(0, caps.kvMemoryBytes() - used), caps.mainKvDtypes(),
            caps.indexerKvDtypes(), graphs != null, caps.maxBatchTokens(), caps.maxBatchRequests());
    }

    @Override
    public long weightBytes() {
        return weights.bytes();
    }

    @Override
    public synchronized KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages) {
        caps.requireLayout(layout, config, "CUDA");
        closeKv();
        kv = new DeviceKvCache(layout, pages);
        if (graphSettings.enabled()) {
            captureGraphs();
        }
        return new KvPools(layout, kv.pages(), kv.bytes());
    }

    @Override
    public synchronized StepResult execute(StepBatch batch) {
        if (kv == null) {
            throw new IllegalStateException("allocateKv must be called before execute");
        }
        if (batch.totalTokens() > caps.maxBatchTokens()) {
            throw new IllegalArgumentException("step of " + batch.totalTokens() + " tokens exceeds the loaded limit of "
                + caps.maxBatchTokens());
        }
        long t0 = System.nanoTime();
        boolean[] argmaxRows = batch.argmaxRows();
        LogitReturn ret = new LogitReturn(argmaxRows, config.vocabSize(), logitHost, tokenHost,
            workspace.get("argmaxTokens", 4L * argmaxRows.length));
        long planNanos;
        long buildNanos;
        if (graphs != null && graphs.replay(batch, ret)) {
            planNanos = graphs.lastPlanNanos();
            buildNanos = graphs.lastBuildNanos();
        } else {
            StepPlan plan = StepPlan.build(batch, kv.layout(), model.ropes(), config.vocabSize(), model.window(),
                planHost, workspace, streams.main());
            planNanos = System.nanoTime() - t0;
            buildNanos = plan.buildNanos;
            model.forward(plan, kv, workspace, ret, streams);
        }
        ret.queueTokens(streams.main());
        long t1 = System.nanoTime();
        streams.synchronize();
        lastHostTimes = new HostTimes(planNanos, buildNanos, t1 - t0 - planNanos, System.nanoTime() - t1);
        return ret.result(batch.rowStarts(), System.nanoTime() - t0);
    }

    HostTimes lastHostTimes() {
        return lastHostTimes;
    }

    /**
     * Layer {@code layer}'s attention sub-layer alone over the rows of {@code batch}, with its input given
     * (bf16 bits, rows × hidden): the module-level view the fixtures record. Caches are read and written as
     * in a step.
     */
    synchronized short[] attentionOnly(int layer, StepBatch batch, short[] x) {
        if (kv == null) {
            throw new IllegalStateException("allocateKv must be called before attentionOnly");
        }
        StepPlan plan = StepPlan.build(batch, kv.layout(), model.ropes(), config.vocabSize(), model.window(), planHost,
            workspace, streams.main());
        int dim = config.hiddenSize();
        try (var in = io.strata.backend.cuda.DeviceBuffer.of(x);
             var out = io.strata.backend.cuda.DeviceBuffer.allocate(2L * x.length)) {
            model.attention(layer, plan, kv, workspace, in.address(), out.address(), streams);
            streams.synchronize();
            return out.downloadShorts(batch.totalTokens() * dim);
        }
    }

    /**
     * One eager step with a timed event at every component boundary (for the benchmark's profile): the device
     * milliseconds of each component, in the order of {@link StepProfile.Component}.
     */
    synchronized java.util.Map<StepProfile.Component, Double> profile(StepBatch batch) {
        if (kv == null) {
            throw new IllegalStateException("allocateKv must be called before profile");
        }
        try (StepProfile p = new StepProfile()) {
            streams.profile(p);
            try {
                StepPlan plan = StepPlan.build(batch, kv.layout(), model.ropes(), config.vocabSize(), model.window(),
                    planHost, workspace, streams.main());
                model.forward(plan, kv, workspace, new LogitReturn(new boolean[plan.logitRows.length],
                    config.vocabSize(), logitHost, tokenHost, 0), streams);
                streams.synchronize();
                return p.millis();
            } finally {
                streams.profile(null);
            }
        }
    }

    /**
     * Benchmarks and tests: runs the following steps on {@code streamCount} streams, with decode graphs
     * recaptured ({@code graphsOn}) or none, as if loaded with those settings.
     */
    synchronized void reconfigure(int streamCount, boolean graphsOn) {
        if (graphs != null) {
            graphs.close();
            graphs = null;
        }
        streams.close();
        streams = StepStreams.create(streamCount);
        graphSettings = new GraphSettings(graphsOn, graphSettings.maxBatch(), graphSettings.maxContext(),
            graphSettings.budget());
        if (graphsOn && kv != null) {
            captureGraphs();
        }
    }

    /** Decode graphs over the current pools and streams, as {@link #graphSettings} asks. */
    private void captureGraphs() {
        graphs = new DecodeGraphs(model, kv, streams);
        graphs.capture(graphSettings.maxBatch(), graphSettings.maxContext(), graphSettings.budget());
    }

    /** Benchmarks: every KV page holds small random entries, as if a long context had been prefilled. */
    synchronized void fillKvRandom(long seed) {
        kv.fillRandom(seed);
    }

    /**
     * Benchmarks: the FP4 indexer keys in the page rows {@code rows} of the indexer's kind groups get block scales
     * as real rows have them (see {@link DeviceKvCache#fillScales}).
     */
    synchronized void fillIndexerKeyScales(KindGroup group, int[] rows, long seed) {
        kv.fillScales(group, rows, seed);
    }

    /** Decode steps served by graph replay so far. */
    synchronized long graphReplays() {
        return graphs == null ? 0 : graphs.replays();
    }

    synchronized io.strata.spi.exec.GraphCapture graphCapture() {
        return graphs == null ? io.strata.spi.exec.GraphCapture.NONE : graphs.summary();
    }

    @Override
    public Optional<DeviceMemory> deviceMemory() {
        long[] mem = memInfo();
        long kvBytes;
        long ws;
        io.strata.spi.exec.GraphCapture captured;
        synchronized (this) {
            kvBytes = kv == null ? 0 : kv.totalBytes();
            ws = workspace.bytes() + (graphs == null ? 0 : graphs.workspaceBytes());
            captured = graphs == null ? io.strata.spi.exec.GraphCapture.NONE : graphs.summary();
        }
        return Optional.of(new DeviceMemory(device, mem[1], mem[0], weights.bytes(), kvBytes, ws, captured));
    }

    private void closeKv() {
        if (graphs != null) {
            graphs.close();
            graphs = null;
        }
        if (kv != null) {
            kv.close();
            kv = null;
        }
    }

    @Override
    public synchronized void close() {
        closeKv();
        workspace.close();
        planHost.close();
        logitHost.close();
        tokenHost.close();
        streams.close();
        model.close();
        weights.close();
    }
}
