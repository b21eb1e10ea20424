#!/usr/bin/env bash
# The main job: build (bootstrapping a fresh machine if needed) and show what DeepInfer does.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh >/dev/null
build=${DI_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target deepinfer_cli example_core >/dev/null
"$build/bin/deepinfer" info
"$build/bin/example_core"
# The bundled tiny DeepSeek-V4: RANDOM weights from seed 0 (its text is gibberish), made once.
[ -f models/tiny-v4/model.safetensors ] || "$build/bin/deepinfer" make-tiny-model --out models/tiny-v4 --seed 0
"$build/bin/deepinfer" generate --model models/tiny-v4 --prompt "The capital of France is" \
  --max-tokens 24 --temperature 0.8 --seed 0 --stream
