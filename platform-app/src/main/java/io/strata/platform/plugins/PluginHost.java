package io.strata.platform.plugins;

import io.strata.platform.config.PluginProperties;
import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.ProbeResult;
import org.pf4j.PluginManager;
import org.pf4j.PluginState;
import org.pf4j.PluginWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * Loads the backend plugins at start and keeps their reports. Every jar gets a line on the Plugins
 * page: one that is not a plugin, cannot be loaded, fails to start, or whose backend throws or hangs
 * while probed is shown FAILED with the reason, and the platform goes on without it.
 *
 * <p>PF4J is not thread-safe, so every call that changes plugin state goes through this class's lock.
 */
@Service
public class PluginHost implements InitializingBean, DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(PluginHost.class);

    private final PluginManager manager;
    private final PluginProperties properties;
    private final PluginStateRepository states;
    private final PluginJarInspector inspector = new PluginJarInspector();
    private final ExecutorService probeThreads = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("plugin-probe-", 0).factory());

    /** Jars PF4J never accepted, by file name, with the reason. */
    private final Map<String, String> rejectedJars = new ConcurrentHashMap<>();
    /** Last probe of each started plugin's providers. */
    private final Map<String, List<BackendReport>> reports = new ConcurrentHashMap<>();
    /** Provider instances of started plugins, reused so a backend keeps its state between calls. */
    private final Map<String, List<BackendProvider>> providers = new ConcurrentHashMap<>();

    public PluginHost(PluginManager manager, PluginProperties properties, PluginStateRepository states) {
        this.manager = manager;
        this.properties = properties;
        this.states = states;
    }

    public Path pluginsDir() {
        return manager.getPluginsRoot();
    }

    @Override
    public void afterPropertiesSet() {
        loadAll();
    }

    @Override
    public void destroy() {
        probeThreads.shutdownNow();
    }

    /** Scans the plugins folder, loads and starts every jar that is enabled, then probes the backends. */
    public synchronized void loadAll() {
        List<Path> jars = listJars();
        log.info("Scanning {} for plugins: {} jar(s)", pluginsDir(), jars.size());
        for (Path jar : jars) {
            load(jar);
        }
        manager.startPlugins();
        for (PluginWrapper plugin : manager.getPlugins()) {
            if (plugin.getPluginState() == PluginState.STARTED) {
                probe(plugin);
            } else if (plugin.getPluginState() == PluginState.FAILED) {
                log.warn("Plugin '{}' FAILED to start: {}", plugin.getPluginId(), failureOf(plugin));
            }
        }
        for (PluginView view : plugins()) {
            log.info("Plugin {}{} {}{}", view.pluginId(), view.version().isEmpty() ? "" : " " + view.version(), view.state(),
                    view.reason().isEmpty() ? "" : " (" + view.reason() + ")");
        }
    }

    private List<Path> listJars() {
        try (Stream<Path> files = Files.list(pluginsDir())) {
            return files.filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".jar"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            log.error("Cannot list plugins folder {}", pluginsDir(), e);
            return List.of();
        }
    }

    /** Loads one jar into PF4J; returns the plugin id, or empty when it was rejected (reason recorded). */
    private Optional<String> load(Path jar) {
        String file = jar.getFileName().toString();
        try {
            PluginJar descriptor = inspector.inspect(jar);
            PluginWrapper existing = manager.getPlugin(descriptor.pluginId());
            if (existing != null) {
                return reject(file, "plugin id '" + descriptor.pluginId() + "' is already loaded from "
                        + existing.getPluginPath().getFileName());
            }
            String id = manager.loadPlugin(jar);
            if (id == null) {
                return reject(file, "PF4J could not load it (see the log)");
            }
            rejectedJars.remove(file);
            return Optional.of(id);
        } catch (InvalidPluginJarException e) {
            return reject(file, e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            log.error("Cannot load plugin jar {}", jar, e);
            return reject(file, Failures.describe(e));
        }
    }

    private Optional<String> reject(String file, String reason) {
        log.warn("Plugin jar {} FAILED: {}", file, reason);
        rejectedJars.put(file, reason);
        return Optional.empty();
    }

    /**
     * Asks each backend of a started plugin who it is and what it finds. A provider that throws or
     * outlives the probe timeout marks the whole plugin FAILED and stops it, so the engine never
     * picks a backend that is known to misbehave.
     */
    private void probe(PluginWrapper plugin) {
        String id = plugin.getPluginId();
        List<BackendReport> found = new ArrayList<>();
        List<BackendProvider> instances = new ArrayList<>();
        String failure = null;
        try {
            for (BackendProvider provider : withPluginLoader(plugin, () -> manager.getExtensions(BackendProvider.class, id))) {
                String cls = provider.getClass().getName();
                try {
                    BackendIdentity identity = call(plugin, provider::identity, "identity()");
                    ProbeResult probe = call(plugin, provider::probe, "probe()");
                    if (identity == null || probe == null) {
                        throw new IllegalStateException(cls + " returned null from " + (identity == null ? "identity()" : "probe()"));
                    }
                    found.add(new BackendReport(cls, identity, probe, ""));
                    instances.add(provider);
                } catch (Exception | LinkageError e) {
                    String reason = cls + " failed: " + Failures.describe(unwrap(e));
                    found.add(new BackendReport(cls, null, null, reason));
                    failure = failure == null ? reason : failure;
                }
            }
        } catch (RuntimeException | LinkageError e) {
            failure = "cannot create its BackendProvider: " + Failures.describe(e);
        }
        reports.put(id, List.copyOf(found));
        if (failure != null) {
            log.warn("Plugin '{}' FAILED: {}", id, failure);
            markFailed(plugin, failure);
            return;
        }
        providers.put(id, List.copyOf(instances));
    }

    private <T> T call(PluginWrapper plugin, Callable<T> call, String what) throws Exception {
        Duration timeout = properties.probeTimeout();
        Future<T> future = probeThreads.submit(() -> withPluginLoader(plugin, call));
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new TimeoutException(what + " did not answer within " + timeout.toMillis() + " ms (strata.plugins.probe-timeout)");
        }
    }

    private static <T> T withPluginLoader(PluginWrapper plugin, Callable<T> call) throws RuntimeException {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(plugin.getPluginClassLoader());
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while (t instanceof ExecutionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private void markFailed(PluginWrapper plugin, String reason) {
        providers.remove(plugin.getPluginId());
        try {
            manager.stopPlugin(plugin.getPluginId());
        } catch (RuntimeException | LinkageError e) {
            log.warn("Plugin '{}' did not stop cleanly", plugin.getPluginId(), e);
        }
        plugin.setPluginState(PluginState.FAILED);
        plugin.setFailedException(new BackendFailure(reason));
    }

    private static String failureOf(PluginWrapper plugin) {
        Throwable failed = plugin.getFailedException();
        if (failed == null) {
            return "failed (no reason given by PF4J)";
        }
        if (failed instanceof BackendFailure) {
            return failed.getMessage();
        }
        String pluginClass = plugin.getDescriptor().getPluginClass();
        if (failed instanceof NullPointerException && pluginClass != null && !pluginClass.isBlank()) {
            // PF4J answers a plugin class it could not create with a null plugin, then NPEs on start()
            return "PF4J could not create plugin.class " + pluginClass + " (missing from the jar or its dependencies, "
                    + "not a subclass of org.pf4j.Plugin, or its constructor failed)";
        }
        return "start() failed: " + Failures.describe(failed);
    }

    /** Everything in the plugins folder, loaded or not, sorted by id. */
    public List<PluginView> plugins() {
        List<PluginView> views = new ArrayList<>();
        for (PluginWrapper plugin : manager.getPlugins()) {
            var d = plugin.getDescriptor();
            PluginState state = plugin.getPluginState();
            String reason = state == PluginState.FAILED ? failureOf(plugin) : "";
            List<BackendReport> backends = state == PluginState.STARTED || state == PluginState.FAILED
                    ? reports.getOrDefault(plugin.getPluginId(), List.of()) : List.of();
            views.add(new PluginView(plugin.getPluginId(), plugin.getPluginPath().getFileName().toString(),
                    nullToEmpty(d.getVersion()), nullToEmpty(d.getProvider()), nullToEmpty(d.getPluginDescription()),
                    state.toString(), reason, true, backends));
        }
        rejectedJars.forEach((file, reason) -> views.add(
                new PluginView(file, file, "", "", "", PluginState.FAILED.toString(), reason, false, List.of())));
        views.sort(Comparator.comparing(PluginView::pluginId));
        return views;
    }

    public Optional<PluginView> plugin(String pluginId) {
        return plugins().stream().filter(v -> v.managed() && v.pluginId().equals(pluginId)).findFirst();
    }

    /** Backends that can run a model here, from started plugins whose probe said available. */
    /** The jar a loaded plugin came from (a worker process loads it again on its own). */
    public Optional<java.nio.file.Path> pluginJar(String pluginId) {
        PluginWrapper plugin = manager.getPlugin(pluginId);
        return plugin == null ? Optional.empty() : Optional.of(plugin.getPluginPath());
    }

    public List<LoadedBackend> availableBackends() {
        List<LoadedBackend> ready = new ArrayList<>();
        for (PluginWrapper plugin : manager.getStartedPlugins()) {
            List<BackendProvider> instances = providers.getOrDefault(plugin.getPluginId(), List.of());
            List<BackendReport> probes = reports.getOrDefault(plugin.getPluginId(), List.of()).stream()
                    .filter(r -> r.error().isEmpty()).toList();
            for (int i = 0; i < instances.size() && i < probes.size(); i++) {
                if (probes.get(i).available()) {
                    ready.add(new LoadedBackend(plugin.getPluginId(), instances.get(i), probes.get(i).probe()));
                }
            }
        }
        return ready;
    }

    /** Disables a plugin now and for later starts (the choice is stored in the database). */
    public synchronized PluginView disable(String pluginId) {
        PluginWrapper plugin = known(pluginId);
        providers.remove(pluginId);
        reports.remove(pluginId);
        if (plugin.getPluginState() == PluginState.FAILED) {
            // PF4J refuses to stop what never started; the choice must stick all the same
            plugin.setPluginState(PluginState.STOPPED);
        }
        if (!manager.disablePlugin(pluginId)) {
            throw new IllegalStateException("PF4J could not disable plugin '" + pluginId + "'");
        }
        log.info("Plugin '{}' disabled by an operator", pluginId);
        return plugin(pluginId).orElseThrow();
    }

    /** Enables a plugin (stored), starts it and probes its backends; also retries a FAILED one. */
    public synchronized PluginView enable(String pluginId) {
        PluginWrapper plugin = known(pluginId);
        if (plugin.getPluginState() == PluginState.DISABLED) {
            manager.enablePlugin(pluginId);
        }
        if (plugin.getPluginState() == PluginState.FAILED) {
            plugin.setPluginState(PluginState.STOPPED);
        }
        PluginState state = manager.startPlugin(pluginId);
        if (state == PluginState.STARTED) {
            probe(plugin);
        }
        log.info("Plugin '{}' enabled by an operator: {}", pluginId, plugin.getPluginState());
        return plugin(pluginId).orElseThrow();
    }

    /**
     * Removes a FAILED or disabled plugin: unloads it and deletes its jar from the plugins folder. A
     * started plugin must be disabled first, so a backend that may be serving is never pulled away.
     *
     * @param pluginId the plugin's id, or the file name of a jar that never became a plugin
     * @return the deleted file's name
     */
    public synchronized String remove(String pluginId) throws IOException {
        if (rejectedJars.containsKey(pluginId)) {
            Path jar = pluginsDir().resolve(pluginId);
            Files.deleteIfExists(jar);
            rejectedJars.remove(pluginId);
            log.info("Plugin jar {} (FAILED) removed by an operator: file deleted", pluginId);
            return pluginId;
        }
        PluginWrapper plugin = known(pluginId);
        PluginState state = plugin.getPluginState();
        if (state != PluginState.FAILED && state != PluginState.DISABLED) {
            throw new IllegalArgumentException("Plugin '" + pluginId + "' is " + state + "; disable it before removing it");
        }
        Path jar = plugin.getPluginPath();
        providers.remove(pluginId);
        reports.remove(pluginId);
        if (state == PluginState.FAILED) {
            plugin.setPluginState(PluginState.STOPPED);
        }
        if (!manager.unloadPlugin(pluginId)) {
            throw new IllegalStateException("PF4J could not unload plugin '" + pluginId + "'");
        }
        Files.deleteIfExists(jar);
        states.forget(pluginId);
        log.info("Plugin '{}' ({}) removed by an operator: {} deleted", pluginId, state, jar.getFileName());
        return jar.getFileName().toString();
    }

    private PluginWrapper known(String pluginId) {
        PluginWrapper plugin = manager.getPlugin(pluginId);
        if (plugin == null) {
            throw new IllegalArgumentException("no plugin with id '" + pluginId + "'");
        }
        return plugin;
    }

    /**
     * Installs an uploaded jar: checks it is a well-formed plugin whose id is not taken, moves it
     * into the plugins folder as {@code <id>-<version>.jar}, loads, starts and probes it.
     *
     * @param upload a temporary file holding the upload; it is moved or left for the caller to delete
     */
    public synchronized PluginView install(Path upload) throws PluginInstallException {
        PluginJar jar;
        try {
            jar = inspector.inspect(upload);
        } catch (InvalidPluginJarException e) {
            throw new PluginInstallException("Rejected: " + e.getMessage(), e);
        }
        if (jar.extensionClasses().isEmpty()) {
            throw new PluginInstallException("Rejected: the jar declares no extensions (META-INF/extensions.idx is missing or empty); "
                    + "a backend plugin must provide a BackendProvider marked @Extension");
        }
        if (manager.getPlugin(jar.pluginId()) != null) {
            throw new PluginInstallException("Rejected: a plugin with id '" + jar.pluginId() + "' is already installed");
        }
        Path target = pluginsDir().resolve(jar.pluginId() + "-" + jar.version().replaceAll("[^A-Za-z0-9._-]", "_") + ".jar");
        if (Files.exists(target)) {
            throw new PluginInstallException("Rejected: " + target.getFileName() + " already exists in the plugins folder");
        }
        try {
            Path staging = Files.createTempFile(pluginsDir(), ".upload-", ".tmp");
            Files.copy(upload, staging, StandardCopyOption.REPLACE_EXISTING);
            Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new PluginInstallException("Cannot write into the plugins folder: " + e.getMessage(), e);
        }
        Optional<String> id = load(target);
        if (id.isEmpty()) {
            String reason = rejectedJars.remove(target.getFileName().toString());
            deleteQuietly(target);
            throw new PluginInstallException("Rejected: " + reason);
        }
        PluginState state = manager.startPlugin(id.get());
        PluginWrapper plugin = manager.getPlugin(id.get());
        if (state == PluginState.STARTED) {
            probe(plugin);
        }
        log.info("Plugin '{}' {} installed from an upload: {}", jar.pluginId(), jar.version(), plugin.getPluginState());
        return plugin(id.get()).orElseThrow();
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.warn("Cannot delete {}", file, e);
        }
    }

    /** Marks a plugin that started but whose backend misbehaved; the message is the finished sentence. */
    private static final class BackendFailure extends RuntimeException {
        BackendFailure(String message) {
            super(message, null, false, false);
        }
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
