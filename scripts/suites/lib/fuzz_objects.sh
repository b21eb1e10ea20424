# Sourced by the fuzz builds: fuzz_objects compiles library sources for a fuzz build, DI_JOBS
# (default 2) at a time, into OBJ_DIR. Usage: fuzz_objects OBJ_DIR COMPILER_AND_FLAGS... -- SOURCES...
# (sources as paths relative to the current folder). Leaves the object files in the array `objs`;
# returns 1 (after naming the source) when a source does not compile.
#
# An object is reused only when the same command built it and neither its source nor any header
# that source includes (as the compiler listed them with -MMD) changed since: an object compiled
# against an older header must never be linked, which an mtime check of the .cpp alone allowed.
fuzz_objects() {
  local dir=$1; shift
  local cmd=()
  while [ "$1" != "--" ]; do cmd+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  objs=()
  local pids=() srcs=() src obj
  for src in "$@"; do
    obj="$dir/$(echo "$src" | tr / _ | sed 's/\.cpp$/.o/')"
    objs+=("$obj")
    fuzz_object_fresh "$obj" "${cmd[*]} $src" && continue
    rm -f "$obj.cmd"
    { "${cmd[@]}" -MMD -MF "$obj.d" -c "$src" -o "$obj" && echo "${cmd[*]} $src" >"$obj.cmd"; } &
    pids+=($!); srcs+=("$src")
    if [ ${#pids[@]} -ge "${DI_JOBS:-2}" ]; then
      wait "${pids[0]}" || { echo "fuzz_objects: ${srcs[0]} did not compile"; return 1; }
      pids=("${pids[@]:1}"); srcs=("${srcs[@]:1}")
    fi
  done
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "fuzz_objects: ${srcs[$i]} did not compile"; return 1; }
  done
}

# fuzz_object_fresh OBJ KEY: true when OBJ was built by the command KEY and is newer than every
# file of its dependency list OBJ.d (the source and the headers it includes).
fuzz_object_fresh() {
  local obj=$1 key=$2 dep
  [ -f "$obj" ] && [ -f "$obj.d" ] && [ -f "$obj.cmd" ] && [ "$(cat "$obj.cmd")" = "$key" ] || return 1
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$obj.d"); do
    [ -e "$dep" ] && ! [ "$dep" -nt "$obj" ] || return 1
  done
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
