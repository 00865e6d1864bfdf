#!/usr/bin/env bash
# The whole demo pipeline on a GPU host, one command (from the repository root):
#   OUT=$OUT bash tools/train-demo/run-on-gpu.sh
# Order: format self-test, fixture parity check (fails fast: no training on a wrong model), tokenizer, data,
# (only with SKIP_SMOKE=0) a 20-second smoke run of train + export + exact eval + sample, the real training
# (TRAIN_SECONDS, default 210, or TRAIN_MINUTES, fractional allowed; capped so everything ends TOTAL_SECONDS
# (default 290) after the start, RESERVE_SECONDS (default 45) kept after training), export of the state with the
# lowest held-out loss, exact eval of both exports, samples, plot, and the packed model folders.
# Environment: TOTAL_SECONDS, TRAIN_SECONDS | TRAIN_MINUTES, RESERVE_SECONDS, SKIP_SMOKE (default 1), BATCH (64),
# EVAL_SECONDS (10: held-out evaluation / checkpoint choice period), STDLIB_EXTRA (extra stdlib trees or
# archives for data.py; default tools/train-demo/stdlib-extra.tar.xz when that file exists), WORK.
# Outputs in $OUT (at most 8 files): train.log, loss.json, loss.png, samples.json, model_card.json and
# models.tgz (models/dsv4-demo + models/dsv4-demo-fp8), split into models.tgz.partNN if over 15 MiB
# (reassemble: cat models.tgz.part* | tar xz).
set -uo pipefail
export PYTHONUNBUFFERED=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
: "${OUT:?set OUT to the output folder}"
mkdir -p "$OUT"
WORK="${WORK:-$(mktemp -d /tmp/train-demo.XXXXXX)}"
mkdir -p "$WORK"
START=$(date +%s)
TOTAL_SECONDS="${TOTAL_SECONDS:-290}"
DEADLINE=$((START + TOTAL_SECONDS))
if [ -z "${TRAIN_SECONDS:-}" ]; then
  if [ -n "${TRAIN_MINUTES:-}" ]; then
    TRAIN_SECONDS=$(awk -v m="$TRAIN_MINUTES" 'BEGIN { printf "%d", m * 60 }')
  else
    TRAIN_SECONDS=210
  fi
fi
RESERVE_SECONDS="${RESERVE_SECONDS:-45}"
EVAL_SECONDS="${EVAL_SECONDS:-10}"
SKIP_SMOKE="${SKIP_SMOKE:-1}"
if [ -z "${STDLIB_EXTRA:-}" ] && [ -f "$HERE/stdlib-extra.tar.xz" ]; then
  STDLIB_EXTRA="$HERE/stdlib-extra.tar.xz"
fi
export STDLIB_EXTRA="${STDLIB_EXTRA:-}"

stage() { echo; echo "== $(( $(date +%s) - START ))s: $*"; }

collect() {
  local run="$WORK/run"
  for f in loss.json samples.json model_card.json; do
    [ -f "$run/$f" ] && cp "$run/$f" "$OUT/$f"
  done
  if [ -f "$OUT/loss.json" ]; then
    python3 "$HERE/plot_loss.py" "$OUT/loss.json" "$OUT/loss.png" || echo "plot failed (non-fatal)"
  fi
  if [ -d "$run/models/dsv4-demo" ]; then
    (cd "$run" && tar czf "$WORK/models.tgz" models/dsv4-demo models/dsv4-demo-fp8)
    local size
    size=$(stat -c %s "$WORK/models.tgz")
    if [ "$size" -le $((15 * 1024 * 1024)) ]; then
      mv "$WORK/models.tgz" "$OUT/models.tgz"
    else
      split -b 15M -d -a 2 "$WORK/models.tgz" "$OUT/models.tgz.part"
      rm -f "$WORK/models.tgz"
    fi
    ls -l "$OUT"
  fi
}

main() {
  stage "environment (work dir $WORK, deadline +${TOTAL_SECONDS}s, TRAIN_SECONDS=$TRAIN_SECONDS, RESERVE_SECONDS=$RESERVE_SECONDS, SKIP_SMOKE=$SKIP_SMOKE, STDLIB_EXTRA=${STDLIB_EXTRA:-none})"
  python3 -c "import sys, torch, numpy, tokenizers; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__, 'tokenizers', tokenizers.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'NO GPU')"
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv 2>/dev/null || true

  stage "1/7 number formats (numpy)"
  python3 "$HERE/test_formats.py" || echo "WARNING: format self-test failed (continuing)"

  stage "2/7 fixture parity: v4model exact vs the reference's outputs"
  if ! python3 "$HERE/check_fixtures.py" "$ROOT"; then
    echo "FIXTURE CHECK FAILED: the training model is not the served model; not training."
    return 1
  fi

  stage "3/7 tokenizer"
  python3 "$HERE/tokenizer_train.py" "$WORK" || { echo "tokenizer training failed"; return 1; }

  stage "4/7 data"
  python3 "$HERE/data.py" "$WORK/tokenizer.json" "$WORK" || { echo "data preparation failed"; return 1; }

  if [ "$SKIP_SMOKE" = "1" ]; then
    stage "5/7 smoke run skipped (SKIP_SMOKE=1; SKIP_SMOKE=0 runs it)"
  else
    stage "5/7 smoke run (20 s of training, export, exact eval, sample)"
    if ! python3 "$HERE/train.py" --work "$WORK" --out "$WORK/smoke" --seconds 20 --eval-seconds 5 --smoke; then
      echo "SMOKE RUN FAILED: not starting the real training."
      return 1
    fi
    rm -rf "$WORK/smoke/models"
  fi

  stage "6/7 training (up to $TRAIN_SECONDS s, ending ${RESERVE_SECONDS}s before the deadline)"
  python3 "$HERE/train.py" --work "$WORK" --out "$WORK/run" --seconds "$TRAIN_SECONDS" --deadline "$DEADLINE" \
    --reserve "$RESERVE_SECONDS" --eval-seconds "$EVAL_SECONDS"
  local rc=$?
  [ $rc -ne 0 ] && echo "training run exited with $rc (collecting what exists)"

  stage "7/7 collecting outputs"
  collect
  stage "finished (rc $rc)"
  return $rc
}

main 2>&1 | tee -a "$OUT/train.log"
exit "${PIPESTATUS[0]}"
