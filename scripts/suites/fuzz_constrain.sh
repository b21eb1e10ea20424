#!/usr/bin/env bash
# Bounded libFuzzer runs of the structured-output compilers (tests/fuzz/constrain_*.cpp: JSON
# Schema alone and embedded in EBNF, regex, EBNF) under AddressSanitizer + UBSan with leak
# detection. By default each target replays its committed seeds (tests/fuzz/seeds/<target>) once, so
# the suite is deterministic; DI_CONSTRAIN_FUZZ_SECONDS=N mutates from them for N seconds instead
# (exploration: what it finds goes to tests/fuzz/crashes/ until fixed). A crash, a broken matcher
# invariant (abort), a hang (>10 s per input), a leak or out-of-memory fails a target.
# Prints "N passed, M failed" (one per target).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=${DI_BUILD_DIR:-$root/build}/fuzz/constrain
case "$out" in /*) ;; *) out="$root/$out" ;; esac
secs=${DI_CONSTRAIN_FUZZ_SECONDS:-0}
source scripts/suites/lib/fuzz_objects.sh
fuzz_toolchain fuzz_constrain || exit 1
cflags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -I"$root")
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)

# engine/constrain and the base library once, instrumented (two at a time); then one binary per target.
fuzz_objects "$out/obj" $launcher "$cxx" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer-no-link -- engine/constrain/*.cpp base/*.cpp ||
  { echo "0 passed, 1 failed (build)"; exit 1; }

passed=0; failed=0
for target in tests/fuzz/constrain_*.cpp; do
  name=$(basename "$target" .cpp)
  bin="$out/$name"
  if ! $launcher "$cxx" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer "$target" "${objs[@]}" -lpthread -o "$bin"; then
    echo "== $name: build failed"; failed=$((failed + 1)); continue
  fi
  corpus="$out/corpus/$name"
  mkdir -p "$corpus"
  seeds=()
  [ -d "tests/fuzz/seeds/$name" ] && seeds+=("tests/fuzz/seeds/$name")
  log="$out/$name.log"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" $([ "$secs" -gt 0 ] && echo "-max_total_time=$secs" || echo "-runs=0") -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$out/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  if [ "$rc" = 0 ]; then
    echo "== $name: ok ($runs inputs$([ "$secs" -gt 0 ] && echo " in ${secs}s"))"; passed=$((passed + 1))
  else
    echo "== $name: FAILED (rc $rc)"; tail -40 "$log"; failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
