package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/**
 * Manifold-constrained hyper-connections: {@code hc} residual streams are mixed into one sub-layer
 * input ({@link #pre}) and the sub-layer output is spread back ({@link #post}) through a
 * Sinkhorn-normalised {@code hc×hc} matrix. All mixing math is fp32; stream storage is bf16.
 */
public final class HyperConnection {
    private HyperConnection() {
    }

    /** The three mixing tensors of one token. {@code comb[j*hc+k]} multiplies stream j into output k. */
    public record Mix(float[] pre, float[] post, float[] comb) {
        public static Mix allocate(int hc) {
            return new Mix(new float[hc], new float[hc], new float[hc * hc]);
        }
    }

    /**
     * {@code mixes = (fn · x) * rsqrt(mean(x²) + eps)} over the flattened {@code hc·dim} streams.
     *
     * @param x     the streams of one token, {@code [hc*dim]}
     * @param fn    {@code [rows, hc*dim]} fp32
     * @param mixes out, {@code [rows]}
     */
    public static void mixes(float[] x, int xOff, int width, float[] fn, int rows, float eps, float[] mixes) {
        float inv = RmsNorm.invRms(x, xOff, width, eps);
        for (int r = 0; r < rows; r++) {
            mixes[r] = VectorMath.dot(fn, r * width, x, xOff, width) * inv;
        }
    }

    /**
     * Splits 24 (for hc 4) mixes into pre (sigmoid + eps), post (2·sigmoid) and comb
     * (row softmax + eps, then {@code iters} alternating column/row normalisations as the reference orders them).
     */
    public static void split(float[] mixes, float[] scale, float[] base, int hc, int iters, float eps, Mix out) {
        for (int i = 0; i < hc; i++) {
            out.pre[i] = sigmoid(mixes[i] * scale[0] + base[i]) + eps;
            out.post[i] = 2f * sigmoid(mixes[hc + i] * scale[1] + base[hc + i]);
        }
        float[] c = out.comb;
        for (int j = 0; j < hc; j++) {
            float max = Float.NEGATIVE_INFINITY;
            for (int k = 0; k < hc; k++) {
                int idx = j * hc + k;
                c[idx] = mixes[2 * hc + idx] * scale[2] + base[2 * hc + idx];
                max = Math.max(max, c[idx]);
            }
            float sum = 0f;
            for (int k = 0; k < hc; k++) {
                c[j * hc + k] = (float) Math.exp(c[j * hc + k] - max);
                sum += c[j * hc + k];
            }
            for (int k = 0; k < hc; k++) {
                c[j * hc + k] = c[j * hc + k] / sum + eps;
            }
        }
        normaliseColumns(c, hc, eps);
        for (int it = 1; it < iters; it++) {
            normaliseRows(c, hc, eps);
            normaliseColumns(c, hc, eps);
        }
    }

    private static void normaliseRows(float[] c, int hc, float eps) {
        for (int j = 0; j < hc; j++) {
            float s = 0f;
            for (int k = 0; k < hc; k++) {
                s += c[j * hc + k];
            }
            float d = s + eps;
            for (int k = 0; k < hc; k++) {
                c[j * hc + k] /= d;
            }
        }
    }

    private static void normaliseColumns(float[] c, int hc, float eps) {
        for (int k = 0; k < hc; k++) {
            float s = 0f;
            for (int j = 0; j < hc; j++) {
                s += c[j * hc + k];
            }
            float d = s + eps;
            for (int j = 0; j < hc; j++) {
                c[j * hc + k] /= d;
            }
        }
    }

    /** {@code y = bf16(Σ_k pre[k] · x[k])}: the sub-layer input. */
    public static void pre(float[] x, int xOff, float[] pre, int hc, int dim, float[] y, int yOff) {
        for (int d = 0; d < dim; d++) {
            float s = 0f;
            for (int k = 0; k < hc; k++) {
                s += pre[k] * x[xOff + k * dim + d];
            }
            y[yOff + d] = Bf16.round(s);
        }
    }

    /**
     * {@code next[k] = bf16(post[k]·out + Σ_j comb[j][k]·residual[j])} (comb transposed, as the reference sums
     * over its first index). {@code next} must not alias {@code residual}.
     */
    public static void post(float[] out, int outOff, float[] residual, int resOff, Mix m, int hc, int dim,
                            float[] next, int nextOff) {
        for (int k = 0; k < hc; k++) {
            float p = m.post[k];
            for (int d = 0; d < dim; d++) {
                float s = p * out[outOff + d];
                float acc = 0f;
                for (int j = 0; j < hc; j++) {
                    acc += m.comb[j * hc + k] * residual[resOff + j * dim + d];
                }
                next[nextOff + k * dim + d] = Bf16.round(s + acc);
            }
        }
    }

    /** The head's variant: {@code pre = sigmoid(mixes·scale + base) + eps}, no Sinkhorn. */
    public static void headPre(float[] mixes, float scale, float[] base, int hc, float eps, float[] pre) {
        for (int i = 0; i < hc; i++) {
            pre[i] = sigmoid(mixes[i] * scale + base[i]) + eps;
        }
    }

    public static float sigmoid(float x) {
        return (float) (1.0 / (1.0 + Math.exp(-x)));
    }
}
