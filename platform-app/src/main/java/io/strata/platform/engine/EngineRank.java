package io.strata.platform.engine;

import io.micrometer.core.instrument.Tags;

/**
 * Which attention data-parallel rank an engine loop serves: {@code index} of {@code count}. With one rank
 * (the default) nothing about the engine changes: its thread is {@code strata-engine} and its meters carry
 * no {@code rank} tag. With several, each rank's thread is {@code strata-engine-<index>} (its sampling helpers
 * {@code strata-sampler-<index>-<n>}) and its meters are tagged {@code rank=<index>}, so the ranks' gauges do
 * not collide and counters can be summed or split.
 */
public record EngineRank(int index, int count) {

    public static final EngineRank SINGLE = new EngineRank(0, 1);

    public EngineRank {
        if (count < 1 || index < 0 || index >= count) {
            throw new IllegalArgumentException("rank " + index + " of " + count);
        }
    }

    /** Whether the engine is one of several ranks. */
    public boolean dataParallel() {
        return count > 1;
    }

    String threadName() {
        return dataParallel() ? "strata-engine-" + index : "strata-engine";
    }

    /** Names the engine's sampling helpers: {@code strata-sampler-<n>}, or {@code strata-sampler-<index>-<n>}. */
    String samplerThreadPrefix() {
        return dataParallel() ? "strata-sampler-" + index + "-" : "strata-sampler-";
    }

    /** Extra meter tags: none for a single rank, {@code rank=<index>} otherwise. */
    public Tags meterTags() {
        return dataParallel() ? Tags.of("rank", Integer.toString(index)) : Tags.empty();
    }
}
