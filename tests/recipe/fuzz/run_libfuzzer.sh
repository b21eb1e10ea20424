#!/usr/bin/env bash
# Builds the recipe request fuzzer with clang (libFuzzer + AddressSanitizer + UBSan, leak
# detection on) into BUILD_DIR and runs it for SECONDS seconds from the seed corpus.
# usage: run_libfuzzer.sh SOURCE_DIR BUILD_DIR SECONDS
# Exit: 0 no finding, 1 a crash/leak/timeout (the reproducer is kept in BUILD_DIR), 77 no clang.
set -uo pipefail
src=$1; secs=${3:-10}
mkdir -p "$2/corpus" && out=$(cd "$2" && pwd) || exit 1
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then echo "clang++ not found: skipping"; exit 77; fi
cd "$src" || exit 1
source scripts/suites/lib/fuzz_objects.sh
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -I. -DNDEBUG)
p=recipe/protocol
sources=(base/*.cpp $p/api_error.cpp $p/model_aliases.cpp $p/request_fields.cpp $p/request_steps.cpp
         $p/sampling_fields.cpp $p/tool_fields.cpp $p/*/request.cpp recipe/encoding/*.cpp
         recipe/prepare/*.cpp recipe/image/*.cpp tests/recipe/fuzz/request_fuzzer.cpp)
fuzz_objects "$out/objs" $(command -v ccache) "$cxx" "${flags[@]}" -- "${sources[@]}" || exit 1
# prepare() resolves images for vision recipes: libcurl, libwebp and libjpeg-turbo come along.
"$cxx" -fsanitize=fuzzer,address,undefined "${objs[@]}" -lcurl -lwebp -lturbojpeg \
  -o "$out/recipe_request_fuzzer" || exit 1
cp -n tests/recipe/fuzz/seeds/* "$out/corpus/" 2>/dev/null
cd "$out"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ./recipe_request_fuzzer -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=8192 \
  -print_final_stats=1 corpus 2>&1 | tail -25
exit "${PIPESTATUS[0]}"
