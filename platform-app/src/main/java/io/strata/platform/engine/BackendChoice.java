package io.strata.platform.engine;

import io.strata.platform.plugins.LoadedBackend;
import io.strata.spi.exec.ExecutionBackend;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which execution backends the engine tries, in order. With {@code strata.backend} set, only that plugin
 * (explicit: its failure takes the engine offline); unset, every available execution backend by
 * {@link ExecutionBackend#priority()}, highest first, ties by plugin id (a failure falls back to the next).
 *
 * @param candidates    backends to try, first choice first; empty when {@code offlineReason} is set
 * @param explicit      whether {@code strata.backend} named the backend
 * @param offlineReason why nothing can be tried (no execution backend, or the named one is not available)
 */
record BackendChoice(List<LoadedBackend> candidates, boolean explicit, String offlineReason) {

    static final Comparator<LoadedBackend> BY_PRIORITY = Comparator
            .comparingInt((LoadedBackend b) -> -((ExecutionBackend) b.provider()).priority())
            .thenComparing(LoadedBackend::pluginId);

    static BackendChoice of(List<LoadedBackend> available, String requested) {
        return of(available, requested, Map.of());
    }

    /**
     * @param available   what the plugin host offers (started plugins whose probe said available)
     * @param requested   {@code strata.backend}, null or blank when unset
     * @param unavailable plugins that are installed but cannot serve here, with why (their state or probe
     *                    reason), so a named one that is among them says so
     */
    static BackendChoice of(List<LoadedBackend> available, String requested, Map<String, String> unavailable) {
        List<LoadedBackend> executing = available.stream()
                .filter(b -> b.provider() instanceof ExecutionBackend)
                .sorted(BY_PRIORITY)
                .toList();
        if (requested == null || requested.isBlank()) {
            if (executing.isEmpty()) {
                return new BackendChoice(List.of(), false,
                        "no execution backend available: no started plugin offers one (see /admin/plugins)");
            }
            return new BackendChoice(executing, false, null);
        }
        String id = requested.trim();
        List<LoadedBackend> named = executing.stream().filter(b -> b.pluginId().equals(id)).toList();
        if (!named.isEmpty()) {
            return new BackendChoice(named, true, null);
        }
        String why = available.stream().anyMatch(b -> b.pluginId().equals(id))
                ? "plugin '" + id + "' is available but does not execute models (its provider is not an ExecutionBackend)"
                : unavailable.containsKey(id) ? "plugin '" + id + "' is not available here: " + unavailable.get(id)
                : "no plugin has the id '" + id + "' (see /admin/plugins)";
        return new BackendChoice(List.of(), true, "strata.backend=" + id + ": " + why + "; available execution backends: "
                + (executing.isEmpty() ? "none" : ids(executing)));
    }

    static String ids(List<LoadedBackend> backends) {
        return backends.stream().map(LoadedBackend::pluginId).distinct().collect(Collectors.joining(", "));
    }
}
