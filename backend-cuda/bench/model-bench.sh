#!/bin/sh
# Decode throughput of the whole model on the GPU (ModelDecodeBench), from the test bundle's classes and
# slim runtime: backend-cuda/bench/model-bench.sh <work dir> [context] [steps] [batch ...]
here=$(cd "$(dirname "$0")/../.." && pwd)/.bundle/test
rt=/tmp/strata-test-runtime
[ -x $rt/runtime/bin/java ] || { mkdir -p $rt && tar -xJf "$here/runtime.tar.xz" -C $rt; } || exit 1
cp="$here/test-classes:$here/classes"
for j in "$here"/lib/*.jar; do cp="$cp:$j"; done
exec $rt/runtime/bin/java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
  -Dorg.bytedeco.javacpp.cachedir=/tmp/strata-javacpp -cp "$cp" io.strata.backend.cuda.model.ModelDecodeBench "$@"
