#!/usr/bin/env bash
# `deepinfer serve` driven by the official npm clients (`openai`, `@anthropic-ai/sdk`, installed
# by the bootstrap into tests/node_modules) on the bundled tiny model: tests/server/*.test.mjs
# with node's test runner (hostile.test.mjs: issue 25's adversarial probe), then the server's
# libFuzzer targets (HTTP request head, JSON text) under ASan for DI_SERVER_FUZZ_SECONDS (3)
# each when clang is installed. Builds the CLI if needed and makes models/tiny-v4 when missing.
# Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${DI_BUILD_DIR:-build}
if [ ! -x "$build/bin/deepinfer" ]; then
  cmake --build "$build" -j"${DI_JOBS:-$(nproc)}" --target deepinfer_cli >/dev/null 2>&1 ||
    { echo "server: cannot build deepinfer_cli"; echo "0 passed, 1 failed"; exit 1; }
fi
for pkg in openai @anthropic-ai/sdk; do
  [ -d "tests/node_modules/$pkg" ] || { echo "server: tests/node_modules/$pkg missing (run scripts/bootstrap.sh)"; echo "0 passed, 1 failed"; exit 1; }
done
model=${DI_TINY_MODEL:-models/tiny-v4}
if [ ! -f "$model/model.safetensors" ]; then
  "$build/bin/deepinfer" make-tiny-model --out "$model" --seed 0 >/dev/null ||
    { echo "server: make-tiny-model failed"; echo "0 passed, 1 failed"; exit 1; }
fi
out=$(DI_BUILD_DIR="$build" DI_TINY_MODEL="$model" node --test --test-reporter=tap tests/server/*.test.mjs 2>&1); rc=$?
pass=$(echo "$out" | grep -E '^# pass [0-9]+' | tail -1 | grep -oE '[0-9]+$' || echo 0)
fail=$(echo "$out" | grep -E '^# fail [0-9]+' | tail -1 | grep -oE '[0-9]+$' || echo 0)
pass=${pass:-0}; fail=${fail:-0}
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then fail=1; fi
# The failing tests' names and diagnostics first: the tail alone can be later tests' timings.
if [ "$fail" != 0 ]; then echo "$out" | grep -E -A30 '^\s*not ok' | head -120; echo "$out" | grep -vE '^\s*(ok|# Subtest)' | tail -20; fi
fuzz_out=$(bash tests/server/fuzz/run_libfuzzer.sh "$(pwd)" "$build/fuzz/server" "${DI_SERVER_FUZZ_SECONDS:-3}" 2>&1); frc=$?
echo "$fuzz_out" | grep -E '^== ' || true
if [ "$frc" = 0 ]; then pass=$((pass + 1)); elif [ "$frc" != 77 ]; then fail=$((fail + 1)); echo "$fuzz_out" | tail -40; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
