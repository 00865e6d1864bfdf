package io.strata.kv;

import io.strata.model.config.ModelConfig;
import io.strata.model.config.ReferenceModel;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KvLayoutTest {

    static KvLayout flash(KvPrecision p) {
        return KvLayout.of(KvModelShape.of("flash", ReferenceModel.V4_FLASH.config()), p);
    }

    @Test
    void entryFormatsMatchTheSpecifiedBytes() {
        EntryFormat fp8 = EntryFormat.main(MainKvDtype.FP8, 512, 64);
        assertThat(fp8.entryBytes()).isEqualTo(584);
        assertThat(fp8.dataBytes()).isEqualTo(576);
        assertThat(fp8.scaleBytes()).isEqualTo(8);
        assertThat(EntryFormat.main(MainKvDtype.BF16, 512, 64).entryBytes()).isEqualTo(1024);
        assertThat(EntryFormat.indexer(IndexerKvDtype.BF16, 128).entryBytes()).isEqualTo(256);
        assertThat(EntryFormat.indexer(IndexerKvDtype.FP8, 128).entryBytes()).isEqualTo(132);
        assertThat(EntryFormat.indexer(IndexerKvDtype.FP4, 128).entryBytes()).isEqualTo(68);
        assertThat(EntryFormat.compressorState(2, 512).entryBytes()).isEqualTo(8192);
        assertThat(EntryFormat.compressorState(1, 512).entryBytes()).isEqualTo(4096);
        assertThat(EntryFormat.compressorState(2, 128).entryBytes()).isEqualTo(2048);
    }

    @Test
    void fp8PageIsDataRowsThenScaleRows() {
        KindLayout c4a = flash(KvPrecision.DEFAULT).kind(CacheKind.C4A_KV);
        assertThat(c4a.entriesPerPage()).isEqualTo(64);
        assertThat(c4a.rawLayerPageBytes()).isEqualTo(64 * 584);
        assertThat(c4a.dataOffset(0)).isZero();
        assertThat(c4a.dataOffset(5)).isEqualTo(5 * 576);
        assertThat(c4a.scaleOffset(0)).isEqualTo(64 * 576);
        assertThat(c4a.scaleOffset(63)).isEqualTo(64 * 576 + 63 * 8);
        assertThat(c4a.entryInPage(256 + 4 * 7 + 3)).isEqualTo(7);
    }

    @Test
    void flashFp8Fp4HasThreeBucketsAndCompressedKindsHaveOneGroupEach() {
        KvLayout l = flash(KvPrecision.DEFAULT);
        System.out.println(l);
        assertThat(l.buckets()).extracting(BucketLayout::bucket)
                .containsExactly(PageBucket.LARGE, PageBucket.MIDDLE, PageBucket.SMALL);
        assertThat(l.bucket(PageBucket.LARGE).rowBytes()).isEqualTo(21L * 37_376);
        assertThat(l.bucket(PageBucket.MIDDLE).rowBytes()).isEqualTo(21L * 4_352);
        assertThat(l.bucket(PageBucket.SMALL).rowBytes()).isEqualTo(20L * 1_216);
        assertThat(l.kind(CacheKind.C4A_KV).groups()).hasSize(1);
        assertThat(l.kind(CacheKind.C128A_KV).groups()).hasSize(1);
        assertThat(l.kind(CacheKind.C4_INDEXER_K).groups()).hasSize(1);
        assertThat(l.kind(CacheKind.SWA_KV).layers()).hasSize(44);
        // every window kind's page fits one row, and rows never overlap between layers of a group
        for (KindLayout k : l.kinds()) {
            for (KindGroup g : k.groups()) {
                assertThat((long) g.layers().size() * k.layerPageBytes()).isLessThanOrEqualTo(l.bucket(k.bucket()).rowBytes());
            }
            assertThat(k.layerPageBytes() % l.alignment()).isZero();
            assertThat(k.layerPageBytes()).isGreaterThanOrEqualTo((int) k.rawLayerPageBytes());
            assertThat(KvLayout.BLOCK_POSITIONS % k.spanPositions()).isZero();
        }
        // the per-request window/state worst case is within 16 MiB (vLLM: 26 block IDs of ~1 MiB)
        assertThat(l.windowBytesPerRequest()).isLessThanOrEqualTo(16L << 20);
        // compressed bytes per 256 positions within 3% of the ideal 584/4 + 68/4 per C4A layer + 584/128 per C128A layer
        double ideal = 256 * (21 * (584 / 4.0 + 68 / 4.0) + 20 * 584 / 128.0);
        assertThat(l.compressedBytesPerBlock() / ideal).isLessThan(1.03);
    }

    @Test
    void groupIdsAreDenseAndEveryLayerSlotIsUnique() {
        KvLayout l = flash(KvPrecision.DEFAULT);
        for (int i = 0; i < l.groups().size(); i++) {
            assertThat(l.groups().get(i).id()).isEqualTo(i);
        }
        for (KindLayout k : l.kinds()) {
            Set<Integer> seen = new HashSet<>();
            for (KindGroup g : k.groups()) {
                for (int layer : g.layers()) {
                    assertThat(seen.add(layer)).isTrue();
                }
            }
            assertThat(seen).containsExactlyInAnyOrderElementsOf(k.layers());
        }
    }

    @Test
    void byteOffsetsOfDistinctSlotsNeverOverlap() {
        KvLayout l = flash(KvPrecision.DEFAULT);
        for (KindLayout k : l.kinds()) {
            KindGroup g = k.groups().getFirst();
            long row = l.bucket(k.bucket()).rowBytes();
            long prevEnd = -1;
            for (int layer : g.layers()) {
                long first = l.dataOffset(g, layer, 3, k.firstPosition(0));
                assertThat(first).isGreaterThanOrEqualTo(3 * row).isGreaterThan(prevEnd);
                long last = l.scaleOffset(g, layer, 3, k.endPosition(0) - 1) + Math.max(1, k.format().scaleBytes());
                assertThat(last).isLessThanOrEqualTo(4 * row);
                prevEnd = first + k.rawLayerPageBytes() - 1;
            }
        }
        assertThatThrownBy(() -> l.dataOffset(l.kind(CacheKind.C4A_KV).groups().getFirst(), 3, 0, 0))
                .hasMessageContaining("layer 3 is not in group");
    }

    @Test
    void virtualPagesNeverStraddleA256Boundary() {
        KvLayout l = flash(KvPrecision.DEFAULT);
        for (KindLayout k : l.kinds()) {
            for (long v = 0; v < 4L * k.pagesPerSpan(); v++) {
                long first = k.firstPosition(v);
                long end = k.endPosition(v);
                assertThat(end).isGreaterThan(first);
                assertThat((end - 1) / 256).isEqualTo(first / 256);
                assertThat(k.pageIndex(first)).isEqualTo(v);
                assertThat(k.pageIndex(end - 1)).isEqualTo(v);
            }
        }
    }

    @Test
    void windowRules() {
        WindowRule swa = CacheKind.SWA_KV.window(128);
        assertThat(swa.windowStart(1000)).isEqualTo(873);
        assertThat(swa.windowStart(100)).isZero();
        WindowRule c4 = CacheKind.C4_STATE.window(128);
        assertThat(c4.windowStart(13)).isEqualTo(8);
        assertThat(c4.windowStart(12)).isEqualTo(8);
        WindowRule c128 = CacheKind.C128_STATE.window(128);
        assertThat(c128.windowStart(256)).isEqualTo(256);
        assertThat(c128.windowStart(383)).isEqualTo(256);
    }

    @Test
    void tinyBundledModelAndProBuild() throws Exception {
        Path dir = Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
        KvLayout tiny = KvLayout.of(KvModelShape.of("tiny", ModelConfig.parse(dir.resolve("config.json"))), KvPrecision.DEFAULT);
        assertThat(tiny.kind(CacheKind.SWA_KV).layers()).hasSize(7);
        KvLayout pro = KvLayout.of(KvModelShape.of("pro", ReferenceModel.V4_PRO.config()), KvPrecision.BF16);
        System.out.println(pro);
        assertThat(pro.kind(CacheKind.C128A_KV).layers()).hasSize(31);
        assertThat(List.of(PageBucket.values())).allMatch(pro::hasBucket);
    }
}
