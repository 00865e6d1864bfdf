package io.strata.model.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RopeTableTest {

    private final LayerSchedule flash = ReferenceModel.V4_FLASH.config().schedule();

    @Test
    void positionZeroIsTheIdentity() {
        RopeTable t = RopeTable.build(flash.layer(2).rope(), 8);
        float[] x = new float[64];
        for (int i = 0; i < 64; i++) {
            x[i] = i - 31.5f;
        }
        float[] y = x.clone();
        t.rotate(y, 0, 0, false);
        assertThat(y).containsExactly(x);
    }

    @Test
    void rotationMatchesTheComplexFormulaAndInverseUndoesIt() {
        RopeConfig rope = flash.layer(0).rope();
        RopeTable t = RopeTable.build(rope, 300);
        float[] freqs = rope.inverseFrequencies();
        float[] x = new float[64 + 3];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.sin(i * 0.37) * 2;
        }
        float[] y = x.clone();
        t.rotate(y, 3, 257, false);
        for (int i = 0; i < 32; i++) {
            double angle = 257.0 * freqs[i];
            double re = x[3 + 2 * i] * Math.cos(angle) - x[4 + 2 * i] * Math.sin(angle);
            double im = x[3 + 2 * i] * Math.sin(angle) + x[4 + 2 * i] * Math.cos(angle);
            assertThat((double) y[3 + 2 * i]).isCloseTo(re, within(1e-4));
            assertThat((double) y[4 + 2 * i]).isCloseTo(im, within(1e-4));
        }
        assertThat(y[0]).isEqualTo(x[0]);
        t.rotate(y, 3, 257, true);
        for (int i = 3; i < x.length; i++) {
            assertThat((double) y[i]).isCloseTo(x[i], within(1e-5));
        }
    }

    @Test
    void relativePositionSurvivesDerotation() {
        // rotate a value at key position 40, de-rotate at query position 100: same as rotating by -60
        RopeTable t = RopeTable.build(flash.layer(3).rope(), 128);
        float[] v = new float[64];
        java.util.Arrays.fill(v, 1f);
        float[] a = v.clone();
        t.rotate(a, 0, 40, false);
        t.rotate(a, 0, 100, true);
        float[] b = v.clone();
        t.rotate(b, 0, 60, true);
        for (int i = 0; i < 64; i++) {
            assertThat((double) a[i]).isCloseTo(b[i], within(1e-4));
        }
    }
}
