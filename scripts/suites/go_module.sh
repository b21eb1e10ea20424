#!/usr/bin/env bash
# Go module suite: deepinfer.dev/go used the way a program outside this tree uses it. An
# installed prefix (cmake --install into a temp dir) gives the cgo flags through pkg-config; a
# module in a temp dir requires deepinfer.dev/go (a copy of bindings/go, as an unpacked source
# release), vendors it, the copy is deleted, the build tree hidden, and the vendored build must
# generate the CLI's greedy tokens. Standard library only, nothing downloaded.
# Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/suites/lib/packaging_suite.sh
source scripts/suites/lib/hide_build.sh
command -v go >/dev/null || { bad "go not found (scripts/bootstrap.sh installs golang-go)"; finish; }
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 GOCACHE=$tmp/go-cache GOPATH=$tmp/gopath

cmake --build "$build" --target deepinfer deepinfer_cli >/dev/null || { bad "build"; finish; }
ensure_tiny_model
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { tail "$tmp/install.log"; bad "cmake --install"; finish; }
want=$("$build/bin/deepinfer" generate --model "$model" --prompt-ids 0,100,200,300 --max-tokens 6 --temperature 0 \
       --ignore-eos --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ids"])')

mkdir -p "$tmp/src" "$tmp/app"
cp -r bindings/go "$tmp/src/deepinfer-go"
cp examples/go/generate/main.go "$tmp/app/"
cat >"$tmp/app/go.mod" <<MOD
module example.com/app

go 1.19

require deepinfer.dev/go v1.0.0

replace deepinfer.dev/go => ../src/deepinfer-go
MOD
cd "$tmp/app"
if go mod vendor >"$tmp/vendor.log" 2>&1 && [ -f vendor/deepinfer.dev/go/cgo.go ]; then ok "go mod vendor (deepinfer.dev/go)"
else cat "$tmp/vendor.log"; bad "go mod vendor"; finish; fi
rm -rf "$tmp/src"

hide_build "$build" || { bad "hide the build tree"; finish; }
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir deepinfer)
if CGO_LDFLAGS="-Wl,-rpath,$libdir" go build -mod=vendor -o app . >"$tmp/build.log" 2>&1; then
  ok "vendored build with cgo flags from pkg-config deepinfer"
else cat "$tmp/build.log"; bad "vendored go build"; finish; fi
out=$(env -u LD_LIBRARY_PATH ./app "$model" 6 0 100 200 300 2>&1)
got=$(echo "$out" | head -1 | sed -E 's/ /, /g')
if [ -n "$want" ] && [ "$got" = "$want" ] && echo "$out" | grep -q '^build: {.*"backends"'; then
  ok "outside the tree, build tree hidden: greedy ids = the CLI's $want"
else echo "$out" | tail -5; echo "cli: $want"; bad "generation"; fi
finish
