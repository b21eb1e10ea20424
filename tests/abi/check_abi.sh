#!/usr/bin/env bash
# ABI checks on the built library and the public header. Usage:
#   check_abi.sh header-c99|header-c11|header-cxx17|namespace  HEADER
#   check_abi.sh exports|soname|undefined|no-libstdcxx         LIBRARY [EXPORTS_FILE]
# Each mode exits 0 when the check holds and prints what is wrong otherwise.
set -euo pipefail
mode=$1
target=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

flags="-Wall -Wextra -Wpedantic -Werror"
case "$mode" in
  header-c99|header-c11)
    std=${mode#header-}
    printf '#include "%s"\nint main(void) { return (int)di_abi_version() == 0; }\n' "$target" >"$tmp/t.c"
    gcc -std="$std" $flags -Wstrict-prototypes -c "$tmp/t.c" -o "$tmp/t.o"
    ;;
  header-cxx17)
    printf '#include "%s"\nint main() { return di_abi_version() == 0; }\n' "$target" >"$tmp/t.cpp"
    g++ -std=c++17 $flags -c "$tmp/t.cpp" -o "$tmp/t.o"
    ;;
  namespace)
    # Every identifier the header declares or defines must start with di_/DI_ (or be the
    # include guard). Preprocess with only the header's own macros and look at what remains.
    # System includes are dropped so only the header's own names remain.
    grep -v '^#include' "$target" | gcc -E -dD -P -undef -std=c99 -x c - >"$tmp/pp.h"
    bad=$(
      {
        # macros the header defines
        grep -oE '^#define [A-Za-z_][A-Za-z0-9_]*' "$tmp/pp.h" | awk '{print $2}' | grep -vE '^_+STDC'
        # typedef names, struct tags, enumerators and function names
        grep -v '^#' "$tmp/pp.h" |
          grep -oE '(typedef [^;]*[ *]([A-Za-z_][A-Za-z0-9_]*) *;|struct [A-Za-z_][A-Za-z0-9_]*|^ *[A-Z_][A-Z0-9_]* *=|[A-Za-z_][A-Za-z0-9_]* *\()' |
          sed -E 's/^typedef .*[ *]([A-Za-z_][A-Za-z0-9_]*) *;$/\1/; s/^struct //; s/ *=$//; s/ *\($//; s/^ *//'
      } | sort -u | grep -vE '^(di_|DI_|DEEPINFER_H$)' |
        grep -vE '^(void|int|char|const|return|sizeof|int32_t|int64_t|uint32_t|uint16_t|uint8_t|uint64_t|size_t|double|float)$' || true
    )
    if [ -n "$bad" ]; then
      echo "public identifiers without the di_/DI_ prefix:"; echo "$bad"; exit 1
    fi
    ;;
  exports)
    exports_file=$3
    nm -D --defined-only "$target" | awk '{print $3}' | sed 's/@.*//' | grep -v '^DI_1$' | sort -u >"$tmp/actual"
    sort -u "$exports_file" | grep -v '^#' | grep -v '^$' >"$tmp/expected"
    if ! diff -u "$tmp/expected" "$tmp/actual"; then
      echo "exported symbols differ from $exports_file ('-' expected only, '+' exported only)"; exit 1
    fi
    # every exported symbol carries the version node
    unversioned=$(readelf --dyn-syms -W "$target" | awk '$5=="GLOBAL" && $7!="UND" {print $8}' | grep -v '@DI_1' | grep -v '^DI_1$' || true)
    if [ -n "$unversioned" ]; then echo "exports without the DI_1 version node:"; echo "$unversioned"; exit 1; fi
    ;;
  soname)
    soname=$(readelf -d "$target" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    [ "$soname" = "libdeepinfer.so.1" ] || { echo "SONAME is '$soname', expected libdeepinfer.so.1"; exit 1; }
    ;;
  no-libstdcxx)
    if readelf -d "$target" | grep -E 'NEEDED.*(libstdc\+\+|libgcc_s)'; then
      echo "the library depends on the C++ runtime; it must carry its own"; exit 1
    fi
    if nm -D --defined-only "$target" | awk '{print $3}' | grep -E '^_Z'; then
      echo "C++ symbols leak from the library"; exit 1
    fi
    ;;
  undefined)
    # Every undefined symbol must be provided by a needed library (ldd -r reports the rest).
    out=$(ldd -r "$target" 2>&1 || true)
    if echo "$out" | grep -q 'undefined symbol'; then
      echo "$out" | grep 'undefined symbol'; exit 1
    fi
    ;;
  *)
    echo "unknown mode $mode"; exit 2 ;;
esac
echo "ok: $mode"
