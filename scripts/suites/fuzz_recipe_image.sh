#!/usr/bin/env bash
# Bounded libFuzzer runs of the recipe/image parsers (tests/fuzz/recipe_image_*.cpp: data URLs,
# base64, the png/gif (stb), jpeg (libjpeg-turbo) and webp decoders, the token fit and destination rules) under
# AddressSanitizer with leak detection. Each target runs DI_FUZZ_SECONDS (default 4) from its
# seeds; a crash, hang (>10 s per input), leak or out-of-memory fails it. Prints
# "N passed, M failed" (one per target).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=${DI_BUILD_DIR:-$root/build}/fuzz/recipe_image
secs=${DI_FUZZ_SECONDS:-4}
source scripts/suites/lib/fuzz_objects.sh
fuzz_toolchain fuzz_recipe_image || exit 1
cflags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -I"$root" $(pkg-config --cflags libwebp libcurl libturbojpeg))
libs=($(pkg-config --libs libwebp libcurl libturbojpeg) -lpthread)

# The library sources once, instrumented for coverage and ASan (two at a time); then one
# binary per target.
fuzz_objects "$out/obj" $launcher "$cxx" "${cflags[@]}" -fsanitize=fuzzer-no-link,address -- recipe/image/*.cpp ||
  { echo "0 passed, 1 failed (build)"; exit 1; }

passed=0; failed=0
for target in tests/fuzz/recipe_image_*.cpp; do
  name=$(basename "$target" .cpp)
  bin="$out/$name"
  if ! $launcher "$cxx" "${cflags[@]}" -fsanitize=fuzzer,address "$target" "${objs[@]}" \
       "${libs[@]}" -o "$bin"; then
    echo "== $name: build failed"; failed=$((failed + 1)); continue
  fi
  corpus="$out/corpus/$name"
  mkdir -p "$corpus"
  seeds=()
  [ -d "tests/fuzz/seeds/$name" ] && seeds+=("tests/fuzz/seeds/$name")
  [ "$name" = recipe_image_decode ] && seeds+=("tests/fixtures/recipe_image")
  log="$out/$name.log"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$out/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  if [ "$rc" = 0 ]; then
    echo "== $name: ok ($runs inputs in ${secs}s)"; passed=$((passed + 1))
  else
    echo "== $name: FAILED (rc $rc)"; tail -40 "$log"; failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
