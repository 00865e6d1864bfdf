package io.strata.platform.engine;

import io.strata.platform.workers.WorkerState;
import io.strata.spi.exec.DeviceMemory;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which backend plugin the engine chose at start, what it runs on and the KV pools it allocated, so the
 * console and the metrics can say which one serves and why the others do not. Empty while the engine is
 * offline (its status says why); {@link #skipped()} lists the backends tried first that could not load the
 * model.
 *
 * <p>Everything here is an immutable snapshot behind a volatile field: the start-up thread publishes the
 * choice, the engine thread refreshes {@link #deviceMemory()} after steps, web and metrics threads only read.
 */
@Component
public class ServingBackend {

    /**
     * The backend that serves.
     *
     * @param pluginId the plugin's id ({@code strata.backend} names it)
     * @param name     its human-readable name from {@code identity()}
     * @param device   the device it runs on ({@link DeviceMemory#device()}), or {@code host memory}
     * @param pools    the KV pools its {@code allocateKv} returned, one per page bucket
     */
    public record Serving(String pluginId, String name, String device, List<Pool> pools) {
        public Serving {
            pools = List.copyOf(pools);
        }

        public long poolBytes() {
            return pools.stream().mapToLong(Pool::bytes).sum();
        }
    }

    /** One KV pool: a page bucket ({@code large}, {@code middle}, {@code small}), its pages and the bytes allocated. */
    public record Pool(String bucket, int pages, long bytes) {
    }

    /** A backend ranked above the serving one that could not load the model, and why. */
    public record Skipped(String pluginId, String reason) {
    }

    private volatile Serving serving;
    private volatile List<Skipped> skipped = List.of();
    private volatile DeviceMemory deviceMemory;
    /** One state per worker process, in the order they first reported (rank order); replaced whole on a change. */
    private volatile List<WorkerState> workers = List.of();

    void chose(Serving serving, DeviceMemory memory) {
        this.deviceMemory = memory;
        this.serving = serving;
    }

    void skipped(List<Skipped> skipped) {
        this.skipped = List.copyOf(skipped);
    }

    /** The executor's device memory as last read on the engine thread (never read from a web thread). */
    void deviceMemory(DeviceMemory memory) {
        this.deviceMemory = memory;
    }

    /**
     * Published by a worker supervisor on every change of its worker (start, crash, restart, stop); with one
     * worker per data-parallel rank each supervisor publishes its own, told apart by {@link WorkerState#worker()}.
     */
    synchronized void worker(WorkerState state) {
        List<WorkerState> next = new ArrayList<>(workers);
        int at = -1;
        for (int i = 0; i < next.size(); i++) {
            if (next.get(i).worker().equals(state.worker())) {
                at = i;
            }
        }
        if (at >= 0) {
            next.set(at, state);
        } else {
            next.add(state);
        }
        this.workers = List.copyOf(next);
    }

    /** The worker processes that run the backend, one per rank in rank order; empty when it runs inside the platform. */
    public List<WorkerState> workers() {
        return workers;
    }

    /** The worker process called {@code name} (e.g. {@code worker-1}), if there is one. */
    public Optional<WorkerState> worker(String name) {
        return workers.stream().filter(w -> w.worker().equals(name)).findFirst();
    }

    public Optional<String> pluginId() {
        return serving().map(Serving::pluginId);
    }

    public Optional<Serving> serving() {
        return Optional.ofNullable(serving);
    }

    public List<Skipped> skipped() {
        return skipped;
    }

    /** Empty for a host-memory backend, and while nothing serves. */
    public Optional<DeviceMemory> deviceMemory() {
        return Optional.ofNullable(deviceMemory);
    }
}
