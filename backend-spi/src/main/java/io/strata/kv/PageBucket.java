package io.strata.kv;

/**
 * The three page-size classes. Each is backed by one block pool shared by every kind placed in it; the
 * compressed kinds define the sizes (LARGE: C4A main KV, MIDDLE: C4 indexer keys, SMALL: C128A main KV)
 * and the window kinds are placed where their per-request worst case costs least.
 */
public enum PageBucket {
    LARGE, MIDDLE, SMALL;

    public String metricName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
