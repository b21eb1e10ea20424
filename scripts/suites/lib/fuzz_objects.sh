# Sourced by the fuzz suites: fuzz_objects compiles library sources for a fuzz build, DI_JOBS
# (default 2) at a time, into OBJ_DIR. Usage: fuzz_objects OBJ_DIR COMPILER_AND_FLAGS... -- SOURCES...
# Leaves the object files in the array `objs`; returns 1 (after printing the suite's failure
# line) when a source does not compile.
fuzz_objects() {
  local dir=$1; shift
  local cmd=()
  while [ "$1" != "--" ]; do cmd+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  objs=()
  local pids=() src obj
  for src in "$@"; do
    obj="$dir/$(echo "$src" | tr / _ | sed 's/\.cpp$/.o/')"
    objs+=("$obj")
    "${cmd[@]}" -c "$src" -o "$obj" &
    pids+=($!)
    if [ ${#pids[@]} -ge "${DI_JOBS:-2}" ]; then
      wait "${pids[0]}" || { echo "0 passed, 1 failed (compile $src)"; return 1; }
      pids=("${pids[@]:1}")
    fi
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "0 passed, 1 failed (compile)"; return 1; }; done
}

# fuzz_toolchain SUITE: sets cxx (DI_FUZZ_CXX, default clang++-14) and launcher (ccache when it is
# there); without the compiler prints the suite's failure line and returns 1.
fuzz_toolchain() {
  cxx=${DI_FUZZ_CXX:-clang++-14}
  if ! command -v "$cxx" >/dev/null; then
    echo "$1: $cxx not found (bootstrap installs clang-14)"; echo "0 passed, 1 failed"; return 1
  fi
  launcher=$(command -v ccache || true)
}
