package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How an engine samples the rows of a step ({@code strata.engine.*}).
 *
 * @param samplingThreads threads that sample a step's rows, the engine thread included, when the step has at
 *                        least {@link io.strata.platform.engine.sampling.BatchSampler#MIN_PARALLEL_ROWS} of them;
 *                        1 samples them one after the other on the engine thread. Each data-parallel rank has
 *                        its own. Default: half the available processors, at most 8, at least 1
 */
@ConfigurationProperties("strata.engine")
public record SamplingProperties(Integer samplingThreads) {

    public SamplingProperties {
        samplingThreads = samplingThreads == null ? defaultThreads() : samplingThreads;
        if (samplingThreads < 1) {
            throw new IllegalArgumentException("strata.engine.sampling-threads must be >= 1, got " + samplingThreads);
        }
    }

    /** The defaults ({@code sampling-threads} from this host's processors). */
    public static SamplingProperties defaults() {
        return new SamplingProperties(null);
    }

    /**
     * Half the processors: the other half stays with the HTTP threads, detokenising and a host backend's own
     * threads; past 8 a step's rows are too few for more threads to pay for their hand-off.
     */
    private static int defaultThreads() {
        return Math.max(1, Math.min(Runtime.getRuntime().availableProcessors() / 2, 8));
    }
}
