/**
 * The KV-cache contract between the platform's cache manager and every backend: which cache kinds a
 * DeepSeek-V4 model has, the byte format of one entry of each kind, and how entries are laid out in the
 * pages of the three page-size buckets ({@link io.strata.kv.KvLayout}). The manager decides which page of
 * which bucket holds what; a backend owns the bytes and addresses them with
 * {@link io.strata.kv.KvLayout#dataOffset} / {@link io.strata.kv.KvLayout#scaleOffset}. No Spring here.
 */
package io.strata.kv;
