package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Attention data-parallel serving ({@code strata.engine.*}).
 *
 * @param dataParallelSize engine ranks in this process, each with its own executor from the chosen backend,
 *                         its own KV manager and pools (the KV budget divided by the ranks) and its own
 *                         engine loop, behind one engine facade that routes requests ({@link RankRouter});
 *                         1 (the default) serves with one engine exactly as before
 */
@ConfigurationProperties("strata.engine")
public record DataParallelProperties(Integer dataParallelSize) {

    public static final DataParallelProperties SINGLE = new DataParallelProperties(1);

    public DataParallelProperties {
        dataParallelSize = dataParallelSize == null ? 1 : dataParallelSize;
        if (dataParallelSize < 1) {
            throw new IllegalArgumentException("strata.engine.data-parallel-size must be >= 1, got " + dataParallelSize);
        }
    }
}
