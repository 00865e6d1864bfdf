package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Our encoders against an independent implementation: 12,543 casts computed once with {@code ml_dtypes}
 * (the NumPy dtypes JAX uses) — every e4m3 value, every midpoint and its float neighbours, random values over
 * the whole range, e2m1 ties, and random / tie bf16 bit patterns. Inputs are clamped to ±448 / ±6 as the
 * reference clamps them (ml_dtypes turns e4m3 overflow into NaN where we saturate).
 */
class MlDtypesGoldenTest {

    @Test
    void everyGoldenCastAgrees() throws IOException {
        List<String> mismatches = new ArrayList<>();
        int checked = 0;
        try (var in = new BufferedReader(new InputStreamReader(
                getClass().getResourceAsStream("golden-ml-dtypes.txt"), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                String[] f = line.split(" ");
                float x = Float.intBitsToFloat(Integer.parseUnsignedInt(f[1], 16));
                int expected = Integer.parseInt(f[2], 16);
                int actual = switch (f[0]) {
                    case "e4m3" -> Fp8E4m3.encode(x) & 0xFF;
                    case "e2m1" -> Fp4E2m1.encode(x);
                    case "bf16" -> Bf16.fromFloat(x) & 0xFFFF;
                    default -> throw new IllegalStateException("unknown format in " + line);
                };
                checked++;
                if (actual != expected) {
                    mismatches.add(line + " -> ours " + Integer.toHexString(actual));
                }
            }
        }
        assertThat(checked).isEqualTo(12_543);
        assertThat(mismatches).isEmpty();
    }
}
