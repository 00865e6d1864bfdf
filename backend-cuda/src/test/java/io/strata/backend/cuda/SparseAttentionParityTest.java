package io.strata.backend.cuda;

import io.strata.backend.cpu.ops.SparseAttention;
import io.strata.backend.cuda.SparseKernels.Attention;
import io.strata.backend.cuda.SparseKernels.Source;
import io.strata.kv.CacheKind;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sparse attention with a sink on the GPU against the CPU backend's {@link SparseAttention}: the same
 * entries (written by the CPU backend's codec into paged pools), the same index lists. Rows of one launch
 * mix decode and chunked prefill of several sequences: window entries come from the SWA pool or, for the
 * chunk's own rows, from a step staging buffer (three sources); compressed entries from a C4A-style pool
 * whose first pages two sequences share (a prefix-cache hit), either an indexer-style selection or every
 * visible entry (C128A style).
 */
class SparseAttentionParityTest {
    private static final KvLayout KV = KvLayout.of(KvModelShape.synthetic("parity", 2, 2), KvPrecision.DEFAULT);
    private static final int WINDOW = 128;

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @Test
    void flashShapeSelected() {
        check(64, 512, 4, true, new int[]{5000, 3000, 700}, 24, 101);
    }

    @Test
    void proShapeSelected() {
        check(128, 1024, 4, true, new int[]{9000, 4500}, 9, 102);
    }

    @Test
    void allVisibleC128Style() {
        check(64, 0, 128, false, new int[]{40000, 20000, 300}, 7, 103);
    }

    /**
     * Three decode rows, as a small decode batch runs: few enough rows that the split form cuts each list into
     * single 64-entry tiles (ten splits of a 640-entry C4A list, seven of a 440-entry C128A one).
     */
    @Test
    void decodeRowsSplitIntoSingleTiles() {
        int sms = Integer.parseInt(CudaRuntime.devices().getFirst().properties().get("multiprocessors"));
        long perSplit = 3L * 64 * (512 + 2) * Float.BYTES;  // each split's partial sums and (max, sum) per row and head
        // one split per 64-entry tile, as long as the three rows' splits fit one wave of CTAs
        assertThat(check(64, 512, 4, true, new int[]{5000, 3000, 700}, 1, 105))
            .isEqualTo(Math.min(10, sms / 3) * perSplit);
        assertThat(check(64, 0, 128, false, new int[]{40000, 20000, 300}, 1, 106))
            .isEqualTo(Math.min(7, sms / 3) * perSplit);
    }

    /** The test fixtures' attention: 4 heads (padded to 64 in the kernel), top-k 16. */
    @Test
    void fixtureShape() {
        check(4, 16, 4, true, new int[]{900, 600, 70}, 33, 104);
    }

    private record Row(int seq, int pos) {
    }

    /**
     * @param topk    selected compressed entries per row (indexer style), unused when {@code selected} is false
     * @param ratio   positions per compressed entry
     * @param lengths positions of each sequence after this step; sequence 1 shares sequence 0's first pages
     * @param chunk   this step's prefill rows of sequence 1 (the others decode one row)
     * @return the split form's workspace bytes
     */
    private long check(int heads, int topk, int ratio, boolean selected, int[] lengths, int chunk, long seed) {
        Random rnd = new Random(seed);
        int seqs = lengths.length;
        // the three sources: SWA pool, compressed pool, this step's staging rows
        KindLayout swaKind = KV.kind(CacheKind.SWA_KV);
        KindLayout cKind = KV.kind(ratio == 4 ? CacheKind.C4A_KV : CacheKind.C128A_KV);
        EntryLayout swaLayout = EntryLayout.of(swaKind, KV.bucket(swaKind.bucket()).rowBytes());
        EntryLayout cLayout = EntryLayout.of(cKind, KV.bucket(cKind.bucket()).rowBytes());
        int cEpp = cLayout.entriesPerPage();
        int maxEntries = 0;
        for (int len : lengths) {
            maxEntries = Math.max(maxEntries, len / ratio);
        }
        int cStride = Math.max(1, (maxEntries + cEpp - 1) / cEpp);
        int shared = seqs > 1 ? Math.min(lengths[0], lengths[1]) / ratio / cEpp / 2 : 0;
        int[] cTable = new int[seqs * cStride];
        int next = 0;
        for (int s = 0; s < seqs; s++) {
            for (int v = 0; v < cStride; v++) {
                cTable[s * cStride + v] = s == 1 && v < shared ? cTable[v] : next++;
            }
        }
        PagedEntries cPool = new PagedEntries(cLayout, next, true);
        Map<Long, Boolean> written = new HashMap<>();
        for (int s = 0; s < seqs; s++) {
            for (int j = 0; j < lengths[s] / ratio; j++) {
                long slot = cSlot(cTable, cStride, cEpp, s, j);
                if (written.putIfAbsent(slot, true) == null) {
                    cPool.write(slot, PagedEntries.mainRow(rnd));
                }
            }
        }
        // the step's rows
        List<Row> rows = new ArrayList<>();
        for (int s = 0; s < seqs; s++) {
            int n = s == 1 ? chunk : 1;
            for (int p = lengths[s] - n; p < lengths[s]; p++) {
                rows.add(new Row(s, p));
            }
        }
        int nRows = rows.size();
        // window entries: positions before a sequence's step live in the SWA pool (one page per position group),
        // the step's own rows in the staging buffer (row r at slot r)
        int swaEpp = swaLayout.entriesPerPage();
        Map<Long, Integer> swaSlotOf = new HashMap<>();   // (seq << 32 | pos) -> slot
        int swaPages = 0;
        int[] stepStart = new int[seqs];
        for (int s = 0; s < seqs; s++) {
            stepStart[s] = lengths[s] - (s == 1 ? chunk : 1);
            int from = Math.max(0, stepStart[s] - WINDOW);
            for (int p = from; p < stepStart[s]; p++) {
                long key = ((long) s << 32) | p;
                int slot = (p - from) % swaEpp == 0 || p == from ? (swaPages++) * swaEpp : swaSlotOf.get(key - 1) + 1;
                swaSlotOf.put(key, slot);
            }
        }
        PagedEntries swaPool = new PagedEntries(swaLayout, Math.max(1, swaPages), true);
        EntryLayout stageLayout = EntryLayout.mainSplit(nRows, (long) nRows * 584);
        PagedEntries stage = new PagedEntries(stageLayout, 1, true);
        for (var e : swaSlotOf.entrySet()) {
            swaPool.write(e.getValue(), PagedEntries.mainRow(rnd));
        }
        for (int r = 0; r < nRows; r++) {
            stage.write(r, PagedEntries.mainRow(rnd));
        }
        // lists: window (oldest first, the row itself last), then the compressed entries
        int listStride = WINDOW + (selected ? topk : maxEntries);
        int[] lists = new int[nRows * listStride];
        java.util.Arrays.fill(lists, -1);
        int[] lens = new int[nRows];
        float[][] kvRows = new float[nRows][];
        for (int r = 0; r < nRows; r++) {
            Row row = rows.get(r);
            List<float[]> gathered = new ArrayList<>();
            int m = 0;
            for (int p = Math.max(0, row.pos() - WINDOW + 1); p <= row.pos(); p++) {
                int entry;
                float[] v;
                if (p >= stepStart[row.seq()]) {
                    int sr = r - (row.pos() - p);  // the staging row of that position (same sequence, earlier row)
                    entry = SparseKernels.tagged(2, sr);
                    v = stage.read(sr);
                } else {
                    int slot = swaSlotOf.get(((long) row.seq() << 32) | p);
                    entry = SparseKernels.tagged(0, slot);
                    v = swaPool.read(slot);
                }
                lists[r * listStride + m++] = entry;
                gathered.add(v);
            }
            if (r % 5 == 3 && m > 2) {
                lists[r * listStride + 1] = -1;  // a skipped entry: the kernel must ignore it
                gathered.set(1, null);
            }
            int visible = (row.pos() + 1) / ratio;
            List<Integer> comp = new ArrayList<>();
            for (int j = 0; j < visible; j++) {
                comp.add(j);
            }
            if (selected && visible > topk) {
                java.util.Collections.shuffle(comp, rnd);
                comp = comp.subList(0, topk);
            }
            for (int j : comp) {
                long slot = cSlot(cTable, cStride, cEpp, row.seq(), j);
                lists[r * listStride + m++] = SparseKernels.tagged(1, slot);
                gathered.add(cPool.read(slot));
            }
            lens[r] = m;
            kvRows[r] = flatten(gathered);
        }
        float[] qv = new float[nRows * heads * 512];
        short[] qBits = new short[qv.length];
        for (int i = 0; i < qv.length; i++) {
            qv[i] = bf16Random(rnd, 1.5f);
            qBits[i] = bits(qv[i]);
        }
        float[] sink = new float[heads];
        for (int h = 0; h < heads; h++) {
            sink[h] = (float) rnd.nextGaussian() * 2f;
        }
        float scale = (float) (1.0 / Math.sqrt(512));

        // ---- CPU ----
        float[] cpu = new float[qv.length];
        for (int r = 0; r < nRows; r++) {
            int n = kvRows[r].length / 512;
            int[] idx = new int[n];
            for (int i = 0; i < n; i++) {
                idx[i] = i;
            }
            float[] scratch = new float[n];
            for (int h = 0; h < heads; h++) {
                int off = (r * heads + h) * 512;
                SparseAttention.attend(qv, off, kvRows[r], idx, n, 512, scale, sink[h], scratch, cpu, off);
            }
        }

        // ---- GPU: one CTA per row, and the list split over CTAs ----
        try (DeviceBuffer dSwa = swaPool.upload(); DeviceBuffer dC = cPool.upload(); DeviceBuffer dStage = stage.upload();
             DeviceBuffer dQ = DeviceBuffer.of(qBits); DeviceBuffer dLists = DeviceBuffer.of(lists);
             DeviceBuffer dLens = DeviceBuffer.of(lens); DeviceBuffer dSink = DeviceBuffer.of(sink);
             DeviceBuffer dOut = DeviceBuffer.allocate(2L * qv.length);
             DeviceBuffer dOutSplit = DeviceBuffer.allocate(2L * qv.length)) {
            List<Source> sources = List.of(new Source(dSwa.address(), swaLayout), new Source(dC.address(), cLayout),
                    new Source(dStage.address(), stageLayout));
            SparseKernels.attend(new Attention(dQ.address(), heads, dLists.address(), dLens.address(), listStride,
                    dSink.address(), scale, sources, dOut.address(), nRows), 0, 0);
            long wsBytes = SparseKernels.attentionWorkspaceBytes(nRows, heads, listStride);
            try (DeviceBuffer ws = DeviceBuffer.allocate(Math.max(16, wsBytes))) {
                SparseKernels.attend(new Attention(dQ.address(), heads, dLists.address(), dLens.address(), listStride,
                        dSink.address(), scale, sources, dOutSplit.address(), nRows), wsBytes > 0 ? ws.address() : 0, 0);
                FusedKernels.synchronize();
            }
            float[] gpu = toFloats(dOut.downloadShorts(qv.length));
            float[] gpuSplit = toFloats(dOutSplit.downloadShorts(qv.length));
            double err = relativeError(gpu, cpu);
            double errSplit = relativeError(gpuSplit, cpu);
            double worstRow = 0;
            for (int r = 0; r < nRows; r++) {
                int from = r * heads * 512, to = from + heads * 512;
                worstRow = Math.max(worstRow, relativeError(java.util.Arrays.copyOfRange(gpu, from, to),
                        java.util.Arrays.copyOfRange(cpu, from, to)));
            }
            System.out.printf("sparse attention %d heads, %d rows (prefill chunk %d + decode), up to %d entries, %s: "
                    + "relative error %.2e (worst row %.2e), split over CTAs (%d B workspace) %.2e%n", heads, nRows,
                    chunk, listStride, selected ? "selected" : "all visible", err, worstRow, wsBytes, errSplit);
            assertThat(worstRow).isLessThanOrEqualTo(1e-2);
            assertThat(errSplit).isLessThanOrEqualTo(1e-2);
            return wsBytes;
        }
    }

    private static long cSlot(int[] table, int stride, int epp, int seq, int j) {
        return (long) table[seq * stride + j / epp] * epp + j % epp;
    }

    private static float[] flatten(List<float[]> rows) {
        int n = 0;
        for (float[] r : rows) {
            n += r == null ? 0 : 1;
        }
        float[] out = new float[n * 512];
        int i = 0;
        for (float[] r : rows) {
            if (r != null) {
                System.arraycopy(r, 0, out, 512 * i++, 512);
            }
        }
        return out;
    }

    private static float[] toFloats(short[] bits) {
        float[] out = new float[bits.length];
        for (int i = 0; i < bits.length; i++) {
            out[i] = value(bits[i]);
        }
        return out;
    }
}
