package io.strata.spi.exec;

import java.util.Map;

/**
 * How the engine wants a model loaded.
 *
 * @param modelId          the served model's id (logging, metrics)
 * @param maxBatchTokens   most tokens the engine will put in one step (sizes scratch buffers)
 * @param maxBatchRequests most requests per step
 * @param threads          worker threads for CPU-side work; 0 = the backend's default
 * @param settings         the backend's own settings: every platform property {@code strata.<plugin id>.<key>},
 *                         keyed by {@code <key>} (e.g. {@code memory-fraction} for {@code strata.cuda.memory-fraction})
 */
public record LoadOptions(String modelId, int maxBatchTokens, int maxBatchRequests, int threads,
                          Map<String, String> settings) {
    public LoadOptions {
        if (maxBatchTokens <= 0 || maxBatchRequests <= 0 || threads < 0) {
            throw new IllegalArgumentException("maxBatchTokens and maxBatchRequests must be positive, threads >= 0");
        }
        settings = Map.copyOf(settings);
    }

    /** Options without backend settings (tests, benchmarks, the CPU backend's defaults). */
    public LoadOptions(String modelId, int maxBatchTokens, int maxBatchRequests, int threads) {
        this(modelId, maxBatchTokens, maxBatchRequests, threads, Map.of());
    }

    /** A backend setting as a number in {@code (0, 1]}, or {@code fallback} when unset. */
    public double fraction(String key, double fallback) {
        String v = settings.get(key);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        double d;
        try {
            d = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("setting " + key + "=" + v + " is not a number");
        }
        if (!(d > 0 && d <= 1)) {
            throw new IllegalArgumentException("setting " + key + "=" + v + " must be in (0, 1]");
        }
        return d;
    }

    /** A backend setting as a whole number in {@code [min, max]}, or {@code fallback} when unset. */
    public int integer(String key, int fallback, int min, int max) {
        String v = settings.get(key);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("setting " + key + "=" + v + " is not a whole number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("setting " + key + "=" + v + " must be in [" + min + ", " + max + "]");
        }
        return n;
    }

    /** A backend setting as {@code true}/{@code false}, or {@code fallback} when unset. */
    public boolean flag(String key, boolean fallback) {
        String v = settings.get(key);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("setting " + key + "=" + v + " must be true or false");
        };
    }
}
