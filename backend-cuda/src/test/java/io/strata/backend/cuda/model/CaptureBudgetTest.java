package io.strata.backend.cuda.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CaptureBudgetTest {
    private final CaptureBudget budget = new CaptureBudget(60_000, 8192L << 20);

    @Test
    void capturingGoesOnWithinBothLimits() {
        assertThat(budget.spent(0, 0)).isNull();
        assertThat(budget.spent(60_000, 8192L << 20)).isNull();
    }

    @Test
    void timeIsCheckedFirstAndNamedInTheReason() {
        assertThat(budget.spent(60_001, 0)).isEqualTo("capture time budget of 60000 ms spent");
        assertThat(budget.spent(60_001, Long.MAX_VALUE)).startsWith("capture time budget");
    }

    @Test
    void memoryPastTheBudgetStopsCapturing() {
        assertThat(budget.spent(10, (8192L << 20) + 1)).isEqualTo("capture memory budget of 8192 MiB spent");
        assertThat(new CaptureBudget(60_000, 0).spent(0, 1)).isEqualTo("capture memory budget of 0 MiB spent");
    }

    @Test
    void aNegativeBudgetIsRefused() {
        assertThatThrownBy(() -> new CaptureBudget(-1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new CaptureBudget(0, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
