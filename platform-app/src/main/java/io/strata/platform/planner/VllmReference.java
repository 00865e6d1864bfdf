package io.strata.platform.planner;

import io.strata.kv.KvModelShape;

import java.util.List;

/**
 * vLLM's DeepSeek-V4 KV accounting (the design at commit 4d51588e, see docs/kv-cache.md), recomputed
 * from its rules for comparison: FP8 main entries in 64-entry pages padded to 576 B (37,440 B), the FP8
 * indexer allocation (132 B even with the MXFP4 cache: 8,640 B), 2-entry C128A pages (1,728 B); one block
 * ID is a whole "layer tuple" slab across the three buckets; SWA blocks hold 64 tokens, C4 states 4, C128
 * states 8. MTP is not counted (vLLM at that commit gave the MTP layer no cache of its own here).
 *
 * @param layerTuples           tuples chosen by vLLM's approximate-gcd rule
 * @param blockIdBytes          bytes one block ID costs (tuples x 47,808)
 * @param perRequestBlockIds    window + state block IDs a decoding request holds at most
 * @param prefillTransientIds   extra block IDs an 8,192-token prefill chunk takes for one step
 */
public record VllmReference(int layerTuples, long blockIdBytes, int perRequestBlockIds, long prefillTransientIds) {

    static final long TUPLE_BYTES = 37_440 + 8_640 + 1_728;

    public static VllmReference of(KvModelShape shape, int trunk, int prefillChunk) {
        int c4 = 0;
        int c128 = 0;
        for (int i = 0; i < trunk; i++) {
            int r = shape.ratios().get(i);
            c4 += r == 4 ? 1 : 0;
            c128 += r == 128 ? 1 : 0;
        }
        int full = Math.max(c4, c128);
        List<Integer> groups = List.of(full, trunk, c4, c128);
        int best = full;
        long bestPad = Long.MAX_VALUE;
        for (int d = full; d <= 2 * full; d++) {
            long pad = 0;
            for (int n : groups) {
                pad += (long) ((n + d - 1) / d) * d - n;
            }
            if (pad < bestPad) {
                bestPad = pad;
                best = d;
            }
        }
        int swaGroups = (trunk + best - 1) / best;
        // live blocks in steady decode: SWA (bs 64, window 128) 3 per sub-group; C4 states (bs 4, window 8)
        // 3; C128 states (bs 8, window 128) 17
        int perRequest = swaGroups * 3 + (c4 > 0 ? 3 : 0) + (c128 > 0 ? 17 : 0);
        long transientIds = (c4 > 0 ? prefillChunk / 4 : 0) + (c128 > 0 ? prefillChunk / 8 : 0) + (long) swaGroups * prefillChunk / 64;
        return new VllmReference(best, best * TUPLE_BYTES, perRequest, transientIds);
    }

    /** Bytes of the full-MLA blocks of one sequence (states and SWA excluded). */
    public long sequenceBytes(long context) {
        return (context + 255) / 256 * blockIdBytes;
    }

    public long perRequestBytes() {
        return perRequestBlockIds * blockIdBytes;
    }

    public long prefillTransientBytes() {
        return prefillTransientIds * blockIdBytes;
    }
}
