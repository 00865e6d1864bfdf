package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import org.bytedeco.javacpp.Loader;

/**
 * Loads the JNI library at most once for this plugin's class loader and remembers why it failed.
 *
 * <p>The JVM lets one native library belong to one class loader only (anchors.md D2). A second
 * copy of this plugin in the same JVM (a reload, or a second plugin manager in tests) therefore
 * cannot bind it; that is reported as a reason, never thrown, and the remedy is a restart.
 */
public final class NativeLibrary {
    private static final Object LOCK = new Object();
    private static volatile Outcome outcome;

    /** Either loaded, or the reason why not. */
    public record Outcome(boolean loaded, String reason) {
    }

    private NativeLibrary() {
    }

    public static Outcome load() {
        Outcome o = outcome;
        if (o != null) {
            return o;
        }
        synchronized (LOCK) {
            if (outcome == null) {
                outcome = tryLoad();
            }
            return outcome;
        }
    }

    /** Loads or throws {@link CudaException} with the reason; for code paths that need the device. */
    public static void require() {
        Outcome o = load();
        if (!o.loaded()) {
            throw new CudaException(-1, o.reason());
        }
    }

    private static Outcome tryLoad() {
        try {
            Loader.load(CudaNative.class);
            return new Outcome(true, "");
        } catch (UnsatisfiedLinkError e) {
            return new Outcome(false, explain(e));
        } catch (Throwable e) { // a broken jar must not take the platform down
            return new Outcome(false, "native library failed to load: " + e);
        }
    }

    private static String explain(UnsatisfiedLinkError e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("another classloader") || m.contains("already loaded")) {
            return "the native library is already bound to another copy of this plugin in this JVM "
                    + "(JNI allows one class loader per library); restart the platform to reload it";
        }
        if (m.contains("no jniCudaNative") || m.contains("no strata_cuda")) {
            return "this plugin was built without the CUDA toolkit (no nvcc at build time), "
                    + "so it has no native library for " + Loader.getPlatform();
        }
        return "native library failed to load: " + m;
    }
}
