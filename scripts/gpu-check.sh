#!/usr/bin/env bash
# The GPU machine's one-stop check: build with CUDA, run the GPU tests (and the rest of ctest
# for good measure), then the benchmarks in bench/ that need a GPU. Logs go to $OUT when set.
# Usage: bash scripts/gpu-check.sh [--no-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
build=${DI_BUILD_DIR:-build-gpu}
jobs=$(nproc)

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B "$build" -DDI_CUDA=ON -DDI_BINDINGS=OFF -DCMAKE_BUILD_TYPE=Release \
  >"$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" >"$out/build.log" 2>&1 || { grep -B3 -A10 error "$out/build.log" | head -80; exit 1; }

rc=0
ctest --test-dir "$build" -L gpu --output-on-failure --timeout 600 2>&1 | tee "$out/ctest-gpu.log" | tail -25
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
ctest --test-dir "$build" -LE gpu -j"$jobs" --timeout 900 >"$out/ctest-cpu.log" 2>&1 || rc=1
tail -3 "$out/ctest-cpu.log"

if [ "${1:-}" != "--no-bench" ] && [ -d "$build/bench" ]; then
  for b in "$build"/bin/bench_gpu_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" 2>&1 | tee "$out/$(basename "$b").log" | tail -20
  done
fi
echo "gpu-check: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
