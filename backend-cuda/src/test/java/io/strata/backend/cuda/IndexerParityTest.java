package io.strata.backend.cuda;

import io.strata.backend.cpu.ops.IndexerMath;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cuda.SparseKernels.IndexerQueries;
import io.strata.backend.cuda.SparseKernels.IndexerScores;
import io.strata.backend.cuda.SparseKernels.SelectionTarget;
import io.strata.backend.cuda.SparseKernels.TopK;
import io.strata.kv.CacheKind;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static io.strata.backend.cuda.GpuTest.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lightning indexer on the GPU against the CPU backend's arithmetic ({@link IndexerMath}): prepared
 * queries, every score and every top-k set must be identical (ties included: both keep the lower index).
 * A step mixes decode rows and a chunked-prefill run of several sequences, two of which share their first
 * key pages (a prefix-cache hit), read in place from the paged FP4 pool.
 */
class IndexerParityTest {
    private static final KvLayout KV = KvLayout.of(KvModelShape.synthetic("parity", 2, 2), KvPrecision.DEFAULT);

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @Test
    void flashShape() {
        check(64, 512, new int[]{8191, 6000, 3001}, 31, 17);
    }

    @Test
    void proShape() {
        check(64, 1024, new int[]{16383, 9000, 4099}, 31, 29);
    }

    /** The test fixtures' indexer: 8 heads, top-k 16 (dsv4-tiny-fp8) and 256 (dsv4-tiny-stable). */
    @Test
    void fixtureShapes() {
        check(8, 16, new int[]{900, 700, 130}, 40, 5);
        check(8, 256, new int[]{2500, 1900, 1030}, 40, 7);
    }

    /**
     * Keys whose block scales spread over a factor of 64 (every 97th key): the scores kernel's groups of 16 keys that
     * hold one take its four-term form, the others its one-chain form, both bit for bit the CPU's.
     */
    @Test
    void keysWithWideBlockScales() {
        check(64, 512, new int[]{8191, 6000, 3001}, 31, 19, 97);
    }

    /** 128K context: the top-k spreads over a cluster of CTAs. */
    @Test
    void longContext() {
        check(64, 512, new int[]{131071, 70000}, 1, 3);
    }

    private void check(int heads, int k, int[] lengths, int chunk, long seed) {
        check(heads, k, lengths, chunk, seed, 0);
    }

    /**
     * @param lengths     positions held per sequence (its last query sits at length - 1); sequence 1 shares
     *                    sequence 0's first pages
     * @param chunk       prefill rows of sequence 1 in the step (ending at its last position)
     * @param wideEvery   0, or every this many keys (from the sixth) one whose second block is 64 times larger
     */
    private void check(int heads, int k, int[] lengths, int chunk, long seed, int wideEvery) {
        Random rnd = new Random(seed);
        KindLayout kind = KV.kind(CacheKind.C4_INDEXER_K);
        long rowBytes = KV.bucket(kind.bucket()).rowBytes();
        EntryLayout layout = EntryLayout.of(kind, rowBytes);
        int epp = layout.entriesPerPage();
        int seqs = lengths.length;
        int maxEntries = 0;
        for (int len : lengths) {
            maxEntries = Math.max(maxEntries, len / 4);
        }
        int tableStride = (maxEntries + epp - 1) / epp;
        int shared = lengths.length > 1 ? Math.min(lengths[0], lengths[1]) / 4 / epp / 2 : 0;  // shared pages
        int[] table = new int[seqs * tableStride];
        List<Integer> free = new ArrayList<>();
        for (int p = 0; p < seqs * tableStride; p++) {
            free.add(p);
        }
        java.util.Collections.shuffle(free, rnd);
        int pages = 0;
        for (int s = 0; s < seqs; s++) {
            for (int v = 0; v < tableStride; v++) {
                table[s * tableStride + v] = s == 1 && v < shared ? table[v] : free.get(pages++);
            }
        }
        PagedEntries pool = new PagedEntries(layout, seqs * tableStride, false);
        Set<Long> written = new HashSet<>();
        for (int s = 0; s < seqs; s++) {
            for (int j = 0; j < lengths[s] / 4; j++) {
                long slot = (long) table[s * tableStride + j / epp] * epp + j % epp;
                if (written.add(slot)) {
                    pool.write(slot, PagedEntries.indexerRow(rnd, wideEvery > 0 && j % wideEvery == 5 ? 64f : 1f));
                }
            }
        }
        // the step's queries: the last `chunk` positions of sequence 1, one decode row of every other one
        List<int[]> rows = new ArrayList<>();   // {position, sequence}
        for (int s = 0; s < seqs; s++) {
            int n = s == 1 ? chunk : 1;
            for (int t = lengths[s] - n; t < lengths[s]; t++) {
                rows.add(new int[]{t, s});
            }
        }
        int q = rows.size();
        int[] pos = new int[q];
        int[] seqOf = new int[q];
        for (int i = 0; i < q; i++) {
            pos[i] = rows.get(i)[0];
            seqOf[i] = rows.get(i)[1];
        }
        int width = heads * 128;
        float[] qv = new float[q * width];
        short[] qBits = new short[q * width];
        for (int i = 0; i < qv.length; i++) {
            qv[i] = bf16Random(rnd, 1f);
            qBits[i] = bits(qv[i]);
        }
        float[] wv = new float[q * heads];
        short[] wBits = new short[q * heads];
        for (int i = 0; i < wv.length; i++) {
            wv[i] = bf16Random(rnd, 1f);
            wBits[i] = bits(wv[i]);
        }
        Rope rope = compressedRope();
        float scale = IndexerMath.weightScale(heads, 128);

        // ---- CPU: the backend's own arithmetic ----
        float[] cos = new float[32];
        float[] sin = new float[32];
        float[] qCpu = qv.clone();
        float[] wCpu = new float[q * heads];
        int maxVisible = 0;
        for (int i = 0; i < q; i++) {
            rope.angles(pos[i], cos, sin);
            IndexerMath.prepareQuery(qCpu, i * width, heads, 128, 64, cos, sin, 0);
            for (int h = 0; h < heads; h++) {
                wCpu[i * heads + h] = IndexerMath.weight(wv[i * heads + h], scale);
            }
            maxVisible = Math.max(maxVisible, (pos[i] + 1) / 4);
        }
        int scoreStride = (maxVisible + 7) / 8 * 8;

        // ---- GPU ----
        int listStride = 128 + k;
        try (DeviceBuffer dPool = pool.upload(); DeviceBuffer dTable = DeviceBuffer.of(table);
             DeviceBuffer dPos = DeviceBuffer.of(pos); DeviceBuffer dSeq = DeviceBuffer.of(seqOf);
             DeviceBuffer dQ = DeviceBuffer.of(qBits); DeviceBuffer dW = DeviceBuffer.of(wBits);
             DeviceBuffer dCs = DeviceBuffer.of(RopeTables.cosSin(ropeFreqs(rope), pos));
             DeviceBuffer dCodes = DeviceBuffer.allocate((long) q * width);
             DeviceBuffer dScales = DeviceBuffer.allocate(4L * q * heads * 4);
             DeviceBuffer dWout = DeviceBuffer.allocate(4L * q * heads);
             DeviceBuffer dScores = DeviceBuffer.allocate(2L * q * scoreStride);
             DeviceBuffer dIdx = DeviceBuffer.allocate(4L * q * k);
             DeviceBuffer dList = DeviceBuffer.allocate(4L * q * listStride)) {
            dList.fill(0x7f);
            SparseKernels.prepareQueries(new IndexerQueries(dQ.address(), dW.address(), dCs.address(), dCodes.address(),
                    dScales.address(), dWout.address(), q, heads, scale), 0);
            SparseKernels.scores(new IndexerScores(dCodes.address(), dScales.address(), dWout.address(), heads,
                    dPos.address(), dSeq.address(), dTable.address(), tableStride, dPool.address(), layout,
                    dScores.address(), scoreStride, q, maxVisible), 0);
            SparseKernels.topK(new TopK(dScores.address(), scoreStride, dPos.address(), k, dIdx.address(), q, maxVisible,
                    new SelectionTarget(dList.address(), listStride, 128, 1, dSeq.address(), dTable.address(),
                            tableStride, epp)), 0);
            FusedKernels.synchronize();
            byte[] codes = dCodes.downloadBytes(q * width);
            float[] qScales = dScales.downloadFloats(q * heads * 4);
            float[] wGpu = dWout.downloadFloats(q * heads);
            short[] scores = dScores.downloadShorts(q * scoreStride);
            int[] idx = dIdx.downloadInts(q * k);
            int[] list = dList.downloadInts(q * listStride);

            // prepared queries and weights: identical values
            for (int i = 0; i < q * width; i++) {
                float g = codes[i] * 0.5f * qScales[i / 32];
                assertThat(g).as("prepared query value %d", i).isEqualTo(qCpu[i]);
            }
            assertThat(wGpu).isEqualTo(wCpu);

            float[] keys = new float[maxVisible * 128];
            int tied = 0;
            for (int i = 0; i < q; i++) {
                int s = seqOf[i];
                int visible = (pos[i] + 1) / 4;
                for (int j = 0; j < visible; j++) {
                    long slot = (long) table[s * tableStride + j / epp] * epp + j % epp;
                    System.arraycopy(pool.read(slot), 0, keys, j * 128, 128);
                }
                float[] cpuScores = new float[visible];
                for (int j = 0; j < visible; j++) {
                    cpuScores[j] = IndexerMath.score(qCpu, i * width, wCpu, i * heads, keys, j * 128, heads, 128);
                    assertThat(Bf16.toFloat(scores[i * scoreStride + j])).as("score of row %d entry %d", i, j)
                            .isEqualTo(cpuScores[j]);
                }
                int kk = Math.min(k, visible);
                int[] cpuSel = new int[kk];
                IndexerMath.topK(cpuScores, visible, kk, cpuSel, 0);
                Set<Integer> want = new HashSet<>();
                Set<Integer> wantSlots = new HashSet<>();
                for (int j : cpuSel) {
                    want.add(j);
                    wantSlots.add(SparseKernels.tagged(1, (long) table[s * tableStride + j / epp] * epp + j % epp));
                }
                Set<Integer> got = new HashSet<>();
                Set<Integer> gotSlots = new HashSet<>();
                for (int e = 0; e < kk; e++) {
                    got.add(idx[i * k + e]);
                    gotSlots.add(list[i * listStride + 128 + e]);
                }
                for (int e = kk; e < k; e++) {
                    assertThat(idx[i * k + e]).isEqualTo(-1);
                    assertThat(list[i * listStride + 128 + e]).isEqualTo(-1);
                }
                assertThat(got).as("top-k of row %d (position %d)", i, pos[i]).isEqualTo(want);
                assertThat(gotSlots).as("attention list entries of row %d", i).isEqualTo(wantSlots);
                if (kk < visible && cpuScores[cpuSel[kk - 1]] == maxNotSelected(cpuScores, want)) {
                    tied++;
                }
            }
            System.out.printf("indexer %d heads, top-%d, %d rows (prefill chunk %d + decode), up to %d candidates: "
                    + "queries, scores and selections identical to the CPU backend (%d rows with a tie at the cut)%n",
                    heads, k, q, chunk, maxVisible, tied);
        }
    }

    private static float maxNotSelected(float[] scores, Set<Integer> selected) {
        float m = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < scores.length; j++) {
            if (!selected.contains(j)) {
                m = Math.max(m, scores[j]);
            }
        }
        return m;
    }
}
