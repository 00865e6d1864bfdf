package io.strata.backend.cuda;

import io.strata.kv.CacheKind;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The kernels' slot addressing must land exactly where {@link KvLayout} says an entry lives. */
class EntryLayoutTest {
    private static final KvLayout KV = KvLayout.of(KvModelShape.synthetic("layout", 3, 2), KvPrecision.DEFAULT);

    @Test
    void entryLayoutFollowsKvLayout() {
        for (CacheKind kind : List.of(CacheKind.C4A_KV, CacheKind.C128A_KV, CacheKind.C4_INDEXER_K)) {
            KindLayout k = KV.kind(kind);
            long row = KV.bucket(k.bucket()).rowBytes();
            EntryLayout l = EntryLayout.of(k, row);
            for (int page : new int[]{0, 3}) {
                for (int e = 0; e < k.entriesPerPage(); e++) {
                    long slot = (long) page * k.entriesPerPage() + e;
                    long pos = (long) e * kind.positionsPerEntry();
                    int layer = k.layers().getFirst();
                    var group = k.groups().getFirst();
                    assertThat(l.dataOffset(slot)).isEqualTo(KV.dataOffset(group, layer, page, pos));
                    assertThat(l.scaleOffset(slot)).isEqualTo(KV.scaleOffset(group, layer, page, pos));
                }
            }
        }
    }

    @Test
    void rejectsPagesTooSmallForTheirEntries() {
        assertThatThrownBy(() -> EntryLayout.mainSplit(64, 37_000)).hasMessageContaining("do not fit");
        assertThat(EntryLayout.mainSplit(64, 37_440).scaleBase()).isEqualTo(64 * 576);
    }
}
