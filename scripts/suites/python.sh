#!/usr/bin/env bash
# Python binding suite: pytest with Debian's python3 on the build tree's package (build/python,
# made by the deepinfer_python target), `pip install bindings/python` into a scratch target, then
# the notebook-style example on the bundled tiny model. Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
# Debian's interpreter has pybind11 and pytest; a python3 earlier on PATH may not.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
export DI_BUILD_DIR=$build
export DI_TINY_MODEL=${DI_TINY_MODEL:-$root/models/tiny-v4}
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

if ! ls "$build"/python/deepinfer/_native*.so >/dev/null 2>&1; then
  cmake --build "$build" --target deepinfer_python deepinfer_python_package >/dev/null ||
    { bad "build deepinfer_python"; echo "$passed passed, $failed failed"; exit 1; }
fi
if [ ! -f "$DI_TINY_MODEL/model.safetensors" ]; then
  "$build/bin/deepinfer" make-tiny-model --out "$DI_TINY_MODEL" --seed 0 >/dev/null ||
    bad "make-tiny-model"
fi

export PYTHONPATH=$build/python
log=$build/python-tests.log
# -rfEP: failures and errors, plus what passed tests printed (only the leak test prints).
"$py" -X faulthandler -m pytest -q -p no:cacheprovider bindings/python/tests -rfEP --durations=5 >"$log" 2>&1
rc=$?
summary=$(grep -E '^=*.* in [0-9.]+s' "$log" | tail -1)
p=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
f=0
for n in $(echo "$summary" | grep -oE '[0-9]+ (failed|errors?)' | grep -oE '^[0-9]+'); do f=$((f + n)); done
[ -z "$p" ] && p=0
if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
passed=$((passed + p)); failed=$((failed + f))
echo "pytest: ${summary:-no summary}"
grep -E "engine cycles in" "$log" | head -1
[ "$f" != 0 ] && tail -60 "$log"

# `pip install bindings/python` as the README documents it (setuptools and pybind11 from Debian,
# no build isolation), into a scratch target: the installed package, not build/python, must
# import and generate the same greedy tokens as the CMake-built one. -O0 keeps the compile short.
pip_target=$build/python-pip
rm -rf "$pip_target"
if ! "$py" -m pip --version >/dev/null 2>&1; then
  bad "pip install bindings/python: no pip for $py (scripts/bootstrap.sh installs python3-pip)"
elif ! CFLAGS="-O0 -g0" "$py" -m pip install --no-build-isolation --no-deps --no-cache-dir --quiet \
      --target "$pip_target" ./bindings/python >"$build/python-pip.log" 2>&1; then
  tail -30 "$build/python-pip.log"; bad "pip install bindings/python"
else
  greedy='import json, sys, deepinfer
assert deepinfer._native.__file__.startswith(sys.argv[1]), deepinfer._native.__file__
with deepinfer.LLM(sys.argv[2], max_num_seqs=1) as llm:
    out = llm.generate(["Hello \U0001F600"], deepinfer.SamplingParams(temperature=0, max_tokens=4, ignore_eos=True))
print(json.dumps([out[0].outputs[0].token_ids, out[0].outputs[0].text]))'
  installed=$(PYTHONPATH=$pip_target "$py" -c "$greedy" "$pip_target" "$DI_TINY_MODEL" 2>&1)
  built=$(PYTHONPATH=$build/python "$py" -c "$greedy" "$build/python" "$DI_TINY_MODEL" 2>&1)
  if [ -n "$installed" ] && [ "$installed" = "$built" ] && echo "$installed" | grep -qE '^\[\[[0-9]+, [0-9]+, [0-9]+, [0-9]+\], '; then
    ok "pip install bindings/python: the installed package generates as the build tree's"
  else
    echo "installed: $installed"; echo "build tree: $built"; bad "pip install bindings/python: installed package"
  fi
fi

if out=$("$py" examples/python/notebook.py "$DI_TINY_MODEL" 2>&1) && echo "$out" | grep -q "^done$"; then
  ok "examples/python/notebook.py"
else
  echo "$out" | tail -20; bad "examples/python/notebook.py"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
