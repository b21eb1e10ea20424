#!/usr/bin/env bash
# Install suite: `cmake --install` into a fresh temporary prefix, then, with the build tree
# hidden (renamed for the duration), build the C example outside the tree against the prefix
# with pkg-config and with find_package(DeepInfer), run a greedy generation with each on the
# bundled tiny model and compare it with the installed CLI; check the layout, the SONAME,
# $ORIGIN-relative RUNPATHs, a moved prefix, and the .deb CPack makes. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/suites/lib/packaging_suite.sh

# The CUDA backend is its own target; a build with CUDA installs it too.
targets="deepinfer deepinfer_cli"
cmake --build "$build" --target help | grep -q '^deepinfer_cuda:' && targets="$targets deepinfer_cuda"
cmake --build "$build" --target $targets >/dev/null || { bad "build $targets"; finish; }
ensure_tiny_model

source scripts/suites/lib/hide_build.sh

# The .deb, while the build tree is still there (CPack installs from it).
if (cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1); then
  deb=$(ls "$tmp"/deb/deepinfer_*.deb 2>/dev/null | head -1)
  files=$(dpkg-deb -c "$deb" 2>/dev/null)
  depends=$(dpkg-deb -f "$deb" Depends 2>/dev/null)
  if echo "$files" | grep -q '/usr/lib/.*libdeepinfer\.so\.1$\|/usr/lib/.*libdeepinfer\.so\.1 ->' &&
     echo "$files" | grep -q '/usr/include/deepinfer\.h' && echo "$files" | grep -q '/usr/bin/deepinfer$' &&
     echo "$depends" | grep -q 'libc6'; then
    ok "cpack .deb ($(basename "$deb"), Depends: ${depends:0:80}...)"
  else
    echo "$files" | head -20; echo "Depends: $depends"; bad "cpack .deb contents"
  fi
else
  tail -20 "$tmp/cpack.log"; bad "cpack -G DEB"
fi

prefix=$tmp/prefix
if cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then ok "cmake --install"
else tail -20 "$tmp/install.log"; bad "cmake --install"; finish; fi
cp -r "$root/examples/c" "$tmp/example"
hide_build "$build" || { bad "hide the build tree"; finish; }

# Layout and SONAME.
missing=""
for f in lib/libdeepinfer.so.1.0.0 lib/libdeepinfer.so.1 lib/libdeepinfer.so include/deepinfer.h \
         lib/pkgconfig/deepinfer.pc lib/cmake/DeepInfer/DeepInferConfig.cmake \
         lib/cmake/DeepInfer/DeepInferConfigVersion.cmake bin/deepinfer; do
  [ -e "$prefix/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "layout" || bad "layout: missing$missing"
soname=$(readelf -d "$prefix/lib/libdeepinfer.so.1.0.0" | grep -oE 'Library soname: \[[^]]+\]')
[ "$soname" = "Library soname: [libdeepinfer.so.1]" ] && ok "SONAME libdeepinfer.so.1" || bad "SONAME: $soname"

# No installed ELF file may point at the build tree: every RUNPATH is $ORIGIN-relative.
rp_bad=""
while IFS= read -r f; do
  file "$f" | grep -q ELF || continue
  rp=$(readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -oE '\[[^]]*\]')
  [ -z "$rp" ] && continue
  echo "$rp" | grep -qE '^\[\$ORIGIN[^]:]*(:\$ORIGIN[^]:]*)*\]$' || rp_bad="$rp_bad $(basename "$f")=$rp"
done < <(find "$prefix" -type f)
[ -z "$rp_bad" ] && ok "RUNPATHs \$ORIGIN-relative ($(readelf -d "$prefix/bin/deepinfer" | grep -oE 'RUNPATH.*'))" ||
  bad "RUNPATHs:$rp_bad"

# The installed CUDA backend loads from the prefix (and finds cuBLAS) wherever the core does.
if [ -f "$prefix/lib/libdeepinfer_cuda.so" ]; then
  info=$(DI_CUDA_BACKEND="$prefix/lib/libdeepinfer_cuda.so" "$prefix/bin/deepinfer" info)
  if echo "$info" | python3 -c '
import json, sys
cuda = json.load(sys.stdin)["backends"][1]
assert cuda.get("library") == sys.argv[1] and (cuda["available"] or cuda["reason"].startswith("no CUDA device")), cuda
' "$prefix/lib/libdeepinfer_cuda.so"; then ok "installed libdeepinfer_cuda.so loads"
  else echo "$info"; bad "installed libdeepinfer_cuda.so"; fi
fi

# The example, built with pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
prompt="The capital of France is"
if cc -std=c99 -Wall -Werror $(pkg-config --cflags deepinfer) "$tmp/example/generate.c" -o "$tmp/gen_pc" \
     $(pkg-config --libs deepinfer) -Wl,-rpath,"$(pkg-config --variable=libdir deepinfer)" 2>"$tmp/cc.log"; then
  ok "pkg-config build ($(pkg-config --modversion deepinfer))"
else cat "$tmp/cc.log"; bad "pkg-config build"; fi

# The same example through find_package(DeepInfer).
if cmake -S "$tmp/example" -B "$tmp/example-build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/fp.log" 2>&1 &&
   cmake --build "$tmp/example-build" >>"$tmp/fp.log" 2>&1; then ok "find_package(DeepInfer) build"
else tail -20 "$tmp/fp.log"; bad "find_package(DeepInfer) build"; fi

# The reference: the installed CLI, same prompt ids, greedy.
ids=$(echo "{\"text\": \"$prompt\"}" | "$prefix/bin/deepinfer" tokenize --tokenizer "$model" |
      python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["ids"])))')
want=$("$prefix/bin/deepinfer" generate --model "$model" --prompt-ids "$ids" --max-tokens 16 --temperature 0 --json |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["text"])')
for exe in "$tmp/gen_pc" "$tmp/example-build/example_generate"; do
  name=$(basename "$exe")
  out=$(env -u LD_LIBRARY_PATH "$exe" "$model" "$prompt" 16 2>&1)
  text=$(echo "$out" | sed '$d'); text=${text%$'\n'}
  if echo "$out" | tail -1 | grep -q '^engine: {.*"device":"cpu"' && [ -n "$want" ] && [ "$text" = "$want" ]; then
    ok "$name generates the CLI's greedy text (${#want} bytes)"
  else
    echo "$out" | tail -5; echo "want: $want"; bad "$name generation"
  fi
done

# The prefix moves as a whole ($ORIGIN RUNPATHs, pkg-config's ${pcfiledir}).
mv "$prefix" "$tmp/moved"
if env -u LD_LIBRARY_PATH "$tmp/moved/bin/deepinfer" info | grep -q '"backends"' &&
   [ "$(PKG_CONFIG_PATH=$tmp/moved/lib/pkgconfig pkg-config --variable=libdir deepinfer)" -ef "$tmp/moved/lib" ]; then
  ok "moved prefix: bin/deepinfer runs, deepinfer.pc follows"
else bad "moved prefix"; fi
finish
