package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Device time of one eager step split by model component: timed events recorded on the main stream at
 * every component boundary, each interval charged to the component that began it. Meant for one stream
 * (with two, side work overlaps and is charged to whatever the main stream was doing).
 */
final class StepProfile implements AutoCloseable {
    /** What a stretch of the step computes. */
    enum Component {
        EMBEDDING("embedding"),
        HYPER_CONNECTIONS("hyper-connections + norms"),
        ATTENTION_GEMMS("attention projections (q, kv, wo_a, wo_b)"),
        KV_INSERT("q/kv RoPE + FP8 insert (F3, window copy)"),
        COMPRESSORS("compressors (projections + F1)"),
        INDEXER("indexer (compressor, queries, scores, top-k)"),
        ATTENTION("attention lists + sparse attention + inverse RoPE"),
        MOE("MoE (router, experts, shared expert)"),
        HEAD("HC head + LM head");

        private final String label;

        Component(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    private final List<Long> events = new ArrayList<>();
    private final List<Component> charged = new ArrayList<>();
    private int used;

    void mark(Component next, long stream) {
        if (used == events.size()) {
            long[] e = new long[1];
            CudaRuntime.check(CudaNative.strata_event_create(1, e), "cudaEventCreate (profile)");
            events.add(e[0]);
        }
        CudaRuntime.check(CudaNative.strata_event_record(events.get(used), stream), "cudaEventRecord (profile)");
        if (charged.size() > used) {
            charged.set(used, next);
        } else {
            charged.add(next);
        }
        used++;
    }

    /** Milliseconds per component of the marks since the last {@link #reset}; the final mark closes the last stretch. */
    Map<Component, Double> millis() {
        Map<Component, Double> out = new EnumMap<>(Component.class);
        float[] ms = new float[1];
        for (int i = 0; i + 1 < used; i++) {
            CudaRuntime.check(CudaNative.strata_event_elapsed_ms(events.get(i), events.get(i + 1), ms), "profile");
            out.merge(charged.get(i), (double) ms[0], Double::sum);
        }
        return out;
    }

    void reset() {
        used = 0;
    }

    @Override
    public void close() {
        events.forEach(CudaNative::strata_event_destroy);
        events.clear();
    }
}
