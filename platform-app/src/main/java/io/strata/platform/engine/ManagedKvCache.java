package io.strata.platform.engine;

import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PageTable;
import io.strata.platform.engine.kv.PrefixMatch;
import io.strata.spi.exec.BlockTable;

/** The engine's view of the hybrid {@link KvCacheManager}: one {@link KvRequest} per sequence. */
public final class ManagedKvCache implements KvCache {
    private final KvCacheManager manager;

    public ManagedKvCache(KvCacheManager manager) {
        this.manager = manager;
    }

    public KvCacheManager manager() {
        return manager;
    }

    public KvLayout layout() {
        return manager.layout();
    }

    static KvRequest request(Sequence s) {
        return (KvRequest) s.kvState();
    }

    private KvRequest requestOf(Sequence s) {
        if (s.kvState() == null) {
            s.kvState(manager.newRequest(s.id(), s.tokens(0, s.length()), s.cacheSalt()));
        }
        return request(s);
    }

    @Override
    public int admit(Sequence seq) {
        KvRequest r = requestOf(seq);
        PrefixMatch m = manager.match(r, seq.logitsNeededFrom());
        if (!manager.canAdmit(r, m)) {
            return -1;
        }
        manager.admit(r, m);
        return Math.toIntExact(m.computeFrom());
    }

    @Override
    public boolean allocate(Sequence seq, int numNew) {
        return manager.allocate(requestOf(seq), numNew);
    }

    @Override
    public void cacheBoundaries(Sequence seq, int numNew) {
        manager.cacheBoundaryWindows(requestOf(seq), numNew, 0);
    }

    @Override
    public void committed(Sequence seq, int count) {
        manager.commit(requestOf(seq), count);
    }

    @Override
    public void appendToken(Sequence seq, int token) {
        manager.appendToken(requestOf(seq), token);
    }

    @Override
    public void release(Sequence seq) {
        KvRequest r = request(seq);
        if (r != null && r.state() == KvRequest.State.RUNNING) {
            manager.preempt(r);
        }
    }

    @Override
    public void free(Sequence seq) {
        KvRequest r = request(seq);
        if (r != null) {
            manager.free(r);
        }
    }

    @Override
    public boolean canEverFit(int tokens, int chunk) {
        return manager.canEverFit(tokens, chunk);
    }

    @Override
    public Usage usage() {
        long total = 0;
        long used = 0;
        long cached = 0;
        long free = 0;
        for (PageBucket b : PageBucket.values()) {
            if (!manager.layout().hasBucket(b)) {
                continue;
            }
            KvCacheManager.BucketUsage u = manager.usage(b);
            total += u.total();
            used += u.used();
            cached += u.cached();
            free += u.free();
        }
        return new Usage(total, used, cached, free);
    }

    /**
     * Block tables of a sequence in the execution SPI's shape: per kind group, the held pages from the
     * table's base on, so a window group's table stays window-sized however long the context.
     */
    BlockTable[] blockTables(Sequence seq) {
        KvRequest r = request(seq);
        int groups = manager.layout().groups().size();
        BlockTable[] out = new BlockTable[groups];
        for (int g = 0; g < groups; g++) {
            PageTable t = r.table(g);
            out[g] = new BlockTable(Math.toIntExact(t.base()), t.toArray());
        }
        return out;
    }

    int compressedWriteFrom(Sequence seq) {
        return Math.toIntExact(request(seq).compressedWriteFrom());
    }

    int windowValidFrom(Sequence seq) {
        return Math.toIntExact(request(seq).windowValidFrom());
    }
}
