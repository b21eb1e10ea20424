#!/usr/bin/env bash
# Builds the recipe output fuzzer with clang (libFuzzer + AddressSanitizer + UBSan, leak
# detection on) into BUILD_DIR and runs it for SECONDS seconds from the seed corpus.
# usage: run_libfuzzer.sh SOURCE_DIR BUILD_DIR SECONDS
# Exit: 0 no finding, 1 a crash/leak/timeout/invariant (the reproducer is kept in BUILD_DIR),
# 77 no clang.
set -uo pipefail
src=$1; out=$2; secs=${3:-10}
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then echo "clang++ not found: skipping"; exit 77; fi
mkdir -p "$out/objs" "$out/corpus"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
       -I"$src" -DNDEBUG)
cache=$(command -v ccache || true)
p="$src/recipe/protocol"
sources=("$src"/base/*.cpp "$p"/api_error.cpp "$p"/event_generator.cpp "$p"/output_parser.cpp
         "$p"/*/events.cpp "$p"/responses/custom_tool_input.cpp "$src"/recipe/stream/marker_matcher.cpp
         "$src"/recipe/stream/output_state_machine.cpp "$src"/recipe/stream/parser_options.cpp
         "$src"/recipe/stream/stream_parser.cpp "$src"/tests/recipe_stream/fuzz/output_fuzzer.cpp)
objs=()
pids=()
for f in "${sources[@]}"; do
  o="$out/objs/$(echo "${f#$src/}" | tr / _).o"
  objs+=("$o")
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then
    $cache "$cxx" "${flags[@]}" -c "$f" -o "$o" &
    pids+=($!)
    if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
"$cxx" -fsanitize=fuzzer,address,undefined "${objs[@]}" -o "$out/recipe_output_fuzzer" || exit 1
cp -n "$src"/tests/recipe_stream/fuzz/seeds/* "$out/corpus/" 2>/dev/null
cd "$out"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ./recipe_output_fuzzer -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 corpus 2>&1 | tail -25
exit "${PIPESTATUS[0]}"
