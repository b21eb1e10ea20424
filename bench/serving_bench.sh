#!/usr/bin/env bash
# `deepinfer serve` on MODEL_DIR (a free loopback port, a fresh API key), bench_serving against
# it, the server stopped. Flags after MODEL_DIR go to bench_serving (see bench/serving_bench.cpp),
# except:
#   --append FILE   append one row per concurrency level to FILE in bench/RESULTS.md's columns
#                   (commit: git HEAD; device: the GPU's name, else DI_BENCH_DEVICE or the CPU's)
#   --serve ARG     one more argument for `deepinfer serve` (repeatable), e.g. --serve --max-num-seqs --serve 256
# Without --token-range, prompt ids are drawn from [1000, 30000) cut to the model's vocab_size.
# The server gets room for the highest concurrency C: --max-num-seqs C, and workers and
# connections per client C + 16 (at least the server's defaults); --serve arguments come after
# these, so they win.
# Environment: DI_BUILD_DIR (default build/). Exit status: bench_serving's (0: every request got
# its full output), or 1 when the server did not start.
# usage: bash bench/serving_bench.sh MODEL_DIR [--append FILE] [--serve ARG]... [bench_serving flags]
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,10p "$0" >&2; exit 2; }
model_dir=$1; shift
cd "$(dirname "$0")/.."
build=${DI_BUILD_DIR:-build}
bin=$build/bin/deepinfer
bench=$build/bin/bench_serving
[ -x "$bin" ] && [ -x "$bench" ] || { echo "serving_bench.sh: build $bin and $bench first" >&2; exit 1; }
[ -f "$model_dir/config.json" ] || { echo "serving_bench.sh: $model_dir has no config.json" >&2; exit 1; }

serve_args=(); bench_args=(); append=""; has_range=0; levels=1,8,64,256
while [ $# -gt 0 ]; do
  case $1 in
    --append) append=$2; shift 2 ;;
    --serve) serve_args+=("$2"); shift 2 ;;
    --token-range) has_range=1; bench_args+=("$1" "$2"); shift 2 ;;
    --concurrency) levels=$2; bench_args+=("$1" "$2"); shift 2 ;;
    *) bench_args+=("$1"); shift ;;
  esac
done
if [ "$has_range" = 0 ]; then
  vocab=$(grep -oE '"vocab_size" *: *[0-9]+' "$model_dir/config.json" | head -1 | grep -oE '[0-9]+$' || echo 0)
  hi=$(( vocab > 0 && vocab < 30000 ? vocab : 30000 ))
  lo=$(( hi > 2000 ? 1000 : 1 ))
  bench_args+=(--token-range "$lo,$hi")
fi
max_c=1
for c in ${levels//,/ }; do [[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -gt "$max_c" ] && max_c=$c; done
room=$(( max_c + 16 > 256 ? max_c + 16 : 256 ))
conns=$(( room > 1024 ? room : 1024 ))
serve_args=(--max-num-seqs "$max_c" --workers "$room" --max-connections "$conns"
            --max-connections-per-client "$(( room > 128 ? room : 128 ))" ${serve_args[@]+"${serve_args[@]}"})
name=$(basename "$model_dir")
key="sk-bench-$RANDOM$RANDOM$RANDOM"
log=$(mktemp)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -f "$log"
}
trap cleanup EXIT
# --port 0: the kernel picks a free port; the server names it in its "listening" log line.
"$bin" serve --model "$model_dir" --port 0 --api-key "$key" --served-model-name "$name" ${serve_args[@]+"${serve_args[@]}"} 2>"$log" &
pid=$!
port=""
for _ in $(seq 1200); do
  port=$(grep '"listening"' "$log" | head -1 | grep -oE '"port":[0-9]+' | cut -d: -f2 || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { echo "serving_bench.sh: the server did not start" >&2; cat "$log" >&2; exit 1; }

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
[ -n "$device" ] || device=${DI_BENCH_DEVICE:-"CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || echo unknown)"}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
md=()
[ -n "$append" ] && md=(--markdown "$append")
rc=0
"$bench" --port "$port" --api-key "$key" --model "$name" --commit "$commit" --device "$device" \
  ${md[@]+"${md[@]}"} ${bench_args[@]+"${bench_args[@]}"} || rc=$?
exit "$rc"
