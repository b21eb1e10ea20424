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
cp -r /usr/include/x86_64-linux-gnu/curl /usr/include/webp /usr/include/nlohmann "$sys/include/"
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
