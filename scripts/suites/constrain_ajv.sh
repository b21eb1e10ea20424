#!/usr/bin/env bash
# Structured output checked by a validator nobody here wrote: runs the constrained-generation
# tests on the tiny DeepSeek-V4 (tests/constrain_tiny: di_submit with JSON Schemas, the recipe's
# response_format and strict tool calls, preemption), which write every finished output with its
# schema as JSON Lines, then validates each with ajv (draft 2020-12 + ajv-formats).
# Prints "N passed, M failed" (ajv verdicts; a failing generation test counts as failed).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${DI_BUILD_DIR:-build}
if [ ! -d tests/node_modules/ajv ] || [ ! -d tests/node_modules/ajv-formats ]; then
  echo "tests/node_modules/ajv missing: run scripts/bootstrap.sh"; echo "0 passed, 1 failed"; exit 1
fi
if ! cmake --build "$build" -j"${DI_JOBS:-$(nproc)}" --target test_constrain_tiny deepinfer_cli >"$build/di-constrain-ajv-build.log" 2>&1; then
  grep -E "error" -A3 "$build/di-constrain-ajv-build.log" | head -40; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp /tmp/di-constrain-ajv.XXXXXX.jsonl)
trap 'rm -f "$out"' EXIT
gtest=$(DI_CONSTRAIN_OUT="$out" timeout 300 "$build/bin/test_constrain_tiny" --gtest_brief=1 2>&1); rc=$?
gfail=0
if [ "$rc" != 0 ]; then
  echo "$gtest" | grep -E "FAILED|Failure|error" | head -30
  gfail=1
fi
verdict=$(node tests/constrain/validate_ajv.mjs "$out" 2>&1)
echo "$verdict" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$' | head -30
line=$(echo "$verdict" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
[ -z "$line" ] && line="0 passed, 1 failed"
p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
f=$((f + gfail))
echo "$p passed, $f failed"
[ "$f" = 0 ]
