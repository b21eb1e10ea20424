#!/usr/bin/env bash
# The C layer under the bindings, under valgrind memcheck: tests/capi_engine/binding_cycles.c
# calls libdeepinfer.so (the build of scripts/test.sh) as the Python, Go and Java glue does
# (engine create / generate / destroy cycles on the bundled tiny model, poll and callback
# delivery, cross-thread cancel, a request outliving its engine, recipe + parser, errors), then
# the Python binding's glue (bindings/python/tests/valgrind_glue.py) over the same library.
# Any invalid access, use of uninitialised memory or definite leak fails it.
# Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
cycles=${DI_VALGRIND_CYCLES:-2}
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

if ! command -v valgrind >/dev/null; then
  echo "0 passed, 1 failed (valgrind not found: scripts/bootstrap.sh installs it)"; exit 1
fi
if ! cmake --build "$build" --target binding_cycles deepinfer_cli >"$build/capi-valgrind-build.log" 2>&1; then
  tail -20 "$build/capi-valgrind-build.log"; echo "0 passed, 1 failed (build)"; exit 1
fi
model=${DI_TINY_MODEL:-$root/models/tiny-v4}
if [ ! -f "$model/model.safetensors" ]; then
  "$build/bin/deepinfer" make-tiny-model --out "$model" --seed 0 >/dev/null || { echo "0 passed, 1 failed (make-tiny-model)"; exit 1; }
fi

# The driver's own checks first, natively (fast, and a clear message if the library misbehaves).
if out=$("$build/bin/binding_cycles" "$model" "$cycles" 2>&1); then ok "binding_cycles natively: $out"
else echo "$out" | tail -20; bad "binding_cycles natively"; fi

log=$build/capi-valgrind.log
start=$(date +%s)
valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --track-origins=no --suppressions=tests/capi/valgrind.supp \
  --log-file="$log" "$build/bin/binding_cycles" "$model" "$cycles" >/dev/null 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
summary=$(grep -E "ERROR SUMMARY" "$log" | tail -1 | sed -E 's/^==[0-9]+== //')
leaks=$(grep -E "definitely lost:" "$log" | tail -1 | sed -E 's/^==[0-9]+== +//')
if [ "$rc" = 0 ]; then
  ok "valgrind memcheck, $cycles engine cycles in ${secs}s: $summary; ${leaks:-no leaks}"
else
  grep -E -A12 "Invalid|uninitialised|definitely lost in" "$log" | head -80
  bad "valgrind memcheck (exit $rc): $summary; $leaks"
fi

# The Python glue (pybind11 module over the same library) under valgrind too: PYTHONMALLOC=malloc
# so the interpreter's allocations are visible; only definite leaks and access errors fail it.
py=/usr/bin/python3
if ! ls "$build"/python/deepinfer/_native*.so >/dev/null 2>&1; then
  echo "skip Python glue: build/python not built (DI_BINDINGS=OFF)"
else
  log=$build/capi-valgrind-python.log
  start=$(date +%s)
  out=$(PYTHONMALLOC=malloc PYTHONPATH=$build/python valgrind --error-exitcode=9 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/capi/valgrind.supp \
    --log-file="$log" "$py" bindings/python/tests/valgrind_glue.py "$model" 2>&1)
  rc=$?
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E "ERROR SUMMARY" "$log" | tail -1 | sed -E 's/^==[0-9]+== //')
  leaks=$(grep -E "definitely lost:" "$log" | tail -1 | sed -E 's/^==[0-9]+== +//')
  if [ "$rc" = 0 ] && [ "$out" = done ]; then
    ok "valgrind memcheck, Python glue in ${secs}s: $summary; ${leaks:-no leaks}"
  else
    echo "$out" | tail -20
    grep -E -A12 "Invalid|uninitialised|definitely lost in" "$log" | head -80
    bad "valgrind memcheck, Python glue (exit $rc): $summary; $leaks"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
