package io.strata.backend.cpu.ep;

/**
 * Which rank holds which routed experts: contiguous index ranges, rank {@code r} holding
 * {@code [⌊r·E/N⌋, ⌊(r+1)·E/N⌋)} (the reference converter's split when N divides E; uneven counts differ by at
 * most one otherwise). The same on every layer, so a rank's share of every layer's experts is one range.
 * Because ranges follow rank order, "experts in index order" is "ranks in order, then each rank's experts in
 * order" — what lets the combine keep the single-rank summation order.
 */
public record ExpertPlacement(int experts, int ranks) {

    public ExpertPlacement {
        if (ranks < 1 || experts < ranks) {
            throw new IllegalArgumentException("cannot place " + experts + " experts on " + ranks
                + " ranks (each rank needs at least one)");
        }
    }

    /** First expert of rank {@code r}. */
    public int first(int r) {
        return (int) ((long) r * experts / ranks);
    }

    /** One past the last expert of rank {@code r}. */
    public int end(int r) {
        return first(r + 1);
    }

    public int count(int r) {
        return end(r) - first(r);
    }

    /** The rank holding expert {@code e}. */
    public int owner(int e) {
        if (e < 0 || e >= experts) {
            throw new IllegalArgumentException("expert " + e + " is outside [0, " + experts + ")");
        }
        int r = (int) (((long) e * ranks) / experts); // a lower bound; at most one step short
        while (end(r) <= e) {
            r++;
        }
        return r;
    }

    public boolean holds(int r, int e) {
        return e >= first(r) && e < end(r);
    }
}
