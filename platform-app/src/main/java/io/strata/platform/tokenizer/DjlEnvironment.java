package io.strata.platform.tokenizer;

import java.nio.file.Path;
import java.util.Properties;
import java.util.function.UnaryOperator;

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
    public static void prepare(Path cacheDir) {
        synchronized (System.class) {
            prepare(cacheDir, System::getenv, System.getProperties());
        }
    }

    static void prepare(Path cacheDir, UnaryOperator<String> env, Properties properties) {
        setIfAbsent(env, properties, TRACKING, TRACKING, "true");
        setIfAbsent(env, properties, OFFLINE_ENV, OFFLINE_PROPERTY, "true");
        if (cacheDir != null) {
            setIfAbsent(env, properties, CACHE_DIR, CACHE_DIR, cacheDir.toAbsolutePath().toString());
        }
    }

    /** True when DJL will run offline and without tracking (whoever set the switches). */
    public static boolean isOfflineAndUntracked() {
        return isOfflineAndUntracked(System::getenv, System.getProperties());
    }

    static boolean isOfflineAndUntracked(UnaryOperator<String> env, Properties properties) {
        return "true".equalsIgnoreCase(read(env, properties, TRACKING, TRACKING))
                && "true".equalsIgnoreCase(read(env, properties, OFFLINE_ENV, OFFLINE_PROPERTY));
    }

    private static void setIfAbsent(UnaryOperator<String> env, Properties properties, String envName, String propertyName, String value) {
        if (env.apply(envName) == null && properties.getProperty(propertyName) == null) {
            properties.setProperty(propertyName, value);
        }
    }

    private static String read(UnaryOperator<String> env, Properties properties, String envName, String propertyName) {
        String fromEnv = env.apply(envName);
        return fromEnv != null ? fromEnv : properties.getProperty(propertyName);
    }
}
