package io.strata.kv;

/**
 * One page-size bucket.
 *
 * @param bucket   which bucket
 * @param rowBytes bytes of one page index: every layer of the owning group, each in its own slot
 */
public record BucketLayout(PageBucket bucket, long rowBytes) {
}
