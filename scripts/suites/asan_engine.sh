#!/usr/bin/env bash
# The engine runtime under AddressSanitizer + UndefinedBehaviorSanitizer: builds only the engine
# test binary (KV cache, scheduler, sampler, engine threads incl. the 8-thread submit / poll /
# cancel / destroy test) in its own build folder and runs it; leaks fail the run.
# DI_ASAN_CAPI=1 also builds and runs the C ABI engine tests (libdeepinfer.so; slower to build).
# Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${DI_ASAN_BUILD_DIR:-build-asan}
jobs=${DI_JOBS:-$(nproc)}
targets=(test_engine)
[ "${DI_ASAN_CAPI:-0}" = 1 ] && targets+=(test_capi_engine)
mkdir -p "$build"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDI_CUDA=OFF -DDI_BINDINGS=OFF \
     -DDI_SANITIZE=address,undefined "${launcher[@]}" >"$build/di-configure.log" 2>&1; then
  tail -20 "$build/di-configure.log"; echo "0 passed, 1 failed"; exit 1
fi
if ! cmake --build "$build" -j"$jobs" --target "${targets[@]}" >"$build/di-build.log" 2>&1; then
  grep -E "error" -A3 "$build/di-build.log" | head -40; echo "0 passed, 1 failed"; exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0; failed=0
for t in "${targets[@]}"; do
  out=$("$build/bin/$t" --gtest_brief=1 2>&1); rc=$?
  p=$(echo "$out" | grep -oE '\[  PASSED  \] [0-9]+' | grep -oE '[0-9]+$' || echo 0)
  f=$(echo "$out" | grep -oE '\[  FAILED  \] [0-9]+ test' | grep -oE '[0-9]+' | head -1 || echo 0)
  p=${p:-0}; f=${f:-0}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "$out" | tail -40; fi
  [ "$f" != 0 ] && echo "$out" | grep -E "FAILED|ERROR: AddressSanitizer|runtime error" | head -20
  passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
