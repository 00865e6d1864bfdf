package io.strata.backend.cpu.ep;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalCollectiveTest {

    @Test
    void allToAllDeliversVariableBlocksIncludingEmptyOnes() throws Exception {
        int n = 4;
        List<float[][]> got = onRanks(n, c -> {
            float[][] send = new float[n][];
            for (int d = 0; d < n; d++) {
                send[d] = new float[(c.rank() + d) % 3]; // some blocks empty
                for (int i = 0; i < send[d].length; i++) {
                    send[d][i] = 100 * c.rank() + 10 * d + i;
                }
            }
            return c.allToAll(send);
        });
        for (int me = 0; me < n; me++) {
            for (int s = 0; s < n; s++) {
                float[] block = got.get(me)[s];
                assertThat(block).hasSize((s + me) % 3);
                for (int i = 0; i < block.length; i++) {
                    assertThat(block[i]).isEqualTo(100f * s + 10 * me + i);
                }
            }
        }
    }

    @Test
    void allReduceSumsInRankOrderOnEveryRank() throws Exception {
        int n = 4;
        // values whose sum depends on the order of addition
        float[][] in = {{1e8f, 1f}, {1f, -1e8f}, {-1e8f, 1f}, {1f, 1e8f}};
        List<float[]> got = onRanks(n, c -> {
            float[] v = new float[]{7f, in[c.rank()][0], in[c.rank()][1], 7f};
            c.allReduceSum(v, 1, 2);
            return v;
        });
        for (int i = 0; i < 2; i++) {
            float want = ((in[0][i] + in[1][i]) + in[2][i]) + in[3][i];
            for (float[] v : got) {
                assertThat(Float.floatToRawIntBits(v[1 + i])).isEqualTo(Float.floatToRawIntBits(want));
                assertThat(v[0]).isEqualTo(7f);
                assertThat(v[3]).isEqualTo(7f);
            }
        }
    }

    @Test
    void aFailedRankFailsTheOthersInsteadOfHangingThem() {
        LocalCollective[] g = LocalCollective.group(3, 30);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> waiting = new ArrayList<>();
            for (int r = 1; r < 3; r++) {
                LocalCollective c = g[r];
                waiting.add(pool.submit(() -> c.allReduceSum(new float[1], 0, 1)));
            }
            g[0].abort(); // rank 0 crashed before its collective
            for (Future<?> f : waiting) {
                assertThatThrownBy(() -> f.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IllegalStateException.class);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static <T> List<T> onRanks(int n, Function<Collective, T> body) throws Exception {
        LocalCollective[] g = LocalCollective.group(n, 30);
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<T>> fs = new ArrayList<>();
            for (LocalCollective c : g) {
                fs.add(pool.submit(() -> body.apply(c)));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> f : fs) {
                out.add(f.get(30, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
