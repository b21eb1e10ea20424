#!/usr/bin/env bash
# Go binding suite: `go test -race` with GODEBUG=cgocheck=2 against the build tree's
# libdeepinfer.so (the leak test runs in a second pass without -race, whose shadow memory would
# hide the measurement), go vet, then the chat example on the bundled tiny model. Standard
# library only, nothing downloaded. Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
export DI_BUILD_DIR=$build
export DI_TINY_MODEL=${DI_TINY_MODEL:-$root/models/tiny-v4}
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
export GOCACHE=${GOCACHE:-$build/go-cache}
# The binding takes its cgo flags from pkg-config: the build tree's deepinfer.pc.
export PKG_CONFIG_PATH=$build/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export CGO_LDFLAGS="-Wl,-rpath,$build/lib"
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

if ! command -v go >/dev/null; then
  echo "0 passed, 1 failed (go not found: scripts/bootstrap.sh installs golang-go)"; exit 1
fi
if [ ! -f "$build/lib/libdeepinfer.so" ]; then
  cmake --build "$build" --target deepinfer deepinfer_cli >/dev/null || { echo "0 passed, 1 failed (build)"; exit 1; }
fi
if [ ! -f "$DI_TINY_MODEL/model.safetensors" ]; then
  "$build/bin/deepinfer" make-tiny-model --out "$DI_TINY_MODEL" --seed 0 >/dev/null || bad "make-tiny-model"
fi

count_json() {  # count_json LOG: add go test -json per-test results
  local p f
  p=$(grep -cE '"Action":"pass","Package":"[^"]*","Test":' "$1")
  f=$(grep -cE '"Action":"fail","Package":"[^"]*","Test":' "$1")
  passed=$((passed + p)); failed=$((failed + f))
  echo "$2: $p passed, $f failed"
}

(cd bindings/go && GODEBUG=cgocheck=2 go test -race -count=1 -timeout 30m -json . >"$build/go-race.json" 2>&1)
rc=$?
count_json "$build/go-race.json" "go test -race"
if [ "$rc" != 0 ]; then
  grep -E '"Output"' "$build/go-race.json" | sed -E 's/.*"Output":"(.*)"}$/\1/' | grep -vE '^=== (RUN|PAUSE|CONT)' | tail -40
  grep -qE '"Action":"fail","Package":"[^"]*","Test":' "$build/go-race.json" || bad "go test -race (rc=$rc, no failing test named)"
fi

# Two malloc arenas (as the Java suite) keep glibc's per-thread arenas from adding RSS noise.
(cd bindings/go && MALLOC_ARENA_MAX=2 GODEBUG=cgocheck=2 go test -count=1 -timeout 30m -json -run 'TestCreateGenerateDestroyCycles' . >"$build/go-leak.json" 2>&1)
rc=$?
count_json "$build/go-leak.json" "go test (leak)"
grep -oE '[0-9]+ engine cycles in [^"]*KiB' "$build/go-leak.json" | head -1
[ "$rc" != 0 ] && tail -20 "$build/go-leak.json"

if (cd bindings/go && go vet . 2>&1); then ok "go vet"; else bad "go vet"; fi

if out=$(cd examples/go && go run ./chat "$DI_TINY_MODEL" 2>&1) && echo "$out" | grep -q '^data: \[DONE\]$'; then
  ok "examples/go/chat"
else
  echo "$out" | tail -20; bad "examples/go/chat"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
