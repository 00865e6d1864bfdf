package io.strata.platform.engine.kv;

/**
 * What a cached page holds: the content of group {@code group} for the block named by {@code hash};
 * {@code sub} is the page's index inside the block for window kinds with several pages per block.
 */
record CacheKey(int group, BlockHash hash, int sub) {
}
