// What the standalone CUDA benchmarks of this folder share (membw.cu, readdepth.cu): a check that stops the
// program with the failing call's text, and the median time of a launch sequence by CUDA events.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

// Median microseconds of launch(r) over reps runs, between events on the default stream, after two runs
// not counted (first-touch and module loading).
template <typename F>
float median_us(int reps, F &&launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < reps + 2; r++) {
        CK(cudaEventRecord(a));
        launch(r);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) t.push_back(ms * 1000.f);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}
