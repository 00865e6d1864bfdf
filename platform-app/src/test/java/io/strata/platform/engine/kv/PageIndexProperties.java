package io.strata.platform.engine.kv;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The open-addressing page index against a HashMap, with deliberately colliding fingerprints. */
class PageIndexProperties {

    @Property(tries = 200)
    void behavesLikeAMap(@ForAll @Size(max = 400) List<@IntRange(min = 0, max = 63) Integer> ops) {
        int capacity = 32;
        PageIndex index = new PageIndex(capacity);
        CacheKey[] keys = new CacheKey[capacity];
        Map<Integer, Integer> model = new HashMap<>();
        // few distinct hashes so probe chains are long and wrap around
        BlockHash[] hashes = {new BlockHash(1, 2, 3, 4), new BlockHash(1, 2, 3, 5), new BlockHash(7, 7, 7, 7)};
        for (int op : ops) {
            int id = op % 16;
            CacheKey k = new CacheKey(id % 3, hashes[id % 3], id);
            Integer page = model.get(id);
            assertThat(index.get(k, keys)).isEqualTo(page == null ? -1 : page);
            if (op < 32 && page == null) {
                int free = -1;
                for (int p = 0; p < capacity; p++) {
                    if (keys[p] == null) {
                        free = p;
                        break;
                    }
                }
                assertThat(index.putIfAbsent(k, free, keys)).isTrue();
                keys[free] = k;
                model.put(id, free);
            } else if (op >= 32 && page != null) {
                index.remove(keys[page], page);
                keys[page] = null;
                model.remove(id);
            } else if (page != null) {
                assertThat(index.putIfAbsent(new CacheKey(id % 3, hashes[id % 3], id), 31 - page, keys)).isFalse();
            }
        }
        for (Map.Entry<Integer, Integer> e : model.entrySet()) {
            int id = e.getKey();
            assertThat(index.get(new CacheKey(id % 3, hashes[id % 3], id), keys)).isEqualTo(e.getValue());
        }
    }
}
