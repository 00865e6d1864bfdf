package io.strata.platform.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A small paged KV cache for engine tests: fixed-size pages, reference counts, prefix caching of full
 * pages by chained content hash, LRU reuse of cached-but-free pages. It checks the invariants the
 * engine relies on (no double free, no page used twice) and throws when they break.
 */
public final class TestPagedKvCache implements KvCache {
    private final int pageTokens;
    private final int totalPages;
    private final int[] refs;
    private final long[] pageHash;
    private final Deque<Integer> free = new ArrayDeque<>();
    private final LinkedHashSet<Integer> cachedFree = new LinkedHashSet<>();
    private final Map<Long, Integer> byHash = new HashMap<>();
    private int allocFailuresToInject;

    private static final class State {
        final List<Integer> pages = new ArrayList<>();
        int hashedPages;
        long lastHash = 17;
    }

    public TestPagedKvCache(int pageTokens, int totalPages) {
        this.pageTokens = pageTokens;
        this.totalPages = totalPages;
        this.refs = new int[totalPages];
        this.pageHash = new long[totalPages];
        Arrays.fill(pageHash, 0);
        for (int i = 0; i < totalPages; i++) {
            free.add(i);
        }
    }

    private static State state(Sequence s) {
        if (s.kvState() == null) {
            s.kvState(new State());
        }
        return (State) s.kvState();
    }

    @Override
    public synchronized int acquirePrefix(Sequence seq) {
        State st = state(seq);
        if (!st.pages.isEmpty()) {
            throw new IllegalStateException(seq.id() + ": acquirePrefix with pages held");
        }
        long h = 17;
        int hit = 0;
        int fullPages = (seq.length() - 1) / pageTokens;
        for (int p = 0; p < fullPages; p++) {
            h = chain(h, seq, p);
            Integer page = byHash.get(h);
            if (page == null) {
                break;
            }
            take(page);
            st.pages.add(page);
            st.hashedPages = p + 1;
            st.lastHash = h;
            hit += pageTokens;
        }
        return hit;
    }

    private long chain(long prev, Sequence seq, int page) {
        long h = prev * 1_000_003L + Objects.hashCode(seq.cacheSalt());
        for (int i = page * pageTokens; i < (page + 1) * pageTokens; i++) {
            h = h * 31 + seq.token(i);
        }
        return h == 0 ? 1 : h;
    }

    private void take(int page) {
        if (refs[page] == 0) {
            cachedFree.remove(page);
            free.remove(page);
        }
        refs[page]++;
    }

    @Override
    public synchronized boolean allocate(Sequence seq, int numNew) {
        if (allocFailuresToInject > 0) {
            allocFailuresToInject--;
            return false;
        }
        State st = state(seq);
        int needPages = (seq.numComputed() + numNew + pageTokens - 1) / pageTokens - st.pages.size();
        if (needPages <= 0) {
            return true;
        }
        if (needPages > free.size() + cachedFree.size()) {
            return false;
        }
        for (int i = 0; i < needPages; i++) {
            Integer page = free.pollFirst();
            if (page == null) {
                page = cachedFree.iterator().next();
                cachedFree.remove(page);
                byHash.remove(pageHash[page]);
                pageHash[page] = 0;
            }
            if (refs[page] != 0) {
                throw new IllegalStateException("page " + page + " handed out twice");
            }
            refs[page] = 1;
            st.pages.add(page);
        }
        return true;
    }

    @Override
    public synchronized void committed(Sequence seq) {
        State st = state(seq);
        int full = seq.numComputed() / pageTokens;
        while (st.hashedPages < full && st.hashedPages < st.pages.size()) {
            long h = chain(st.lastHash, seq, st.hashedPages);
            int page = st.pages.get(st.hashedPages);
            if (!byHash.containsKey(h)) {
                byHash.put(h, page);
                pageHash[page] = h;
            }
            st.lastHash = h;
            st.hashedPages++;
        }
    }

    @Override
    public synchronized void free(Sequence seq) {
        if (seq.kvState() == null) {
            return;
        }
        State st = (State) seq.kvState();
        for (int i = st.pages.size() - 1; i >= 0; i--) {
            int page = st.pages.get(i);
            if (refs[page] <= 0) {
                throw new IllegalStateException("double free of page " + page);
            }
            if (--refs[page] == 0) {
                if (pageHash[page] != 0) {
                    cachedFree.add(page);
                } else {
                    free.addLast(page);
                }
            }
        }
        seq.kvState(null);
    }

    @Override
    public boolean canEverFit(int tokens) {
        return (tokens + pageTokens - 1) / pageTokens <= totalPages;
    }

    @Override
    public synchronized Usage usage() {
        long used = 0;
        for (int r : refs) {
            if (r > 0) {
                used++;
            }
        }
        return new Usage(totalPages, used, cachedFree.size(), free.size());
    }

    /** Makes the next {@code n} allocations fail, as an exhausted pool would. */
    public synchronized void failNextAllocations(int n) {
        allocFailuresToInject = n;
    }
}
