#!/usr/bin/env bash
# `deepinfer serve` under load: bench/server_load.mjs sends REQUESTS streamed chat requests at
# CONCURRENCY over loopback; the ceiling, measured in the same run, is the engine alone
# (`deepinfer generate --batch-file`, the same number of requests and completion tokens, at most
# CONCURRENCY sequences at a time), so the ratio is what HTTP + recipe + parsing leave of it.
# usage: bash bench/server.sh [REQUESTS] [CONCURRENCY] [MAX_TOKENS] [--append FILE COMMIT DEVICE]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DI_BUILD_DIR:-build}
n=${1:-300}; c=${2:-32}; mt=${3:-32}
bin="$build/bin/deepinfer"
model=${DI_TINY_MODEL:-models/tiny-v4}
[ -f "$model/model.safetensors" ] || "$bin" make-tiny-model --out "$model" --seed 0 >/dev/null
log=$(mktemp); batch=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log" "$batch"' EXIT
"$bin" serve --model "$model" --port 0 --served-model-name tiny-v4 --max-num-seqs "$c" 2>"$log" &
pid=$!
for _ in $(seq 600); do grep -q '"listening"' "$log" && break; sleep 0.1; done
port=$(grep '"listening"' "$log" | head -1 | sed -E 's/.*"port":([0-9]+).*/\1/')
out=$(node bench/server_load.mjs --url "http://127.0.0.1:$port" --requests "$n" --concurrency "$c" --max-tokens "$mt")
echo "$out" | grep -v '^{'
kill "$pid"; wait "$pid" 2>/dev/null || true
stats=$(echo "$out" | grep '^{')
tokens=$(echo "$stats" | sed -E 's/.*"tokens":([0-9]+).*/\1/')
# Ceiling: the engine alone generates the same completion tokens (spread evenly, EOS ignored).
per=$(( (tokens + n - 1) / n ))
for i in $(seq "$n"); do echo "{\"prompt\": \"Request $i: write about the sea.\", \"max_tokens\": $per, \"ignore_eos\": 1, \"temperature\": 0.8, \"seed\": $i}"; done >"$batch"
# The CLI's own start (model load) is timed on a one-token run and taken off.
t0=$(date +%s.%N)
"$bin" generate --model "$model" --prompt "x" --max-tokens 1 --max-num-seqs "$c" >/dev/null
t1=$(date +%s.%N)
"$bin" generate --model "$model" --batch-file "$batch" --max-num-seqs "$c" --json >/dev/null
t2=$(date +%s.%N)
engine_tps=$(echo "$n * $per / (($t2 - $t1) - ($t1 - $t0))" | bc -l)
server_tps=$(echo "$stats" | sed -E 's/.*"tok_per_s":([0-9.e+-]+).*/\1/')
ratio=$(echo "100 * $server_tps / $engine_tps" | bc -l)
printf 'engine alone (generate --batch-file, %d x %d tokens, %d at a time): %.1f tok/s; server/engine %.0f%%\n' "$n" "$per" "$c" "$engine_tps" "$ratio"
if [ "${4:-}" = "--append" ]; then
  file=$5 commit=$6 device=$7
  p() { echo "$stats" | sed -E "s/.*\"$1\":([0-9.e+-]+).*/\1/"; }
  printf '| %s | %s | %s | deepinfer serve, tiny-v4 (CPU), %d streamed chat requests at concurrency %d, max_tokens %d, loopback | %.1f tok/s, %.2f req/s; TTFT p50/p90/p99 %.3f/%.3f/%.3f s; e2e p50/p90/p99 %.3f/%.3f/%.3f s | engine alone %.1f tok/s | %.0f%% | `bash bench/server.sh %d %d %d` |\n' \
    "$(date -u +%F)" "$commit" "$device" "$n" "$c" "$mt" "$server_tps" "$(p req_per_s)" "$(p ttft_p50)" "$(p ttft_p90)" "$(p ttft_p99)" \
    "$(p e2e_p50)" "$(p e2e_p90)" "$(p e2e_p99)" "$engine_tps" "$ratio" "$n" "$c" "$mt" >>"$file"
fi
