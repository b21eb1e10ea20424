#!/usr/bin/env bash
# Builds the server's fuzz targets (http_head_fuzzer, json_text_fuzzer) with clang's libFuzzer +
# AddressSanitizer + UBSan (leak detection on) into OUT_DIR and runs each for SECONDS from its
# seeds. Small: four sources, a few seconds to build on two cores.
# usage: run_libfuzzer.sh SOURCE_DIR OUT_DIR SECONDS
# Exit: 0 no finding, 1 a crash/leak/timeout/broken invariant (reproducer kept in OUT_DIR), 77 no clang.
set -uo pipefail
src=$1; out=$2; secs=${3:-5}
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then echo "clang++ not found: skipping"; exit 77; fi
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$src")
cache=$(command -v ccache || true)
build() {  # name sources...
  local name=$1; shift
  $cache "$cxx" "${flags[@]}" "$@" -o "$out/$name" || { echo "== $name: build failed"; return 1; }
}
build http_head_fuzzer "$src"/tests/server/fuzz/http_head_fuzzer.cpp "$src"/server/http/request_head.cpp \
  "$src"/server/http/chunked_decoder.cpp || exit 1
build json_text_fuzzer "$src"/tests/server/fuzz/json_text_fuzzer.cpp "$src"/recipe/encoding/json_text.cpp \
  "$src"/recipe/encoding/py_json.cpp || exit 1
rc=0
for name in http_head_fuzzer json_text_fuzzer; do
  seeds="$src/tests/server/fuzz/seeds/${name%_fuzzer}"
  mkdir -p "$out/corpus/$name"
  log="$out/$name.log"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$out/$name" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/corpus/$name" "$seeds" >"$log" 2>&1
  r=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  if [ "$r" = 0 ]; then echo "== $name: ok ($runs inputs in ${secs}s)"; else echo "== $name: FAILED (rc $r)"; tail -30 "$log"; rc=1; fi
done
exit $rc
