#!/usr/bin/env bash
# The CUDA backend split (engine/backend): the core library and the CLI carry no CUDA NEEDED
# entry, the backend exports its entry point only, and `deepinfer info` says which backends
# loaded and why one did not. Runs with or without a GPU; exits non-zero on the first failure.
# usage: check_backend.sh needed FILE... | exports BACKEND | info CLI [BACKEND]
set -uo pipefail
mode=$1; shift
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
needed)
  for f in "$@"; do
    [ -f "$f" ] || fail "$f does not exist"
    needed=$(readelf -d "$f" | grep -E '\(NEEDED\)') || fail "readelf -d $f shows no NEEDED entry"
    if echo "$needed" | grep -Ei 'libcuda|libcudart|libcublas|libnvrtc|libnvJitLink'; then
      fail "$f needs CUDA libraries (above); they belong in libdeepinfer_cuda.so"
    fi
    echo "ok: $(basename "$f"): $(echo "$needed" | grep -oE '\[[^]]+\]' | tr '\n' ' ')"
  done ;;
exports)
  syms=$(nm -D --defined-only "$1" | awk '{print $3}' | grep -v '^$' | sort -u)
  [ "$syms" = "di_backend_cuda_v1" ] || fail "$1 exports more than di_backend_cuda_v1: $(echo $syms | head -c 400)"
  readelf -d "$1" | grep -E 'NEEDED.*libstdc\+\+' && fail "$1 needs libstdc++ (it carries its own)"
  echo "ok: $1 exports di_backend_cuda_v1 only" ;;
info)
  cli=$1; backend=${2:-}
  gpu=0
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
  # check LABEL ENV... -- PYTHON-CONDITION on `cuda` (the backend entry) and `info`
  check() {
    local label=$1 cond=$2; shift 2
    local out
    out=$(env "$@" "$cli" info) || fail "$label: deepinfer info exited $?"
    python3 - "$out" "$cond" "$label" <<'PY' || exit 1
import json, sys
info = json.loads(sys.argv[1])
names = [b["name"] for b in info["backends"]]
assert names == ["cpu", "cuda"], f"backends {names}"
cuda = info["backends"][1]
if not eval(sys.argv[2]):
    print(f"FAIL: {sys.argv[3]}: {sys.argv[2]} is false for {cuda}"); sys.exit(1)
print(f"ok: {sys.argv[3]}: {cuda}")
PY
  }
  check "DI_CUDA_BACKEND=off" 'not cuda["available"] and cuda["reason"] == "disabled by DI_CUDA_BACKEND=off"' DI_CUDA_BACKEND=off
  if [ -z "$backend" ]; then
    check "a build without CUDA" 'not cuda["available"] and "no CUDA backend" in cuda["reason"]' DI_CUDA_BACKEND=
  elif [ "$gpu" = 1 ]; then
    check "GPU host" 'cuda["available"] and cuda["devices"] > 0 and "reason" not in cuda' DI_CUDA_BACKEND=
  else
    check "host without GPU" 'not cuda["available"] and cuda["devices"] == 0 and cuda["reason"].startswith("no CUDA")' DI_CUDA_BACKEND=
    # An explicit path loads the backend even without a driver: its entry point answers.
    check "DI_CUDA_BACKEND=<backend>" "cuda['library'] == '$backend' and not cuda['available'] and cuda['reason'].startswith('no CUDA device: ')" DI_CUDA_BACKEND="$backend"
  fi
  check "DI_CUDA_BACKEND=/nonexistent" 'not cuda["available"] and "/nonexistent/libdeepinfer_cuda.so" in cuda["reason"]' DI_CUDA_BACKEND=/nonexistent/libdeepinfer_cuda.so
  ;;
*) fail "unknown mode $mode" ;;
esac
