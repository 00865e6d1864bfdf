package io.strata.model.config;

/**
 * Manifold-constrained hyper-connections: {@code hc_mult} parallel residual streams.
 *
 * @param mult           streams ({@code hc_mult}, 4)
 * @param sinkhornIters  Sinkhorn normalisation rounds ({@code hc_sinkhorn_iters}, 20)
 * @param eps            {@code hc_eps}
 */
public record HyperConnectionConfig(int mult, int sinkhornIters, double eps) {

    /** Rows of {@code hc_*_fn} / {@code hc_*_base}: pre (mult) + post (mult) + comb (mult²) = (2+mult)·mult. */
    public int mixCount() {
        return (2 + mult) * mult;
    }
}
