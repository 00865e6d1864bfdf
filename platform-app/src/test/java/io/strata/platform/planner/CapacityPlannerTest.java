package io.strata.platform.planner;

import io.strata.kv.KvLayout;
import io.strata.kv.KvPrecision;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CapacityPlannerTest {

    static final double GIB = CapacityPlanner.GIB;

    static KvLayout layout(String model, KvPrecision p) {
        return KvLayout.of(ModelChoice.named(model).shape(), p);
    }

    /**
     * The blog's V4 stack (30 C4A + 31 C128A layers) at 1M tokens in FP8 + FP4, from the entry formats alone:
     * a main entry is 448 e4m3 NoPE values + 64 bf16 RoPE values + 7 ue8m0 scales + 1 pad = 584 B, an indexer
     * entry 128 e2m1 values + 4 ue8m0 scales = 68 B; C4A keeps L/4 main and L/4 indexer entries, C128A L/128
     * main entries, every layer a 128-entry window.
     */
    static final long V4_FP8_FP4_1M = 30L * ((128 + 1_048_576 / 4) * 584L + (1_048_576 / 4) * 68L)
            + 31L * (128 + 1_048_576 / 128) * 584L;

    @Test
    void reproducesTheSeedsTable() {
        List<CapacityPlanner.SeedRow> rows = CapacityPlanner.seedsTable();
        assertThat(rows.get(0).bytes() / GIB).isCloseTo(83.9, within(0.05));
        assertThat(CapacityPlanner.v32Bytes(1, 1)).isEqualTo(1408);
        assertThat(rows.get(1).bytes()).isEqualTo(30L * ((128 + 262_144) * 1024L + 262_144 * 256L) + 31L * (128 + 8_192) * 1024L);
        assertThat(rows.get(1).bytes() / GIB).isCloseTo(9.62, within(0.005));
        assertThat(rows.get(1).vsV32()).isCloseTo(8.7, within(0.05));
        assertThat(rows.get(2).bytes()).isEqualTo(V4_FP8_FP4_1M);
        // the seeds: "~4.9 GiB (~17x)"
        assertThat(rows.get(2).bytes() / GIB).isCloseTo(4.9, within(0.05));
        assertThat(rows.get(2).vsV32()).isCloseTo(17, within(0.5));
    }

    @Test
    void flashMeetsTheTargetsAgainstVllm() {
        KvLayout flash = layout("flash", KvPrecision.DEFAULT);
        CapacityPlanner.SequenceReport s = CapacityPlanner.sequence(flash, CapacityPlanner.ONE_M);
        // ideal compressed: 21 x (584/4 + 68/4) + 20 x 584/128 = 3,514.25 B per token
        assertThat(s.idealCompressedBytes()).isEqualTo(21L * (262_144 * 584L + 262_144 * 68L) + 20L * 8_192 * 584L);
        assertThat(s.idealCompressedBytes() / GIB).isCloseTo(3.43, within(0.005));
        assertThat(s.compressedOverhead()).isLessThan(0.03);
        assertThat(s.pagedWindowBytes()).isLessThanOrEqualTo(16L << 20);
        VllmReference v = VllmReference.of(ModelChoice.named("flash").shape(), 43, 8192);
        assertThat(v.layerTuples()).isEqualTo(22);
        assertThat(v.blockIdBytes()).isEqualTo(1_051_776);
        assertThat(v.sequenceBytes(CapacityPlanner.ONE_M) / GIB).isCloseTo(4.01, within(0.005));
        assertThat(v.perRequestBlockIds()).isEqualTo(26);
        assertThat(v.prefillTransientIds()).isEqualTo(3_328);
        // our prefill transient is the previous window only, and does not grow with the chunk
        long t8 = PrefillTransient.measure(flash, 65_536, 8192);
        long t32 = PrefillTransient.measure(flash, 65_536, 32_768);
        assertThat(t8).isEqualTo(t32).isLessThanOrEqualTo(s.pagedWindowBytes());
    }

    @Test
    void proUsesItsRealConfig() {
        VllmReference v = VllmReference.of(ModelChoice.named("pro").shape(), 61, 8192);
        assertThat(v.layerTuples()).isEqualTo(31);
        assertThat(v.blockIdBytes()).isEqualTo(1_482_048);
        CapacityPlanner.SequenceReport s = CapacityPlanner.sequence(layout("pro", KvPrecision.DEFAULT), CapacityPlanner.ONE_M);
        assertThat(s.compressedOverhead()).isLessThan(0.03);
        assertThat(s.idealCompressedBytes() / (double) CapacityPlanner.ONE_M).isCloseTo(5031, within(1.0));
    }

    @Test
    void fitCountsWholeSequencesAndStrandingWhenLengthsMiss() {
        KvLayout flash = layout("flash", KvPrecision.DEFAULT);
        CapacityPlanner.FitReport f = CapacityPlanner.fit(flash, 131_072, 80L << 30, 131_072);
        assertThat(f.sequences()).isEqualTo((80L << 30) / f.perRequestBytes());
        assertThat(f.poolUse().values()).allMatch(u -> u <= 1.0);
        // pools split for 1M-token requests serving 4K-token ones run out of window pages first
        assertThat(CapacityPlanner.stranding(flash, 80L << 30, CapacityPlanner.ONE_M, 4096)).isGreaterThan(0.3);
        assertThat(CapacityPlanner.stranding(flash, 80L << 30, 131_072, 131_072)).isLessThan(0.01);
    }

    @Test
    void cliPrintsTheTableAndRejectsBadInput() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = PlannerCli.run(new String[] {"--model", "flash", "--memory-gib", "80", "--context", "131072"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(rc).isZero();
        assertThat(text).contains("83.88", "9.62", String.format(java.util.Locale.ROOT, "%.2f", V4_FP8_FP4_1M / GIB),
                "deepseek-v4-flash", "fit:");
        rc = PlannerCli.run(new String[] {"--context", "-5"}, new PrintStream(out), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--context must be positive");
        err.reset();
        rc = PlannerCli.run(new String[] {"--model", "nope"}, new PrintStream(out), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown model 'nope'");
    }
}
