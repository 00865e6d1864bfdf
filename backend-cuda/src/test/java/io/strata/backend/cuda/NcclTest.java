package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * NCCL on one rank: the binding, a communicator, all-reduce and all-to-all move the right bytes. Skips with the
 * reason where there is no GPU or no NCCL; the multi-rank runs belong to a multi-GPU host (docs/scale-out.md).
 */
class NcclTest {

    @BeforeAll
    static void needsGpuAndNccl() {
        GpuTest.assumeGpu();
        String why = Nccl.unavailableReason();
        if (why != null) {
            System.out.println("NCCL test skipped: " + why);
            Assumptions.assumeTrue(false, why);
        }
    }

    @Test
    void oneRankAllReduceIsTheIdentity() {
        System.out.println("NCCL version " + Nccl.version());
        try (Nccl.Comm comm = Nccl.join(1, Nccl.uniqueId(), 0);
             DeviceBuffer f = DeviceBuffer.of(new float[]{1.5f, -2f, 3.25f});
             DeviceBuffer out = DeviceBuffer.allocate(12);
             DeviceBuffer b = DeviceBuffer.of(new short[]{GpuTest.bits(1.5f), GpuTest.bits(-7f)})) {
            assertThat(comm.size()).isEqualTo(1);
            comm.allReduceSum(f.address(), out.address(), 3, Nccl.DType.F32, 0);
            comm.allReduceSum(b.address(), b.address(), 2, Nccl.DType.BF16, 0); // in place
            CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "nccl test");
            assertThat(out.downloadFloats(3)).containsExactly(1.5f, -2f, 3.25f);
            assertThat(b.downloadShorts(2)).containsExactly(GpuTest.bits(1.5f), GpuTest.bits(-7f));
        }
    }

    @Test
    void oneRankAllToAllCopiesTheBlockAtItsOffsets() {
        try (Nccl.Comm comm = Nccl.join(1, Nccl.uniqueId(), 0);
             DeviceBuffer send = DeviceBuffer.of(new float[]{9f, 1f, 2f, 3f});
             DeviceBuffer recv = DeviceBuffer.of(new float[]{0f, 0f, 0f, 0f, 0f})) {
            comm.allToAll(send.address(), new long[]{3}, new long[]{1}, recv.address(), new long[]{3}, new long[]{2},
                Nccl.DType.F32, 0);
            CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "nccl test");
            assertThat(recv.downloadFloats(5)).containsExactly(0f, 0f, 1f, 2f, 3f);
            assertThatThrownBy(() -> comm.allToAll(send.address(), new long[]{1, 1}, new long[]{0, 0}, recv.address(),
                new long[]{1}, new long[]{0}, Nccl.DType.F32, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
