#!/usr/bin/env bash
# The serving benchmark end to end on the bundled tiny model (CPU): bench/serving_bench.sh starts
# `deepinfer serve`, bench_serving sends 4 streamed requests at concurrency 1 then 2, and the
# JSON lines and the markdown block must carry every field with counts that add up (requests,
# fixed prompt and output lengths, engine steps, forward inside the step). Speeds are not
# checked. Then bench_serving's own errors: a bad flag, a wrong key. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${DI_BUILD_DIR:-build}
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit; }

if [ ! -x "$build/bin/deepinfer" ] || [ ! -x "$build/bin/bench_serving" ]; then
  cmake --build "$build" -j"${DI_JOBS:-$(nproc)}" --target deepinfer_cli bench_serving >/dev/null 2>&1 ||
    { bad "cannot build deepinfer_cli and bench_serving"; finish; }
fi
model=${DI_TINY_MODEL:-models/tiny-v4}
if [ ! -f "$model/model.safetensors" ]; then
  "$build/bin/deepinfer" make-tiny-model --out "$model" --seed 0 >/dev/null || { bad "make-tiny-model"; finish; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$(DI_BUILD_DIR="$build" bash bench/serving_bench.sh "$model" --num-prompts 4 --concurrency 1,2 \
        --input-len 16 --output-len 8 --json "$tmp/levels.jsonl" --append "$tmp/rows.md" 2>&1); rc=$?
if [ "$rc" = 0 ]; then ok "serving_bench.sh exits 0"; else bad "serving_bench.sh rc=$rc: $out"; fi
if echo "$out" | grep -q '^== concurrency 1: 4 requests (4 ok, 0 failed), prompt 16 / output 8 tokens$' &&
   echo "$out" | grep -q '^== concurrency 2: 4 requests (4 ok, 0 failed)' &&
   [ "$(echo "$out" | grep -c 'TTFT ms  p50')" = 2 ] && [ "$(echo "$out" | grep -c 'model-only forward mean')" = 2 ]; then
  ok "report names every level, its counts, latencies and the engine's step"
else
  bad "report: $out"
fi
if node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const must = (c, m) => { if (!c) { console.error(m, JSON.stringify(lines)); process.exit(1); } };
  must(lines.length === 2, "two levels");
  lines.forEach((l, i) => {
    must(l.concurrency === [1, 2][i], "concurrency");
    must(l.requests === 4 && l.ok === 4 && l.failed === 0, "request counts");
    must(l.prompt_tokens_min === 16 && l.prompt_tokens_max === 16, "fixed prompt length (usage)");
    must(l.output_tokens === 32 && l.output_tokens_min === 8 && l.output_tokens_max === 8, "fixed output length");
    for (const k of ["ttft_ms", "itl_ms", "e2e_ms"])
      must(l[k].p50 >= 0 && l[k].p50 <= l[k].p90 && l[k].p90 <= l[k].p99, k + " percentiles ordered");
    must(l.e2e_ms.p50 >= l.ttft_ms.p50, "e2e after ttft");
    must(l.output_tok_per_s > 0 && l.duration_s > 0, "throughput");
    const e = l.engine;
    must(e && e.steps >= 8 && e.steps <= 4 * 8, "engine steps: 8 decode tokens each, 1..4 rows a step");
    const sum = Object.values(e.phase_mean_ms).reduce((a, b) => a + b, 0);
    must(Math.abs(sum - e.step_mean_ms) <= 1e-6 * Math.max(1, e.step_mean_ms) + 1e-6, "phases tile the step");
    must(e.forward_mean_ms > 0 && e.forward_mean_ms <= e.step_mean_ms, "forward inside the step");
    must(e.step_over_forward >= 1 - 1e-9, "step / forward >= 1");
    must(e.busy_share > 0 && e.busy_share <= 1, "busy share in (0, 1]");
  });' "$tmp/levels.jsonl"; then
  ok "JSON lines: fixed lengths, ordered percentiles, engine steps and phases consistent"
else
  bad "JSON lines"
fi
# RESULTS.md's 8 columns: date | commit | device | what | measured | ceiling | ratio | notes.
if [ -f "$tmp/rows.md" ] && [ "$(wc -l <"$tmp/rows.md")" = 2 ] &&
   [ "$(awk -F' [|] ' '{print NF}' "$tmp/rows.md" | sort -u)" = 8 ] &&
   grep -q 'concurrency 1, 4 requests, prompt 16 random ids, 8 output tokens .* (4/4 ok)' "$tmp/rows.md" &&
   grep -q 'concurrency 2, 4 requests, .* (4/4 ok).*model-only forward [0-9.]* ms/step' "$tmp/rows.md"; then
  ok "markdown rows: one per level in RESULTS.md's columns"
else
  bad "markdown: $(cat "$tmp/rows.md" 2>/dev/null)"
fi

"$build/bin/bench_serving" --port 1 --model m --concurrency 0 >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" = 2 ] && grep -q -- '--concurrency: expected positive integers' "$tmp/err"; then ok "bad flag: exit 2 with the reason"
else bad "bad flag: rc=$rc $(cat "$tmp/err")"; fi

# A server that refuses the key: every request fails, the first error names the status.
log=$tmp/serve.log
"$build/bin/deepinfer" serve --model "$model" --port 0 --api-key sk-right 2>"$log" & pid=$!
port=""
for _ in $(seq 600); do
  port=$(grep '"listening"' "$log" | head -1 | grep -oE '"port":[0-9]+' | cut -d: -f2 || true)
  [ -n "$port" ] && break; sleep 0.1
done
if [ -n "$port" ]; then
  out=$("$build/bin/bench_serving" --port "$port" --api-key sk-wrong --model tiny-v4 --num-prompts 2 \
          --concurrency 1 --input-len 4 --output-len 2 --token-range 1,100 2>&1); rc=$?
  if [ "$rc" = 1 ] && echo "$out" | grep -q '(0 ok, 2 failed)' && echo "$out" | grep -q 'first error: HTTP 401'; then
    ok "wrong key: exit 1, failures counted, HTTP 401 reported"
  else
    bad "wrong key: rc=$rc $out"
  fi
else
  bad "second server did not start: $(cat "$log")"
fi
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
finish
