package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What of one step's logits goes back to the host: the rows the engine reads whole, packed in row order into the
 * page-locked logits buffer, and for the rows of argmax-only chunks just their argmax, taken on the device
 * ({@code strata_argmax_rows}) — a greedy row then costs the host link 4 bytes instead of 4 × vocab (33 MB a step
 * at batch 64 over a 129k vocabulary). The head hands its logits over in passes of rows ({@link #queue}); after the
 * last, {@link #queueTokens} sends the tokens, and once the stream has synchronised {@link #result} reads both.
 */
final class LogitReturn {
    private final boolean[] argmax;
    /** Per row, how many whole rows come before it: its place in the packed host buffer. */
    private final int[] wholeBefore;
    private final int whole;
    private final int vocab;
    private final HostStaging logitHost;
    private final HostStaging tokenHost;
    private final long deviceTokens;
    private final MemorySegment logits;

    /**
     * @param argmax       per row, whether only its argmax goes back ({@link io.strata.spi.exec.StepBatch#argmaxRows})
     * @param deviceTokens device int32 [rows] the argmax kernel writes (0 when no row is argmax-only)
     */
    LogitReturn(boolean[] argmax, int vocab, HostStaging logitHost, HostStaging tokenHost, long deviceTokens) {
        this.argmax = argmax;
        this.vocab = vocab;
        this.logitHost = logitHost;
        this.tokenHost = tokenHost;
        this.deviceTokens = deviceTokens;
        this.wholeBefore = new int[argmax.length];
        int w = 0;
        for (int r = 0; r < argmax.length; r++) {
            wholeBefore[r] = w;
            w += argmax[r] ? 0 : 1;
        }
        this.whole = w;
        if (whole < argmax.length && deviceTokens == 0) {
            throw new IllegalArgumentException("argmax rows need a device token buffer");
        }
        this.logits = logitHost.segment(4L * vocab * whole);
    }

    /** Rows the step returns. */
    int rows() {
        return argmax.length;
    }

    /** Whether any row goes back as its token. */
    boolean anyArgmax() {
        return whole < argmax.length;
    }

    /**
     * Queues, on {@code stream} after the head wrote them, what rows {@code [r0, r0 + n)} send back from their device
     * logits {@code fp32 [n, vocab]}: the argmax of every one of them when any is argmax-only (one kernel; the others'
     * tokens are ignored), and a copy of each run of whole rows. The buffer may be rewritten after that in stream order.
     */
    void queue(long deviceLogits, int r0, int n, long stream) {
        long rowBytes = 4L * vocab;
        boolean someArgmax = false;
        for (int r = r0; r < r0 + n; r++) {
            someArgmax |= argmax[r];
        }
        if (someArgmax) {
            CudaRuntime.check(CudaNative.strata_argmax_rows(deviceLogits, n, vocab, deviceTokens + 4L * r0, stream),
                "argmax of the logits");
        }
        for (int r = r0; r < r0 + n; ) {
            if (argmax[r]) {
                r++;
                continue;
            }
            int run = r;
            while (run < r0 + n && !argmax[run]) {
                run++;
            }
            logitHost.copyFrom(deviceLogits + (r - r0) * rowBytes, wholeBefore[r] * rowBytes, (run - r) * rowBytes, stream);
            r = run;
        }
    }

    /** Queues the copy of the argmax tokens to the host, after every {@link #queue}. */
    void queueTokens(long stream) {
        if (anyArgmax()) {
            tokenHost.segment(4L * argmax.length);
            tokenHost.copyFrom(deviceTokens, 0, 4L * argmax.length, stream);
        }
    }

    /** The step's result, once the stream the copies were queued on has synchronised. */
    StepResult result(int[] rowStart, long nanos) {
        int[] tokens = new int[argmax.length];
        MemorySegment t = anyArgmax() ? tokenHost.segment(4L * argmax.length) : null;
        for (int r = 0; r < tokens.length; r++) {
            tokens[r] = argmax[r] ? t.getAtIndex(ValueLayout.JAVA_INT, r) : -1;
        }
        // a view of the pinned buffer (no 33 MB heap copy at batch 64), valid until the next step as the SPI says
        return new StepResult(logits.asReadOnly(), vocab, rowStart, tokens, nanos);
    }
}
