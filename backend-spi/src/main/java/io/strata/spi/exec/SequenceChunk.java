package io.strata.spi.exec;

/**
 * One request's share of a step: {@code tokens.length} consecutive tokens starting at native position
 * {@code startPosition} (a prefill chunk, or one decode token).
 *
 * <p>Contract with the cache manager: before the step, the caches of this request hold every position
 * below {@code startPosition} that the model can still read — compressed entries of all complete blocks,
 * and the window/state entries of the last window — except below {@code windowFloor}. Block tables must
 * map every page the step reads, the compressed pages it writes, the window (SWA) pages of the chunk's last
 * window (positions from {@code end - (sliding_window - 1)}) and the compressor-state pages of its trailing
 * open entries. Window and state slots of earlier positions of the chunk may be -1 ("do not persist"): the
 * chunk's own queries read those keys from its activations. Where such a slot is mapped (the last window
 * before a 256-position boundary the manager keeps for prefix hits), the backend writes it.
 *
 * @param requestId          the engine's id (errors name it)
 * @param tokens             token ids of the chunk
 * @param startPosition      native position of {@code tokens[0]}
 * @param blockTables        per {@link io.strata.kv.KindGroup#id()}: virtual page index → physical page
 *                           (row) in that group's bucket ({@link BlockTable#page}); -1 = unmapped
 * @param sharedPrefixPositions compressed entries covering positions below this are shared prefix-cache
 *                           pages: read them, never write them (0 when nothing is shared)
 * @param windowFloor        lowest position whose window KV / compressor state exists; raw window rows and
 *                           state below it are neither read nor attended. 0 normally; equal to
 *                           {@code startPosition} when the engine resumes a prefix hit by recomputing the
 *                           last window of tokens whose window pages were evicted
 * @param logitRows          indices into {@code tokens} (ascending) whose next-token logits are wanted;
 *                           typically the last one, or none for an intermediate prefill chunk
 * @param argmaxOnly         the engine needs only the argmax token of each of these rows (a greedy draw with
 *                           nothing applied to the logits first): the backend may return the token
 *                           ({@link StepResult#tokens()}, rule {@link StepResult#argmax}) instead of the row, so
 *                           a device backend need not send a 129k-float row to the host to yield one id
 */
public record SequenceChunk(long requestId, int[] tokens, int startPosition, BlockTable[] blockTables,
                            int sharedPrefixPositions, int windowFloor, int[] logitRows, boolean argmaxOnly) {
    public SequenceChunk {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("request " + requestId + ": empty chunk");
        }
        if (startPosition < 0 || sharedPrefixPositions < 0 || windowFloor < 0 || windowFloor > startPosition) {
            throw new IllegalArgumentException("request " + requestId + ": bad positions start=" + startPosition
                + " shared=" + sharedPrefixPositions + " windowFloor=" + windowFloor);
        }
        for (int i = 0; i < logitRows.length; i++) {
            if (logitRows[i] < 0 || logitRows[i] >= tokens.length || (i > 0 && logitRows[i] <= logitRows[i - 1])) {
                throw new IllegalArgumentException("request " + requestId + ": logit rows must be ascending indices into the chunk");
            }
        }
    }

    /** A chunk whose logit rows come back whole. */
    public SequenceChunk(long requestId, int[] tokens, int startPosition, BlockTable[] blockTables,
                         int sharedPrefixPositions, int windowFloor, int[] logitRows) {
        this(requestId, tokens, startPosition, blockTables, sharedPrefixPositions, windowFloor, logitRows, false);
    }

    /** A chunk that wants the logits of its last token, nothing shared, full window available. */
    public static SequenceChunk of(long requestId, int[] tokens, int startPosition, BlockTable[] blockTables) {
        return new SequenceChunk(requestId, tokens, startPosition, blockTables, 0, 0, new int[]{tokens.length - 1});
    }

    /** The same chunk with its rows' argmax wanted instead of the rows ({@link #argmaxOnly}). */
    public SequenceChunk withArgmaxOnly() {
        return new SequenceChunk(requestId, tokens, startPosition, blockTables, sharedPrefixPositions, windowFloor,
            logitRows, true);
    }

    /** Physical page of a group's virtual page, or -1 when the step's tables do not map it. */
    public int page(int group, long virtualPage) {
        return group < blockTables.length && blockTables[group] != null ? blockTables[group].page(virtualPage) : -1;
    }

    public int endPosition() {
        return startPosition + tokens.length;
    }
}
