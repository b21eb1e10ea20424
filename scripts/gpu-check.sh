#!/usr/bin/env bash
# The GPU machine's one-stop check: build the engine with its CUDA kernels (scripts/gpu), run the
# GPU tests and the model/engine tests in that build, then every GPU benchmark (bench/gpu_*),
# which append their rows to $OUT/results_rows.md for bench/RESULTS.md. Logs go to $OUT.
# Prepare on a machine with the Debian packages: bash scripts/gpu-deps.sh (then carry .gpu-deps).
# Usage: bash scripts/gpu-check.sh [--no-bench] [--hf] [--hf-compile]
#   --hf runs transformers on a model of the same shape in the same session (bench/hf_*_reference.py);
#   --hf-compile adds its static cache + torch.compile decode (minutes of compile warm-up).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
build=${DI_BUILD_DIR:-/tmp/deepinfer-gpu-build}
jobs=$(nproc)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
echo "$gpu" | tee "$out/gpu.txt"
t0=$(date +%s)
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S scripts/gpu -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 ||
  { tail -40 "$out/configure.log"; echo "gpu-check: FAIL (configure)"; exit 1; }
cmake --build "$build" -j"$jobs" >"$out/build.log" 2>&1 ||
  { grep -B3 -A12 -E "error" "$out/build.log" | head -80; echo "gpu-check: FAIL (build)"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"

rc=0
for t in test_cuda_kernels test_cuda_models test_cuda_v4 test_cuda_mla test_cuda_determinism test_cuda_nccl test_model_families test_model_quant test_model_v4 test_engine; do
  # test_cuda_nccl is built only where the toolkit has NCCL.
  if [ "$t" = test_cuda_nccl ] && [ ! -x "$build/$t" ]; then echo "== $t: not built (no NCCL)"; continue; fi
  "$build/$t" >"$out/$t.log" 2>&1 || rc=1
  echo "== $t: $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/$t.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \] .*\(" "$out/$t.log" | head -20
done
echo "tests: $(( $(date +%s) - t0 )) s"

bench=1; hf=0
for a in "$@"; do
  case "$a" in --no-bench) bench=0 ;; --hf) hf=1 ;; --hf-compile) hf=1; export HF_COMPILE=1 ;; esac
done
if [ "$bench" = 1 ]; then
  for b in "$build"/bench_gpu_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" --append "$out/results_rows.md" "$commit" "$gpu" 2>&1 | tee "$out/$(basename "$b").log" | tail -20
  done
  if [ "$hf" = 1 ]; then
    for r in bench/hf_*_reference.py; do
      echo "== $(basename "$r")"
      PYTHONUNBUFFERED=1 timeout "${HF_TIMEOUT:-400}" python3 "$r" 2>&1 | grep -v -i warning | tee "$out/$(basename "$r" .py).log" | tail -8
    done
  fi
  echo "bench: $(( $(date +%s) - t0 )) s"
fi
echo "gpu-check: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
