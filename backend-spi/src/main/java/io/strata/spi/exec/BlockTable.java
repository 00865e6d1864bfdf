package io.strata.spi.exec;

/**
 * One request's pages of one kind group: entry {@code i} is the physical page (row of the group's bucket)
 * of virtual page {@code base + i}, or -1 when that page is not mapped; virtual pages outside
 * {@code [base, base + pages.length)} are unmapped too.
 *
 * <p>Window groups (SWA, compressor states) hold only the pages of their live window, so the engine sends
 * them with a moving {@code base} and a table whose length does not grow with the context; compressed
 * groups start at 0 and grow by one page per 256 positions.
 *
 * <p>A {@code pages} array handed to a backend is never modified afterwards: a table that changes comes in a new
 * array, so a backend may recognise a table it has seen by its array (the engine hands the same one for every
 * step in which the table did not change).
 *
 * @param base  virtual page index of {@code pages[0]}
 * @param pages physical pages, -1 = unmapped
 */
public record BlockTable(int base, int[] pages) {

    public BlockTable {
        if (base < 0) {
            throw new IllegalArgumentException("negative block table base " + base);
        }
        if (pages == null) {
            throw new IllegalArgumentException("block table pages must not be null");
        }
    }

    /** Physical page of a virtual page, or -1 when unmapped. */
    public int page(long virtualPage) {
        long i = virtualPage - base;
        return i < 0 || i >= pages.length ? -1 : pages[(int) i];
    }

    /** One past the last virtual page the table covers. */
    public int end() {
        return base + pages.length;
    }

    /** Tables that start at virtual page 0, one per group (tests, benchmarks, simple drivers). */
    public static BlockTable[] fromZero(int[][] tables) {
        BlockTable[] out = new BlockTable[tables.length];
        for (int g = 0; g < tables.length; g++) {
            out[g] = new BlockTable(0, tables[g]);
        }
        return out;
    }
}
