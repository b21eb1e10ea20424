#!/usr/bin/env bash
# The whole product on the GPU machine, as a user runs it: the full build (libdeepinfer, the CUDA
# backend, the CLI with its server) against the system libraries carried in .gpu-deps (never on
# the machine's global library path: the binaries' RUNPATHs point at them), then `deepinfer
# serve` on random-weight checkpoints saved by transformers, measured by bench/serving_bench.sh
# (TTFT / ITL / end-to-end percentiles, output tok/s, and the server's own step breakdown).
# Prepare here: bash scripts/gpu-deps.sh (after a build, for the tokenizers); carry .gpu-deps.
# Usage: bash scripts/gpu-product.sh [llama] [v4]    (default: llama). Logs and rows go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-product}
mkdir -p "$out"
deps=/tmp/deepinfer-sysdeps
tok=/tmp/deepinfer-serving-tokenizers
rm -rf "$deps" "$tok"
mkdir -p "$deps" "$tok"
tar -C "$deps" -xJf .gpu-deps/sysdeps.tar.xz && tar -C "$tok" -xJf .gpu-deps/serving-tokenizers.tar.xz ||
  { echo "gpu-product: run scripts/gpu-deps.sh here and carry .gpu-deps"; exit 1; }
build=${DI_FULL_BUILD_DIR:-/tmp/deepinfer-full-build}
t0=$(date +%s)
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DDI_CUDA=ON -DDI_BINDINGS=OFF -DDI_TESTS=OFF \
  -DDI_DEPS_PREFIX="$deps" >"$out/product-configure.log" 2>&1 ||
  { tail -30 "$out/product-configure.log"; echo "gpu-product: FAIL (configure)"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target deepinfer_cli deepinfer_cuda bench_serving >"$out/product-build.log" 2>&1 ||
  { grep -B3 -A12 -E "error" "$out/product-build.log" | head -60; echo "gpu-product: FAIL (build)"; exit 1; }
echo "product build: $(( $(date +%s) - t0 )) s"
"$build/bin/deepinfer" info | tee "$out/info.json"

families=("$@")
[ ${#families[@]} -gt 0 ] || families=(llama)
rc=0
for fam in "${families[@]}"; do
  ckpt=/tmp/deepinfer-serving-$fam
  if [ ! -f "$ckpt/config.json" ]; then
    python3 bench/make_serving_checkpoint.py "$fam" "$ckpt" "$tok/$fam" 2>&1 | grep -v -i warn | tail -3
  fi
  # SERVING_ARGS replaces the levels and sizes below (e.g. to fit a short lease).
  case $fam in
    llama) args=(--input-len 1000 --output-len 128 --concurrency 1,8,64 --num-prompts 64) ;;
    v4) args=(--input-len 1000 --output-len 128 --concurrency 1,8,32 --num-prompts 32) ;;
    *) echo "gpu-product: unknown family $fam"; rc=1; continue ;;
  esac
  [ -n "${SERVING_ARGS:-}" ] && read -r -a args <<<"$SERVING_ARGS"
  echo "== serving $fam: ${args[*]}"
  DI_BUILD_DIR=$build bash bench/serving_bench.sh "$ckpt" --append "$out/serving_rows.md" "${args[@]}" \
    2>&1 | tee "$out/serving_$fam.log" | tail -40 || rc=1
done
echo "gpu-product: $([ $rc = 0 ] && echo done || echo FAIL) in $(( $(date +%s) - t0 )) s"
exit $rc
