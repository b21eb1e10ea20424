#!/usr/bin/env bash
# The engine alone on serving_bench.sh's workload: `deepinfer generate --batch-file` runs N
# requests of INPUT_LEN random token ids each, OUTPUT_LEN tokens each (EOS ignored, greedy), at
# most C sequences at a time, in one process. The CLI's own start (model load, graph capture) is
# timed on a one-token run and taken off, so the rate printed is what the engine gives the
# server to serve: the ceiling for `deepinfer serve` at concurrency C.
# Environment: DI_BUILD_DIR (default build/).
# usage: bash bench/engine_alone.sh MODEL_DIR N INPUT_LEN OUTPUT_LEN C
set -euo pipefail
[ $# -eq 5 ] || { sed -n 2,8p "$0" >&2; exit 2; }
model=$1 n=$2 in_len=$3 out_len=$4 c=$5
cd "$(dirname "$0")/.."
bin=${DI_BUILD_DIR:-build}/bin/deepinfer
[ -x "$bin" ] || { echo "engine_alone.sh: build $bin first" >&2; exit 1; }
vocab=$(grep -oE '"vocab_size" *: *[0-9]+' "$model/config.json" | head -1 | grep -oE '[0-9]+$')
batch=$(mktemp) log=$(mktemp)
trap 'rm -f "$batch" "$log"' EXIT
# The same id range as serving_bench.sh's default: [1000, min(vocab, 30000)).
awk -v n="$n" -v len="$in_len" -v out="$out_len" -v vocab="$vocab" 'BEGIN {
  srand(17); hi = vocab < 30000 ? vocab : 30000; lo = hi > 2000 ? 1000 : 1;
  for (i = 0; i < n; ++i) {
    line = "{\"prompt_ids\": [";
    for (k = 0; k < len; ++k) line = line (k ? "," : "") int(lo + rand() * (hi - lo));
    print line "], \"max_tokens\": " out ", \"ignore_eos\": true, \"temperature\": 0}";
  }
}' >"$batch"
now() { date +%s.%N; }
t0=$(now)
run() { "$bin" generate --model "$model" --max-num-seqs "$c" "$@" >/dev/null 2>"$log" || { tail -20 "$log" >&2; exit 1; }; }
run --prompt-ids 1000,1001 --max-tokens 1
t1=$(now)
run --batch-file "$batch" --json
t2=$(now)
awk -v n="$n" -v out="$out_len" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v c="$c" 'BEGIN {
  wall = (t2 - t1) - (t1 - t0);
  printf "engine alone (generate --batch-file, %d x %d output tokens, %d at a time): %.1f output tok/s over %.2f s\n",
    n, out, c, n * out / wall, wall }'
