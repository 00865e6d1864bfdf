package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ReferenceModel;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link ModelDecodeBench} sizes its KV pools for the timed steps and for the component profile after them, which
 * fills its requests for {@link ModelDecodeBench#PROFILE_STEPS} steps: with fewer timed steps (one, as under
 * {@code ncu}) a pool sized for those alone ran out in the profile. No GPU: the page bookkeeping only.
 */
class ModelDecodeBenchPoolTest {
    private static final KvLayout LAYOUT =
        KvLayout.of(KvModelShape.of("flash", ReferenceModel.V4_FLASH.config()), KvPrecision.DEFAULT);

    @Test
    void oneTimedStepLeavesRoomForTheProfile() {
        for (int context : new int[]{8192, 131072}) {
            for (int batch : new int[]{1, 64}) {
                PageAllocator alloc = new PageAllocator(LAYOUT, ModelDecodeBench.pagesNeeded(LAYOUT, context, batch, 1));
                assertThatCode(() -> ModelDecodeBench.tables(alloc, batch, context, ModelDecodeBench.PROFILE_STEPS))
                    .as("context %d batch %d", context, batch).doesNotThrowAnyException();
            }
        }
    }

    @Test
    void aPoolForTheTimedStepAloneIsTooSmallForTheProfile() {
        int context = 8192;
        PageAllocator alone = new PageAllocator(LAYOUT,
            PageAllocator.pagesNeeded(LAYOUT, context, 1, ModelDecodeBench.windowFrom(context, 1)));
        assertThatThrownBy(() -> ModelDecodeBench.tables(alone, 1, context, ModelDecodeBench.PROFILE_STEPS))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("exhausted");
        assertThat(ModelDecodeBench.pagesNeeded(LAYOUT, context, 1, 16))
            .as("at the documented 16 steps the profile needs nothing more")
            .isEqualTo(PageAllocator.pagesNeeded(LAYOUT, context, 1, ModelDecodeBench.windowFrom(context, 16)));
    }
}
