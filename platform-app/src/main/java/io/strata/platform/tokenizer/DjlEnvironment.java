package io.strata.platform.tokenizer;

import java.nio.file.Path;

/**
 * Puts DJL into offline, no-tracking mode before its first use.
 *
 * <p>DJL reads these switches from the environment first and from system properties second, and only
 * at the first call into it, so they must be set before any {@code HuggingFaceTokenizer} is created.
 * Without {@code OPT_OUT_TRACKING} DJL probes the EC2 metadata address; without offline mode it picks a
 * CUDA flavour of the native library on GPU hosts and tries to download it (toolchain.md §5).
 * Values already present in the environment or as system properties are left alone, so an operator can
 * still override them.
 */
public final class DjlEnvironment {

    static final String TRACKING = "OPT_OUT_TRACKING";
    static final String OFFLINE_PROPERTY = "ai.djl.offline";
    static final String OFFLINE_ENV = "DJL_OFFLINE";
    static final String CACHE_DIR = "DJL_CACHE_DIR";

    private DjlEnvironment() {
    }

    /**
     * @param cacheDir where DJL extracts its native library; {@code null} keeps DJL's default
     *                 ({@code DJL_CACHE_DIR} if set, else {@code ~/.djl.ai})
     */
    public static synchronized void prepare(Path cacheDir) {
        setIfAbsent(TRACKING, TRACKING, "true");
        setIfAbsent(OFFLINE_ENV, OFFLINE_PROPERTY, "true");
        if (cacheDir != null) {
            setIfAbsent(CACHE_DIR, CACHE_DIR, cacheDir.toAbsolutePath().toString());
        }
    }

    /** True when DJL will run offline and without tracking (whoever set the switches). */
    public static boolean isOfflineAndUntracked() {
        return "true".equalsIgnoreCase(read(TRACKING, TRACKING)) && "true".equalsIgnoreCase(read(OFFLINE_ENV, OFFLINE_PROPERTY));
    }

    private static void setIfAbsent(String envName, String propertyName, String value) {
        if (System.getenv(envName) == null && System.getProperty(propertyName) == null) {
            System.setProperty(propertyName, value);
        }
    }

    private static String read(String envName, String propertyName) {
        String env = System.getenv(envName);
        return env != null ? env : System.getProperty(propertyName);
    }
}
