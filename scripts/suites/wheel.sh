#!/usr/bin/env bash
# Python wheel suite: `pip wheel bindings/python` (Debian's setuptools and pybind11, no build
# isolation, nothing downloaded) against DI_BUILD_DIR, installed into a plain venv (no system
# site-packages) in a temp dir; with the build tree hidden the venv's deepinfer must generate
# the build tree CLI's greedy tokens, and a native module of another interpreter must say so.
# Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/suites/lib/packaging_suite.sh
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
source scripts/suites/lib/hide_build.sh

cmake --build "$build" --target deepinfer deepinfer_cli >/dev/null || { bad "build"; finish; }
ensure_tiny_model

# -O0 keeps CI's compile short; a release wheel leaves CFLAGS alone.
if DI_BUILD_DIR=$build CFLAGS="-O0 -g0" "$py" -m pip wheel --no-build-isolation --no-deps --no-cache-dir \
     --quiet -w "$tmp/dist" ./bindings/python >"$tmp/wheel.log" 2>&1; then
  whl=$(ls "$tmp"/dist/deepinfer-*.whl | head -1)
  ok "pip wheel bindings/python ($(basename "$whl"), $(( $(stat -c %s "$whl") / 1024 )) KiB)"
else
  tail -30 "$tmp/wheel.log"; bad "pip wheel bindings/python"; finish
fi
listing=$("$py" -m zipfile -l "$whl")
if echo "$listing" | grep -q 'deepinfer/libdeepinfer\.so\.1 ' && echo "$listing" | grep -qE 'deepinfer/_native\.cpython-[0-9]+-.*\.so '; then
  ok "the wheel carries libdeepinfer.so.1 next to _native"
else echo "$listing"; bad "wheel contents"; fi
# DI_BUILD_DIR is where setuptools builds: nothing is left to go stale in the source tree.
if [ -d "$build/python-setuptools" ] && [ ! -e bindings/python/build ]; then ok "setuptools built under DI_BUILD_DIR"
else bad "setuptools build folder: $(ls -d bindings/python/build "$build/python-setuptools" 2>&1 | tr '\n' ' ')"; fi

# The reference, from the build tree's CLI: greedy ids of a prompt given as ids.
prompt_ids=0,100,200,300
want=$("$build/bin/deepinfer" generate --model "$model" --prompt-ids $prompt_ids --max-tokens 6 --temperature 0 \
       --ignore-eos --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["ids"])')

"$py" -m venv "$tmp/venv" || { bad "python3 -m venv"; finish; }
if "$tmp/venv/bin/python" -m pip install --no-index --no-deps --quiet "$whl" >"$tmp/pip.log" 2>&1; then
  ok "pip install of the wheel into a plain venv"
else tail -20 "$tmp/pip.log"; bad "pip install into the venv"; finish; fi

hide_build "$build" || { bad "hide the build tree"; finish; }
cd "$tmp"
got=$("$tmp/venv/bin/python" - "$model" "$tmp/venv" <<'PY' 2>&1
import sys, deepinfer
assert deepinfer.__file__.startswith(sys.argv[2]), deepinfer.__file__
backends = [b["name"] for b in deepinfer.build_info()["backends"]]
assert backends == ["cpu", "cuda"], backends
with deepinfer.LLM(sys.argv[1], max_num_seqs=1) as llm:
    out = llm.generate([[0, 100, 200, 300]], deepinfer.SamplingParams(temperature=0, max_tokens=6, ignore_eos=True))
print(out[0].outputs[0].token_ids)
PY
)
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "venv, build tree hidden: greedy ids = the CLI's $want"
else echo "venv: $got"; echo "cli:  $want"; bad "venv generation"; fi

# A native module built for another interpreter: a plain message naming both.
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
mkdir -p "$tmp/other" && cp -r "$site/deepinfer" "$tmp/other/"
for f in "$tmp"/other/deepinfer/_native.*.so; do mv "$f" "$tmp/other/deepinfer/_native.cpython-399-x86_64-linux-gnu.so"; done
msg=$(cd "$tmp/other" && "$tmp/venv/bin/python" -c 'import deepinfer' 2>&1 | tail -1)
if echo "$msg" | grep -q "was built for cpython-399-x86_64-linux-gnu, but this is Python"; then
  ok "another interpreter's module is named plainly"
else echo "$msg"; bad "interpreter mismatch message"; fi
finish
