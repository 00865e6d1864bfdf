package io.strata.spi.exec;

/**
 * Accelerator memory as an executor sees it (the console and the metrics show it).
 *
 * @param device         the device, e.g. {@code "cuda:0 NVIDIA H200"}
 * @param totalBytes     the device's memory
 * @param freeBytes      free now, as the driver reports it
 * @param weightBytes    held by this executor's weights
 * @param kvBytes        held by its KV pools
 * @param workspaceBytes held by its activations and step scratch
 * @param graphs         decode graphs captured at start-up ({@link GraphCapture#NONE} when none)
 */
public record DeviceMemory(String device, long totalBytes, long freeBytes, long weightBytes, long kvBytes,
                           long workspaceBytes, GraphCapture graphs) {
    public DeviceMemory {
        graphs = graphs == null ? GraphCapture.NONE : graphs;
    }

    /** Device memory of an executor that captures no graphs. */
    public DeviceMemory(String device, long totalBytes, long freeBytes, long weightBytes, long kvBytes,
                        long workspaceBytes) {
        this(device, totalBytes, freeBytes, weightBytes, kvBytes, workspaceBytes, GraphCapture.NONE);
    }

    /** Bytes this executor holds on the device. */
    public long usedBytes() {
        return weightBytes + kvBytes + workspaceBytes;
    }
}
