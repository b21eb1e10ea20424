#!/usr/bin/env bash
# Fuzzes the model-output parser (tests/fuzz/recipe_stream_parser_fuzz.cpp) for a few seconds
# with libFuzzer + ASan/UBSan, seeded with the recipe_stream fixtures. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${DI_BUILD_DIR:-build}
out="$build/fuzz/recipe_stream"
seconds=${DI_FUZZ_SECONDS:-5}
source scripts/suites/lib/fuzz_objects.sh
fuzz_toolchain recipe_stream_fuzz || exit 1

# The parser's sources only: base/, recipe/stream and the protocol's output side; it needs
# nothing else of the recipe.
sources=(base/*.cpp recipe/stream/*.cpp recipe/protocol/api_error.cpp recipe/protocol/protocol.cpp
         recipe/protocol/event_generator.cpp recipe/protocol/output_parser.cpp
         recipe/protocol/chat_completions/events.cpp recipe/protocol/responses/events.cpp
         recipe/protocol/responses/custom_tool_input.cpp recipe/protocol/messages/events.cpp)
flags=(-std=c++20 -O1 -gline-tables-only -I. -fsanitize=address,undefined -fno-sanitize-recover=undefined)
fuzz_objects "$out/obj" $launcher "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -- "${sources[@]}" ||
  { echo "0 passed, 1 failed (build)"; exit 1; }
$launcher "$cxx" "${flags[@]}" -fsanitize=fuzzer tests/fuzz/recipe_stream_parser_fuzz.cpp "${objs[@]}" \
  -o "$out/recipe_stream_parser_fuzz" || { echo "0 passed, 1 failed (link)"; exit 1; }

# Seeds: each fixture case's output with header bytes matching the case (tests/fuzz/seeds).
rm -rf "$out/seeds" "$out/work"; mkdir -p "$out/seeds" "$out/work"
cp tests/fuzz/seeds/recipe_stream_parser/* "$out/seeds/"

"$out/recipe_stream_parser_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -dict=tests/fuzz/recipe_stream.dict -print_final_stats=1 "$out/work" "$out/seeds" \
  >"$out/fuzz.log" 2>&1
rc=$?
grep -E "^stat::number_of_executed_units|Done [0-9]+ runs" "$out/fuzz.log" | tail -2
if [ $rc -ne 0 ]; then
  tail -40 "$out/fuzz.log"; echo "0 passed, 1 failed"; exit 1
fi
echo "1 passed, 0 failed"
