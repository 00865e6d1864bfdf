package io.strata.platform.engine;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.strata.spi.exec.DeviceMemory;

import java.util.function.ToLongFunction;

/**
 * Device memory gauges, registered only when the serving executor runs on a device
 * ({@code ModelExecutor.deviceMemory()} present), tagged {@code device}. They read the snapshot in
 * {@link ServingBackend}, which the engine thread refreshes, never the executor itself:
 * <ul>
 *   <li>{@code strata_device_memory_used_bytes}: held by the executor (weights + KV pools + workspace)</li>
 *   <li>{@code strata_device_memory_free_bytes}, {@code strata_device_memory_total_bytes}: as the driver reports</li>
 *   <li>{@code strata_device_weights_bytes}, {@code strata_device_kv_bytes}: the weights and the KV pools</li>
 * </ul>
 */
final class DeviceMemoryMetrics {
    private DeviceMemoryMetrics() {
    }

    static void bindTo(MeterRegistry registry, ServingBackend serving, String device) {
        Tags tags = Tags.of("device", device);
        gauge(registry, serving, tags, "strata.device.memory.used", "Device memory held by the serving executor (weights, KV pools, workspace)", DeviceMemory::usedBytes);
        gauge(registry, serving, tags, "strata.device.memory.free", "Free device memory as the driver reports it", DeviceMemory::freeBytes);
        gauge(registry, serving, tags, "strata.device.memory.total", "Device memory", DeviceMemory::totalBytes);
        gauge(registry, serving, tags, "strata.device.weights", "Device memory held by the model's weights", DeviceMemory::weightBytes);
        gauge(registry, serving, tags, "strata.device.kv", "Device memory held by the KV pools", DeviceMemory::kvBytes);
    }

    private static void gauge(MeterRegistry registry, ServingBackend serving, Tags tags, String name, String help,
                              ToLongFunction<DeviceMemory> value) {
        Gauge.builder(name, serving, s -> s.deviceMemory().map(m -> (double) value.applyAsLong(m)).orElse(Double.NaN))
                .tags(tags).baseUnit(BaseUnits.BYTES).description(help).strongReference(true).register(registry);
    }
}
