#!/usr/bin/env bash
# Builds libstrata_cuda.so (all kernels + probe, cudart linked statically) into $1.
# Called by the Maven profile `cuda-native`; rebuilds only when a source is newer than the library.
# Targets: sm_90a machine code (Hopper: H100/H200) plus compute_90 PTX for later chips.
set -euo pipefail
out=${1:?output directory}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
lib="$out/libstrata_cuda.so"
if [[ -f "$lib" ]] && [[ -z "$(find "$here" -newer "$lib" \( -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) -print -quit)" ]]; then
  echo "libstrata_cuda.so is up to date"; exit 0
fi
srcs=$(ls "$here"/*.cu | grep -v '/bench_')
"$cuda_home/bin/nvcc" -O3 -std=c++17 -shared -Xcompiler -fPIC -cudart static \
  -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_90,code=compute_90 \
  -Xptxas -warn-spills ${STRATA_NVCC_FLAGS:-} \
  -I"$here" -o "$lib.tmp" $srcs
mv "$lib.tmp" "$lib"
echo "built $lib"
