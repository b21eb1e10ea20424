#!/usr/bin/env bash
# Runs every test suite: bootstrap if needed, configure and build once into build/, run ctest
# (GPU-labelled tests only where a GPU is present) and each binding's suite, then print one
# closing line "N passed, M failed". Exit status is non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
jobs=${DI_JOBS:-$(nproc)}

bash scripts/bootstrap.sh || { echo "0 passed, 1 failed (bootstrap)"; exit 1; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${DI_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; echo "0 passed, 1 failed (configure)"; exit 1; }
cmake --build "$build" -j"$jobs" 2>&1 | grep -E "error|warning: unused|Error" ; build_rc=${PIPESTATUS[0]}
if [ "$build_rc" != 0 ]; then
  cmake --build "$build" -j1 2>&1 | tail -40
  echo "0 passed, 1 failed (build)"; exit 1
fi
echo "== build: $SECONDS s (bootstrap, configure, build)"

passed=0; failed=0
t_phase=$SECONDS  # each line says how long its phase took, so CI's time budget can be watched
count() {  # count NAME RC PASSED FAILED
  passed=$((passed + $3)); failed=$((failed + $4))
  echo "== $1: $3 passed, $4 failed ($((SECONDS - t_phase)) s)"
  t_phase=$SECONDS
}

# ctest: GPU tests need a GPU; everything else always runs.
label_args=()
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  label_args=(-LE gpu)
fi
ctest --test-dir "$build" -j"$jobs" --output-on-failure "${label_args[@]}" --timeout 900 \
  >"$build/ctest.log" 2>&1
# "100% tests passed, 0 tests failed out of 9" (CMake 3.25) or "100% tests passed out of 9" (newer)
summary=$(grep -E "tests passed(, [0-9]+ tests failed)? out of [0-9]+" "$build/ctest.log" | tail -1)
total=$(echo "$summary" | sed -E 's/.*out of ([0-9]+).*/\1/')
nfail=$(echo "$summary" | grep -oE '[0-9]+ tests failed' | grep -oE '^[0-9]+' || echo 0)
if [ -z "$summary" ]; then tail -50 "$build/ctest.log"; count ctest 1 0 1
else
  [ "$nfail" != 0 ] && grep -E "\(Failed\)|\(Timeout\)|\(SEGFAULT\)|Exception" "$build/ctest.log" | head -50
  count ctest 0 $((total - nfail)) "$nfail"
fi

# Binding suites register themselves as scripts/suites/*.sh; each prints "N passed, M failed".
for suite in scripts/suites/*.sh; do
  [ -f "$suite" ] || continue
  name=$(basename "$suite" .sh)
  out=$(DI_BUILD_DIR="$build" bash "$suite" 2>&1); rc=$?
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ]; then echo "$out" | tail -30; count "$name" "$rc" 0 1; continue; fi
  p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  [ "$f" != 0 ] && echo "$out" | tail -40
  count "$name" "$rc" "$p" "$f"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
