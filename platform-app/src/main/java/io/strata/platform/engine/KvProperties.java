package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How the engine sizes the KV cache ({@code strata.kv.*}).
 *
 * @param dtype          main+indexer pair such as {@code fp8+fp4} or {@code bf16} parsed by {@link io.strata.kv.KvPrecision#parse}; default FP8 main + FP4 indexer
 * @param memoryBytes    cap on KV bytes; 0 = what the backend offers after the weights
 * @param targetContext  context length at which the three pools should run out together (split rule)
 * @param prefixCaching  look prompts up in the prefix cache and publish computed blocks
 */
@ConfigurationProperties("strata.kv")
public record KvProperties(String dtype, Long memoryBytes, Long targetContext, Boolean prefixCaching) {
    public KvProperties {
        dtype = dtype == null || dtype.isBlank() ? "fp8+fp4" : dtype;
        memoryBytes = memoryBytes == null ? 0L : memoryBytes;
        targetContext = targetContext == null ? 8192L : targetContext;
        prefixCaching = prefixCaching == null || prefixCaching;
    }
}
