#!/usr/bin/env bash
# Runs the CPU backend benchmark (prefill/decode tok/s, memory bandwidth, decode's share of it).
# Usage: backend-plugin-example/bench.sh [--prefill N] [--decode N] [--bandwidth-mib N]
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
./mvnw -o -q -B -pl backend-plugin-example compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=compile
exec "$JAVA_HOME/bin/java" ${BENCH_JAVA_OPTS:-} --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx8g \
  -cp "backend-plugin-example/target/classes:$(cat backend-plugin-example/target/bench.classpath)" \
  io.strata.backend.cpu.bench.CpuBenchmark models "$@"
