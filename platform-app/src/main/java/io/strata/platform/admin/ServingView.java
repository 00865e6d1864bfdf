package io.strata.platform.admin;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.GraphCapture;

import java.util.List;
import java.util.Locale;

/**
 * The "Serving backend" card of the dashboard and the Plugins page: which backend serves (plugin id and
 * name), on which device, its KV pools per bucket, the device memory, and the backends skipped before it.
 * Built from {@link ServingBackend}'s snapshot, never from the engine thread's state.
 *
 * @param pluginId      the serving plugin, null when none serves
 * @param memory        device memory lines, empty for a host-memory backend
 * @param offlineReason why nothing serves (null while serving)
 * @param workers       the worker processes running the backend (one per rank), each with its state and
 *                      restarts; empty when the backend runs in the platform's process
 */
public record ServingView(String pluginId, String name, String device, List<PoolRow> pools, String poolTotal,
                          List<String> memory, List<ServingBackend.Skipped> skipped, String offlineReason,
                          List<String> workers) {

    /** One KV pool as a table row. */
    public record PoolRow(String bucket, int pages, String size) {
    }

    public static ServingView of(ServingBackend backend, InferenceEngine.EngineStatus status) {
        var serving = backend.serving().orElse(null);
        if (serving == null || !status.up()) {
            return new ServingView(null, null, null, List.of(), null, List.of(), backend.skipped(),
                    status.up() ? "no backend chosen" : status.detail(), workerLines(backend));
        }
        List<PoolRow> pools = serving.pools().stream()
                .map(p -> new PoolRow(p.bucket(), p.pages(), bytes(p.bytes()))).toList();
        List<String> memory = backend.deviceMemory().map(ServingView::memoryLines).orElse(List.of());
        return new ServingView(serving.pluginId(), serving.name(), serving.device(), pools, bytes(serving.poolBytes()),
                memory, backend.skipped(), null, workerLines(backend));
    }

    /** One line per worker process ("worker-0 (pid 4242): running; restarted 1 time(s), ..."), none in-process. */
    private static List<String> workerLines(ServingBackend backend) {
        return backend.workers().stream().map(io.strata.platform.workers.WorkerState::summary).toList();
    }

    public boolean serving() {
        return pluginId != null;
    }

    static List<String> memoryLines(DeviceMemory m) {
        List<String> lines = new java.util.ArrayList<>(List.of(
                "Used by the model: " + bytes(m.usedBytes()) + " (weights " + bytes(m.weightBytes()) + ", KV pools "
                        + bytes(m.kvBytes()) + ", workspace " + bytes(m.workspaceBytes()) + ")",
                "Free: " + bytes(m.freeBytes()) + " of " + bytes(m.totalBytes()) + " total"));
        GraphCapture g = m.graphs();
        if (g.graphs() > 0 || g.stopped() != null) {
            lines.add("Decode graphs: " + g.graphs() + " captured (batch up to " + g.maxBatch() + ", context up to "
                    + g.maxContext() + ") in " + g.captureMillis() + " ms"
                    + (g.budgetMillis() > 0 ? " (budget " + g.budgetMillis() + " ms)" : "") + ", " + bytes(g.bytes())
                    + (g.budgetBytes() > 0 ? " (budget " + bytes(g.budgetBytes()) + ")" : "")
                    + (g.stopped() == null ? "" : "; stopped early: " + g.stopped()));
        }
        return List.copyOf(lines);
    }

    /** 1536 → "1.5 KiB"; binary units, one decimal. */
    static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
