// How many thread-block clusters of a 256-thread CTA with a given dynamic shared memory an H200 runs at once
// (cudaOccupancyMaxActiveClusters), and the time of grids of CTAs that each spin ~20 us: one wave or two.
// No Strata code. nvcc -O3 -arch=sm_90a -o clusters backend-cuda/bench/clusters.cu && ./clusters
#include <cstdio>
#include <cuda_runtime.h>
__global__ void spin(long long cycles, int *sink) {
    extern __shared__ int s[];
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
    if (threadIdx.x == 0) { s[0] = blockIdx.x; sink[blockIdx.x] = s[0]; }
}
int main() {
    int *sink; cudaMalloc(&sink, 1 << 20);
    int smems[] = {216 * 1024 + 256, 110 * 1024, 60 * 1024};
    for (int smem : smems) {
        cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        cudaFuncSetAttribute(spin, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        for (int cl = 1; cl <= 8; cl++) {
            cudaLaunchConfig_t cfg = {};
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = cl; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
            cfg.attrs = attr; cfg.numAttrs = 1; cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = smem;
            cfg.gridDim = dim3(cl * 64);
            int n = -1;
            cudaError_t e = cudaOccupancyMaxActiveClusters(&n, spin, &cfg);
            printf("smem %6d cluster %d: max active clusters %d (%d CTAs) %s\n", smem, cl, n, n * cl, e ? cudaGetErrorString(e) : "");
            for (int grid : {64, 96, 128, 132, 256}) {
                if (grid % cl) continue;
                cfg.gridDim = dim3(grid);
                cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
                for (int rep = 0; rep < 2; rep++) {
                    cudaEventRecord(a);
                    e = cudaLaunchKernelEx(&cfg, spin, (long long) 20 * 1860, sink);  // ~20 us at 1.86 GHz
                    cudaEventRecord(b); cudaEventSynchronize(b);
                }
                float ms = 0; cudaEventElapsedTime(&ms, a, b);
                printf("   grid %3d: %.1f us %s\n", grid, ms * 1000, e ? cudaGetErrorString(e) : "");
            }
        }
    }
}
