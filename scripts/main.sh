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
