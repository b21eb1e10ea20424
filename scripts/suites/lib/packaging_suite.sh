# What the packaging suites (install, wheel, jar, go_module) share: the repository root, the
# build tree and tiny model they use, and their pass/fail tally ending in "N passed, M failed".
# Sourced from the repository root.
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
model=${DI_TINY_MODEL:-$root/models/tiny-v4}
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit; }
# The bundled tiny model, made unless it is there (needs the CLI built).
ensure_tiny_model() {
  [ -f "$model/model.safetensors" ] && return 0
  "$build/bin/deepinfer" make-tiny-model --out "$model" --seed 0 >/dev/null || { bad "make-tiny-model"; finish; }
}
