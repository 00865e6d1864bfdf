package io.strata.backend.cuda;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;
import io.strata.model.format.Bf16;
import io.strata.backend.cpu.ops.Hadamard;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cuda.FusedKernels.CompressorStep;
import io.strata.backend.cuda.FusedKernels.StatePaging;
import io.strata.backend.cuda.FusedKernels.Variant;
import io.strata.kv.CacheKind;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * F1 (compressor + RMSNorm + RoPE + quantise + paged insert) against a CPU reference built from the
 * CPU backend's primitives. Several sequences are driven through mixed steps (chunked prefill and
 * decode in one launch); every completed entry must equal the reference's one-shot compression of the
 * whole sequence, and the state pages must hold exactly what the next step needs.
 */
class CompressorParityTest {
    private static final float EPS = 1e-6f;
    private static final KvLayout KV = KvLayout.of(KvModelShape.synthetic("parity", 2, 2), KvPrecision.DEFAULT);

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    /** One launch: for each sequence, how many new tokens it brings (0 = not in this step). */
    record Step(int... tokensPerSeq) {
    }

    @Test
    void mainC4ChunkedPrefillAndDecode() {
        check(512, 4, new int[]{40, 23, 9},
                List.of(new Step(13, 7, 1), new Step(10, 1, 1), new Step(1, 1, 1), new Step(16, 14, 6)));
    }

    @Test
    void mainC128ChunkedPrefillAndDecode() {
        check(512, 128, new int[]{400, 260},
                List.of(new Step(200, 127), new Step(60, 1), new Step(1, 1), new Step(139, 131)));
    }

    @Test
    void indexerC4ChunkedPrefillAndDecode() {
        check(128, 4, new int[]{40, 23, 9},
                List.of(new Step(13, 7, 1), new Step(10, 1, 1), new Step(1, 1, 1), new Step(16, 14, 6)));
    }

    /**
     * Prefix caching keeps the compressor state just before each 256-position boundary (positions 252..255
     * for ratio 4): a chunk crossing the boundary writes it where the state page is mapped, and writes
     * nothing where the cache manager mapped no page (-1) for it.
     */
    @Test
    void mainC4BoundaryWindowsKeptWhereMapped() {
        check(512, 4, new int[]{300, 290}, List.of(new Step(290, 270), new Step(1, 1), new Step(9, 20)), 253);
    }

    @Test
    void indexerC4BoundaryWindowsKeptWhereMapped() {
        check(128, 4, new int[]{300, 290}, List.of(new Step(290, 270), new Step(1, 1), new Step(9, 20)), 253);
    }

    // ------------------------------------------------------------------------------------------------

    private record Sequence(int length, float[][] kv, float[][] score) {
    }

    private void check(int hd, int ratio, int[] lengths, List<Step> steps) {
        check(hd, ratio, lengths, steps, -1);
    }

    /** @param unmappedInLast a position whose state page the last sequence has no mapping for (-1: none) */
    private void check(int hd, int ratio, int[] lengths, List<Step> steps, int unmappedInLast) {
        int coff = ratio == 4 ? 2 : 1;
        int width = coff * hd;
        int rowStride = width + 4;  // exercise a row stride wider than the row
        Random rnd = new Random(8_001L + hd + ratio);
        List<Sequence> seqs = new ArrayList<>();
        for (int len : lengths) {
            float[][] kv = new float[len][width];
            float[][] sc = new float[len][width];
            for (int p = 0; p < len; p++) {
                for (int c = 0; c < width; c++) {
                    kv[p][c] = (float) rnd.nextGaussian() * 0.7f;
                    sc[p][c] = (float) rnd.nextGaussian() * 1.5f;
                }
            }
            seqs.add(new Sequence(len, kv, sc));
        }
        float[] ape = new float[ratio * width];
        for (int i = 0; i < ape.length; i++) {
            ape[i] = (float) rnd.nextGaussian() * 0.3f;
        }
        float[] weight = new float[hd];
        for (int i = 0; i < hd; i++) {
            weight[i] = 0.5f + rnd.nextFloat();
        }
        Rope rope = compressedRope();

        CacheKind cacheKind = hd == 128 ? CacheKind.C4_INDEXER_K : ratio == 4 ? CacheKind.C4A_KV : CacheKind.C128A_KV;
        CacheKind stateKind = hd == 128 ? CacheKind.C4_INDEXER_STATE : ratio == 4 ? CacheKind.C4_STATE : CacheKind.C128_STATE;
        KindLayout ck = KV.kind(cacheKind);
        KindLayout sk = KV.kind(stateKind);
        EntryLayout layout = EntryLayout.of(ck, KV.bucket(ck.bucket()).rowBytes());
        StatePaging paging = StatePaging.of(sk, KV.bucket(sk.bucket()).rowBytes());

        int unmappedPage = unmappedInLast < 0 ? -1 : (int) sk.pageIndex(unmappedInLast);
        Run fused = new Run(Variant.FUSED, hd, ratio, seqs, steps, ape, weight, ropeFreqs(rope), layout, paging, rowStride, sk,
                unmappedPage);
        Run unfused = new Run(Variant.UNFUSED, hd, ratio, seqs, steps, ape, weight, ropeFreqs(rope), layout, paging, rowStride, sk,
                unmappedPage);
        if (ratio == 4) {
            // same pooling order in both paths: bit-identical
            assertThat(unfused.cache).as("unfused cache equals fused cache").isEqualTo(fused.cache);
        }
        assertThat(unfused.state).as("unfused state equals fused state").isEqualTo(fused.state);

        // ---- completed entries against the one-shot CPU reference ----
        List<Float> gpuVals = new ArrayList<>();
        List<Float> cpuVals = new ArrayList<>();
        int bytesExact = 0;
        int bytesTotal = 0;
        int entries = 0;
        for (int s = 0; s < seqs.size(); s++) {
            Sequence seq = seqs.get(s);
            int done = fused.processed[s];
            for (int b = 0; (b + 1) * ratio <= done; b++) {
                float[] x = referenceEntry(seq, b, hd, ratio, ape, weight, rope);
                long slot = fused.cacheSlot(s, b);
                int data = (int) layout.dataOffset(slot);
                int scales = (int) layout.scaleOffset(slot);
                entries++;
                if (hd == 512) {
                    for (int blk = 0; blk < 7; blk++) {
                        float sc = ActivationQuant.fp8BlockScale(x, blk * 64, 64);
                        float gs = E8m0.decode(fused.cache[scales + blk]);
                        for (int i = blk * 64; i < blk * 64 + 64; i++) {
                            int g = fused.cache[data + i] & 0xff;
                            int c = fp8Code(x[i], sc);
                            gpuVals.add(Fp8E4m3.decode((byte) g) * gs);
                            cpuVals.add(Fp8E4m3.decode((byte) c) * sc);
                            bytesTotal++;
                            if (g == c && gs == sc) {
                                bytesExact++;
                            }
                        }
                    }
                    assertThat(fused.cache[scales + 7]).isZero();
                    for (int i = 0; i < 64; i++) {
                        int lo = fused.cache[data + 448 + 2 * i] & 0xff;
                        int hi = fused.cache[data + 449 + 2 * i] & 0xff;
                        gpuVals.add(value((short) (lo | hi << 8)));
                        cpuVals.add(x[448 + i]);
                    }
                } else {
                    for (int blk = 0; blk < 4; blk++) {
                        float sc = ActivationQuant.fp4BlockScale(x, blk * 32, 32);
                        float gs = E8m0.decode(fused.cache[scales + blk]);
                        for (int i = blk * 32; i < blk * 32 + 32; i++) {
                            int byteVal = fused.cache[data + i / 2] & 0xff;
                            int g = (i & 1) == 0 ? byteVal & 0xf : byteVal >> 4;
                            float q = Math.max(-6f, Math.min(6f, x[i] / sc));
                            int c = Fp4E2m1.encode(q);
                            gpuVals.add(Fp4E2m1.decode(g) * gs);
                            cpuVals.add(Fp4E2m1.decode(c) * sc);
                            bytesTotal++;
                            if (g == c && gs == sc) {
                                bytesExact++;
                            }
                        }
                    }
                }
            }
        }
        float[] g = new float[gpuVals.size()];
        float[] c = new float[cpuVals.size()];
        for (int i = 0; i < g.length; i++) {
            g[i] = gpuVals.get(i);
            c[i] = cpuVals.get(i);
        }
        double err = relativeError(g, c);
        System.out.printf("F1 head %d ratio %d: %d entries, %d/%d quantised codes identical to the CPU's, "
                + "dequantised relative error %.3e%n", hd, ratio, entries, bytesExact, bytesTotal, err);
        assertThat(entries).isGreaterThan(0);
        assertThat(err).isLessThanOrEqualTo(1e-2);
        assertThat((double) bytesExact / bytesTotal).isGreaterThan(0.97);

        // ---- state pages: exactly (kv, score + ape) of every position the next step still needs ----
        int checked = 0;
        for (int s = 0; s < seqs.size(); s++) {
            long computed = fused.processed[s];
            long start = sk.window().windowStart(computed);
            for (long p = start; p < computed; p++) {
                float[] st = fused.stateEntry(s, (int) p, width);
                for (int ch = 0; ch < width; ch++) {
                    assertThat(st[ch]).isEqualTo(seqs.get(s).kv[(int) p][ch]);
                    assertThat(st[width + ch]).isEqualTo(seqs.get(s).score[(int) p][ch] + ape[(int) (p % ratio) * width + ch]);
                }
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(0);

        // ---- boundary windows: the state before each crossed 256-position boundary, where mapped ----
        if (ratio == 4) {
            int kept = 0;
            for (int s = 0; s < seqs.size(); s++) {
                for (int boundary = 256; boundary <= fused.processed[s]; boundary += 256) {
                    for (int p = boundary - 4; p < boundary; p++) {
                        boolean unmapped = s == seqs.size() - 1 && sk.pageIndex(p) == unmappedPage;
                        if (unmapped) {
                            continue;  // no page: nothing to write (and nothing was written anywhere else)
                        }
                        float[] st = fused.stateEntry(s, p, width);
                        for (int ch = 0; ch < width; ch++) {
                            assertThat(st[ch]).as("boundary state kv, seq %d pos %d", s, p)
                                    .isEqualTo(seqs.get(s).kv[p][ch]);
                            assertThat(st[width + ch]).isEqualTo(seqs.get(s).score[p][ch] + ape[(p % ratio) * width + ch]);
                        }
                        kept++;
                    }
                }
            }
            System.out.printf("F1 head %d ratio %d: %d boundary-window state positions kept%n", hd, ratio, kept);
            if (unmappedInLast >= 0) {
                assertThat(kept).isGreaterThan(0);
            }
        }
    }

    /** The reference's compression of block b (REF Compressor, prefill form), then norm, RoPE, rotation. */
    private static float[] referenceEntry(Sequence seq, int b, int hd, int ratio, float[] ape, float[] weight, Rope rope) {
        int coff = ratio == 4 ? 2 : 1;
        int width = coff * hd;
        int n = coff * ratio;
        int end = b * ratio + ratio - 1;
        float[] x = new float[hd];
        float[] scores = new float[n];
        float[] values = new float[n];
        for (int c = 0; c < hd; c++) {
            float max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                int q = end - n + 1 + j;
                int off = coff == 2 && j >= ratio ? hd : 0;
                if (q < 0) {
                    scores[j] = Float.NEGATIVE_INFINITY;
                    values[j] = 0f;
                } else {
                    scores[j] = seq.score[q][off + c] + ape[(q % ratio) * width + off + c];
                    values[j] = seq.kv[q][off + c];
                }
                max = Math.max(max, scores[j]);
            }
            float sum = 0f;
            float[] e = new float[n];
            for (int j = 0; j < n; j++) {
                e[j] = (float) Math.exp(scores[j] - max);
                sum += e[j];
            }
            float acc = 0f;
            for (int j = 0; j < n; j++) {
                acc += (e[j] / sum) * values[j];
            }
            x[c] = Bf16.round(acc);
        }
        RmsNorm.apply(x, 0, weight, EPS, x, 0, hd);
        float[] cos = new float[32];
        float[] sin = new float[32];
        rope.angles((long) b * ratio, cos, sin);
        Rope.rotate(x, hd - 64, cos, sin, false);
        if (hd == 128) {
            Hadamard.transform(x, 0, 128, (float) (1 / Math.sqrt(128)));
        }
        return x;
    }

    /** Drives the steps through one variant and keeps the resulting cache and state bytes. */
    private static final class Run {
        final byte[] cache;
        final byte[] state;
        final int[] processed;
        private final int cachePagesPerSeq;
        private final int statePagesPerSeq;
        private final StatePaging paging;
        private final KindLayout stateKind;
        private final int entriesPerPage;

        Run(Variant variant, int hd, int ratio, List<Sequence> seqs, List<Step> steps, float[] ape, float[] weight,
            float[] freqs, EntryLayout layout, StatePaging paging, int rowStride, KindLayout stateKind,
            int unmappedPageOfLast) {
            this.paging = paging;
            this.stateKind = stateKind;
            this.entriesPerPage = layout.entriesPerPage();
            int maxLen = seqs.stream().mapToInt(Sequence::length).max().orElseThrow();
            cachePagesPerSeq = (maxLen / ratio) / entriesPerPage + 1;
            statePagesPerSeq = (int) stateKind.pageIndex(maxLen) + 1;
            int nseq = seqs.size();
            long cacheBytes = (long) (nseq * cachePagesPerSeq + 1) * layout.pageBytes();
            long stateBytes = (long) (nseq * statePagesPerSeq + 1) * paging.pageBytes();
            // physical state page of (seq, virtual page): interleaved and offset, so a wrong table lookup shows;
            // a window table row starts with its first virtual page (0 here), then the pages
            int tableStride = statePagesPerSeq + 1;
            int[] table = new int[nseq * tableStride];
            for (int s = 0; s < nseq; s++) {
                for (int v = 0; v < statePagesPerSeq; v++) {
                    boolean unmapped = s == nseq - 1 && v == unmappedPageOfLast;
                    table[s * tableStride + 1 + v] = unmapped ? -1 : statePage(s, v, nseq);
                }
            }
            processed = new int[nseq];
            int coff = ratio == 4 ? 2 : 1;
            int width = coff * hd;
            try (DeviceBuffer dCache = DeviceBuffer.allocate(cacheBytes);
                 DeviceBuffer dState = DeviceBuffer.allocate(stateBytes);
                 DeviceBuffer dTable = DeviceBuffer.of(table); DeviceBuffer dApe = DeviceBuffer.of(ape);
                 DeviceBuffer dWeight = DeviceBuffer.of(weight)) {
                dCache.fill(0x5a);
                dState.fill(0x7f);  // NaN-ish floats where nothing was written
                for (Step step : steps) {
                    List<Integer> tokSeq = new ArrayList<>();
                    List<Integer> tokPos = new ArrayList<>();
                    int[] firstTok = new int[nseq];
                    int[] firstPos = new int[nseq];
                    int[] count = new int[nseq];
                    for (int s = 0; s < nseq; s++) {
                        int n = Math.min(step.tokensPerSeq()[s], seqs.get(s).length() - processed[s]);
                        firstTok[s] = tokSeq.size();
                        firstPos[s] = processed[s];
                        count[s] = n;
                        for (int i = 0; i < n; i++) {
                            tokSeq.add(s);
                            tokPos.add(processed[s] + i);
                        }
                    }
                    int T = tokSeq.size();
                    float[] kv = new float[T * rowStride];
                    float[] sc = new float[T * rowStride];
                    int[] pos = new int[T];
                    int[] ropePos = new int[T];
                    int[] seqOf = new int[T];
                    long[] out = new long[T];
                    for (int t = 0; t < T; t++) {
                        int s = tokSeq.get(t);
                        int p = tokPos.get(t);
                        System.arraycopy(seqs.get(s).kv()[p], 0, kv, t * rowStride, width);
                        System.arraycopy(seqs.get(s).score()[p], 0, sc, t * rowStride, width);
                        pos[t] = p;
                        ropePos[t] = Math.max(0, p - ratio + 1);
                        seqOf[t] = s;
                        out[t] = (p + 1) % ratio == 0 ? cacheSlot(s, p / ratio) : -1;
                    }
                    try (DeviceBuffer dKv = DeviceBuffer.of(kv); DeviceBuffer dSc = DeviceBuffer.of(sc);
                         DeviceBuffer dCs = DeviceBuffer.of(RopeTables.cosSin(freqs, ropePos));
                         DeviceBuffer dPos = DeviceBuffer.of(pos); DeviceBuffer dSeq = DeviceBuffer.of(seqOf);
                         DeviceBuffer dFirstTok = DeviceBuffer.of(firstTok);
                         DeviceBuffer dFirstPos = DeviceBuffer.of(firstPos); DeviceBuffer dCount = DeviceBuffer.of(count);
                         DeviceBuffer dOut = DeviceBuffer.of(out);
                         DeviceBuffer ws = DeviceBuffer.allocate(FusedKernels.compressWorkspaceBytes(T, hd))) {
                        FusedKernels.compressInsert(new CompressorStep(dKv.address(), dSc.address(), rowStride,
                                dApe.address(), dWeight.address(), dCs.address(), dPos.address(), dSeq.address(),
                                dFirstTok.address(), dFirstPos.address(), dCount.address(), dTable.address(),
                                tableStride, dState.address(), paging, dOut.address(), dCache.address(), layout,
                                T, ratio, hd, EPS), variant, ws.address(), 0);
                        FusedKernels.synchronize();
                    }
                    for (int s = 0; s < nseq; s++) {
                        processed[s] += count[s];
                    }
                }
                cache = dCache.downloadBytes((int) cacheBytes);
                state = dState.downloadBytes((int) stateBytes);
            }
        }

        private static int statePage(int seq, int virtualPage, int nseq) {
            return 1 + virtualPage * nseq + seq;
        }

        long cacheSlot(int seq, int entry) {
            int page = 1 + seq * cachePagesPerSeq + entry / entriesPerPage;
            return (long) page * entriesPerPage + entry % entriesPerPage;
        }

        float[] stateEntry(int seq, int pos, int width) {
            int page = statePage(seq, (int) stateKind.pageIndex(pos), processed.length);
            int entry = (int) ((pos % paging.spanPositions()) % paging.positionsPerPage());
            long off = (long) page * paging.pageBytes() + (long) entry * 2 * width * 4;
            float[] out = new float[2 * width];
            java.nio.ByteBuffer bb = java.nio.ByteBuffer.wrap(state, (int) off, 8 * width).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < out.length; i++) {
                out[i] = bb.getFloat();
            }
            return out;
        }
    }
}
