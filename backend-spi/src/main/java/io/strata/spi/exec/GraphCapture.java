package io.strata.spi.exec;

/**
 * What an executor captured at start-up to replay decode steps cheaply (CUDA graphs on the CUDA backend),
 * for the console and the logs.
 *
 * @param graphs        shapes captured (0: every step runs eagerly)
 * @param maxBatch      largest batch a captured shape takes
 * @param maxContext    longest context a captured shape takes
 * @param captureMillis wall time the capture took
 * @param bytes         device memory the capture took (its scratch and the graphs)
 * @param stopped       why capture ended early (a budget, a failure), or null when it covered every shape asked
 * @param budgetMillis  the wall time capture was allowed (0: none stated)
 * @param budgetBytes   the device memory the graphs were allowed (0: none stated)
 */
public record GraphCapture(int graphs, int maxBatch, int maxContext, long captureMillis, long bytes, String stopped,
                           long budgetMillis, long budgetBytes) {
    /** Nothing captured. */
    public static final GraphCapture NONE = new GraphCapture(0, 0, 0, 0, 0, null);

    /** A capture made under no stated budget. */
    public GraphCapture(int graphs, int maxBatch, int maxContext, long captureMillis, long bytes, String stopped) {
        this(graphs, maxBatch, maxContext, captureMillis, bytes, stopped, 0, 0);
    }
}
