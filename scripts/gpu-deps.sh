#!/usr/bin/env bash
# Fills .gpu-deps/ (git-ignored) with the header-only and source dependencies the GPU build needs
# (nlohmann/json headers, googletest sources) from this machine's Debian packages, so that a bare
# GPU machine can build scripts/gpu/CMakeLists.txt. Carry .gpu-deps along with the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh >/dev/null
rm -rf .gpu-deps
mkdir -p .gpu-deps/include
cp -r /usr/include/nlohmann .gpu-deps/include/
cp -r /usr/src/googletest .gpu-deps/googletest
du -sh .gpu-deps
