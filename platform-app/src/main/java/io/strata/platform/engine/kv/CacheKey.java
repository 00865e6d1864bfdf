package io.strata.platform.engine.kv;

/**
 * What a cached page holds: the content of group {@code group} for the block named by {@code hash};
 * {@code sub} is the page's index inside the block for window kinds with several pages per block.
 */
final class CacheKey {

    final int group;
    final BlockHash hash;
    final int sub;

    CacheKey(int group, BlockHash hash, int sub) {
        this.group = group;
        this.hash = hash;
        this.sub = sub;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheKey k && k.group == group && k.sub == sub && k.hash.equals(hash);
    }

    @Override
    public int hashCode() {
        return (int) hash.a() * 31 + group * 17 + sub;
    }

    @Override
    public String toString() {
        return "CacheKey[" + group + ", " + hash + ", " + sub + "]";
    }
}
