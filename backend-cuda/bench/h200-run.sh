#!/usr/bin/env bash
# What one device call runs on the H200 (no Java there: the GPU bundle brings its own runtime).
#   backend-cuda/bench/h200-run.sh [parity] [sparse] [smoke] [serve] [model14] [linear] [bench:KERNELS] [kvbench] [cpubench]
#   (results under $OUT; model14 needs .bundle/test and models/dsv4-tiny-fp8)
# parity needs .bundle/test (scripts/gpu-bundle-tests); sparse needs backend-cuda/target/native (carry it);
# smoke, bench and cpubench need .bundle/strata-gpu-bundle.tar.xz (scripts/gpu-bundle);
# kvbench needs .bundle/bench/benchmarks.jar (cp benchmarks/target/benchmarks.jar .bundle/bench/).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  | tee "$out/gpu.txt"
b=/tmp/strata-bundle
if [[ -f .bundle/strata-gpu-bundle.tar.xz && ! -x $b/strata-gpu/runtime/bin/java ]]; then
  mkdir -p $b && tar -xJf .bundle/strata-gpu-bundle.tar.xz -C $b || exit 1
fi
jar=$(ls $b/strata-gpu/plugins/backend-cuda-*.jar 2>/dev/null)
# a freshly built library (carried as backend-cuda/target/native) wins over the bundle's plugin jar
lib_args=(--plugin-jar "$jar")
[[ -f backend-cuda/target/native/libstrata_cuda.so ]] && lib_args=(--lib backend-cuda/target/native/libstrata_cuda.so)
for step in "$@"; do
  case "$step" in
    parity)
      # the platform bundle's runtime when it travelled, else the test bundle's slim one
      rt=""; [[ -x $b/strata-gpu/runtime/bin/java ]] && rt=$b/strata-gpu
      sh .bundle/test/run-tests $rt 2>&1 | tee "$out/parity.txt" | grep -v '^\s*$' | tail -60 ;;
    sparse)
      # indexer, top-k and sparse attention: checks, then the benchmark (docs/benchmarks.md)
      PYTHONUNBUFFERED=1 python3 backend-cuda/bench/bench_sparse.py --lib "${sparse_lib:-backend-cuda/target/native/libstrata_cuda.so}" \
        --out "$out" ${SPARSE_ARGS:-} 2>&1 | grep -v -E 'Warning|warn\(' | tee "$out/sparse.txt" | grep -v '^{' | tail -45 ;;
    smoke)
      # the platform from the bundle (no model travels: console-only): the CUDA plugin must report the GPU
      mkdir -p /tmp/strata-home && cd /tmp/strata-home
      STRATA_ADMIN_INITIAL_PASSWORD=smoke-test-pw timeout 150 $b/strata-gpu/bin/strata --server.port=18080 \
        --strata.model.on-load-failure=console-only > "$out/smoke.log" 2>&1 &
      for i in $(seq 1 90); do   # any answer counts (console-only reports DOWN: no model)
        code=$(curl -s -o "$out/health.json" -w '%{http_code}' localhost:18080/actuator/health 2>/dev/null)
        [[ "$code" != "000" ]] && break; sleep 1
      done
      echo "health after ${i}s: $(cat "$out/health.json" 2>/dev/null)"
      curl -s -c /tmp/cj -b /tmp/cj localhost:18080/login > /tmp/login.html
      csrf=$(python3 -c "import re,sys; h=open('/tmp/login.html').read(); m=re.search(r'name=\"_csrf\"[^>]*value=\"([^\"]+)\"', h) or re.search(r'value=\"([^\"]+)\"[^>]*name=\"_csrf\"', h); print(m.group(1) if m else '')")
      curl -s -c /tmp/cj -b /tmp/cj --data-urlencode username=admin --data-urlencode password=smoke-test-pw \
        --data-urlencode "_csrf=$csrf" localhost:18080/login -o /dev/null
      curl -s -b /tmp/cj localhost:18080/admin/api/plugins | tee "$out/plugins.json"; echo
      grep -i -E 'plugin (cpu|cuda)|cuda' "$out/smoke.log" | head -8
      kill %1 2>/dev/null; cd - >/dev/null ;;
    serve)
      # the platform from the bundle with the CUDA plugin serving a model generated here (release formats,
      # the fixtures' dimensions and tokenizer, carried as .bundle/serve/tokenizer.json): API calls, the
      # load test, the admin API's view of the backend; then the same model on the CPU backend for comparison
      gen=/tmp/strata-models/dsv4-synth
      if [[ ! -f $gen/config.json ]]; then
        $b/strata-gpu/runtime/bin/java -cp "$(ls $b/strata-gpu/plugins/backend-plugin-example-*.jar):$b/strata-gpu/app/lib/*" \
          io.strata.backend.cpu.bench.SyntheticCheckpoint $gen ${SERVE_SHAPE:-tiny} ${SERVE_STABLE:+stable} \
          && cp .bundle/serve/tokenizer.json $gen/
      fi
      here=$PWD
      for backend in ${SERVE_BACKENDS:-cuda cpu}; do
        mkdir -p /tmp/strata-home-$backend && cd /tmp/strata-home-$backend
        STRATA_ADMIN_INITIAL_PASSWORD=serve-test-pw timeout 400 $b/strata-gpu/bin/strata --server.port=18080 \
          --strata.api.auth=none --strata.model.path=$gen --strata.backend=$backend > "$out/serve-$backend.log" 2>&1 &
        pid=$!
        for i in $(seq 1 120); do
          curl -s localhost:18080/actuator/health 2>/dev/null | grep -q UP && break; sleep 1
        done
        echo "[$backend] health after ${i}s: $(curl -s localhost:18080/actuator/health)"
        python3 $here/backend-cuda/bench/serve_checks.py --url http://localhost:18080 --out "$out/serve-$backend.json" \
          --password serve-test-pw --pages "$out/pages-$backend" 2>&1 | tee "$out/serve-$backend.txt" | tail -30
        python3 $here/platform-app/src/test/python/loadtest.py --url http://localhost:18080 --clients ${LOAD_CLIENTS:-64} \
          --seconds ${LOAD_SECONDS:-60} --max-tokens 32 --json "$out/load-$backend.json" 2>&1 | tail -24
        curl -s localhost:18080/actuator/prometheus | grep -E '^strata_device|^strata_kv_pages' > "$out/metrics-$backend.txt"
        kill $pid; wait $pid 2>/dev/null; cd "$here"
      done
      # one archive: the device tool brings back only a few files per call
      tar -czf "$out/serve.tgz" -C "$out" $(cd "$out" && ls -d serve-* load-* metrics-* pages-* 2>/dev/null) \
        && (cd "$out" && rm -rf serve-*.json serve-*.log pages-*) ;;
    model14)
      # decode at the roofline: the GPU tests (graphs now serve the decode steps of the model tests), the
      # V4-Flash-shaped decode benchmark with the streams/graphs ablation (ModelDecodeBench), then the PyTorch peer
      rt=/tmp/strata-test-runtime
      [[ -x $rt/runtime/bin/java ]] || { mkdir -p $rt && tar -xJf .bundle/test/runtime.tar.xz -C $rt; }
      [[ ${TESTS:-1} == 1 ]] && timeout ${TESTS_S:-150} sh .bundle/test/run-tests --exclude-classname '.*ModelParityTest' 2>&1 \
        | tee "$out/tests.txt" | grep -E 'tests (successful|failed|skipped)|✘|captured|request [0-9]: worst' | head -40
      [[ ${TESTS:-1} == 1 && ${PARITY:-1} == 1 ]] && timeout ${PARITY_S:-300} sh .bundle/test/run-tests --include-classname '.*ModelParityTest' 2>&1 \
        | tee "$out/parity.txt" | grep -E 'tests (successful|failed)|✘' | head -20
      cp=".bundle/test/test-classes:.bundle/test/classes"; for j in .bundle/test/lib/*.jar; do cp="$cp:$j"; done
      timeout ${BENCH_S:-220} $rt/runtime/bin/java -Xmx100g --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
        -Dorg.bytedeco.javacpp.cachedir=/tmp/strata-javacpp -cp "$cp" io.strata.backend.cuda.model.ModelDecodeBench \
        /tmp/flash-slice layers=${BENCH_LAYERS:-8} ${BENCH_ARGS:-} out="$out/decode.json" 2>&1 | tee "$out/decode.txt" \
        | grep -v -E '^\s+[a-z]' | tail -${BENCH_TAIL:-40}
      [[ ${PEER:-1} == 1 ]] && PYTHONUNBUFFERED=1 timeout ${PEER_S:-170} python3 backend-cuda/bench/bench_torch_peer.py --layers ${BENCH_LAYERS:-8} \
        --contexts 8192,32768,131072 --batches 1,8,64,256 --modes eager,compile --compile-shapes ${PEER_COMPILE:-1x8192} \
        --steps 10 --budget-s ${PEER_BUDGET:-120} --out "$out/peer.json" 2>&1 | tee "$out/peer.txt" | tail -30
      tar -czf "$out/model14.tgz" -C "$out" $(cd "$out" && ls tests.txt parity.txt decode.txt decode.json peer.txt peer.json 2>/dev/null) ;;
    linear)
      # the decode GEMMs alone at V4-Flash shapes against copy bandwidth (needs backend-cuda/target/native)
      PYTHONUNBUFFERED=1 python3 backend-cuda/bench/bench_linear.py --lib backend-cuda/target/native/libstrata_cuda.so \
        --batches ${LINEAR_BATCHES:-1,8,64} --out "$out" 2>&1 | grep -v -E 'Warning|warn\(' | tee "$out/linear.txt" | tail -40 ;;
    alt*:*)
      # A/B: the same benchmark (and the parity tests) against a variant library built into
      # backend-cuda/target/native-<name>, e.g. step "alt2:F3,F2" uses target/native-alt2
      name=${step%%:*}; lib=backend-cuda/target/native-$name/libstrata_cuda.so
      rm -rf /tmp/test-$name && cp -r .bundle/test /tmp/test-$name
      cp "$lib" /tmp/test-$name/classes/io/strata/backend/cuda/nat/linux-x86_64/libstrata_cuda.so
      sh /tmp/test-$name/run-tests $b/strata-gpu 2>&1 | grep -E 'tests (successful|failed)|✘' | sed "s/^/[$name parity] /"
      PYTHONUNBUFFERED=1 python3 backend-cuda/bench/bench_kernels.py --lib "$lib" \
        --out /tmp/$name --kernels "${step#*:}" --skip-compile 2>&1 | tee "$out/$name.txt" | tail -10 ;;
    cpubench)
      # the CPU backend's decode against this host's memory bandwidth (synthetic model: no checkpoint travels);
      # a freshly built plugin jar (carried as backend-plugin-example/target/*.jar) wins over the bundle's
      cpu=$(ls backend-plugin-example/target/backend-plugin-example-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1)
      [[ -z "$cpu" ]] && cpu=$(ls $b/strata-gpu/plugins/backend-plugin-example-*.jar)
      lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$out/cpu.txt"
      $b/strata-gpu/runtime/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx16g \
        -cp "$cpu:$b/strata-gpu/app/lib/*" io.strata.backend.cpu.bench.CpuBenchmark /no-fixture-here \
        --prefill 256 --decode 64 --bandwidth-mib 1024 2>&1 | tee "$out/cpubench.txt" | tail -12 ;;
    kvbench)
      # the host-side KV bookkeeping benchmark on this host's CPU, with the bundle's runtime
      lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$out/kv-cpu.txt"
      $b/strata-gpu/runtime/bin/java -jar .bundle/bench/benchmarks.jar KvStepBenchmark -rf json \
        -rff "$out/kv-jmh.json" 2>&1 | tee "$out/kv-jmh.txt" | grep -E '^Benchmark|^KvStep' ;;
    bench:*)
      PYTHONUNBUFFERED=1 python3 backend-cuda/bench/bench_kernels.py "${lib_args[@]}" --out "$out" \
        --kernels "${step#bench:}" 2>&1 | grep -v -E 'Warning|warn\(' | tee -a "$out/bench.txt" | tail -40
  esac
done
