#!/usr/bin/env bash
# Python binding suite: pytest with Debian's python3 on the build tree's package (build/python,
# made by the deepinfer_python target), then the notebook-style example on the bundled tiny
# model. Prints "N passed, M failed" last.
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

# The installed package (a wheel in a plain venv, build tree hidden): scripts/suites/wheel.sh.
if out=$("$py" examples/python/notebook.py "$DI_TINY_MODEL" 2>&1) && echo "$out" | grep -q "^done$"; then
  ok "examples/python/notebook.py"
else
  echo "$out" | tail -20; bad "examples/python/notebook.py"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
