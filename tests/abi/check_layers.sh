#!/usr/bin/env bash
# The layering rules of ARCHITECTURE.md, checked on the sources' #include lines: each folder
# below may include only the folders named for it (and the standard and system headers).
#   base/     base/
#   kernels/  base/ kernels/
#   engine/   base/ kernels/ engine/ request/
#   recipe/   base/ recipe/ request/
#   request/  base/ request/
#   server/   base/ server/ and deepinfer.h (it is a client of the C ABI, like any binding)
# Usage: check_layers.sh ROOT. Prints each offending line; exits 1 when there is one.
set -u
root=${1:?usage: check_layers.sh ROOT}
cd "$root" || exit 2
status=0
check() {
  local dir=$1 allowed=$2
  [ -d "$dir" ] || return 0
  # Project includes are quoted and start with a top-level folder name.
  while IFS= read -r line; do
    local inc=${line#*\"}
    inc=${inc%%\"*}
    case "$inc" in
      */*) ;;
      *) [ "$dir" = server ] && [ "$inc" = deepinfer.h ] && continue
         continue ;;  # same-folder or system-style quoted headers
    esac
    local top=${inc%%/*}
    [ -d "$top" ] || continue  # not a project folder (e.g. "cuda_runtime.h" style paths)
    case " $allowed " in *" $top "*) continue ;; esac
    echo "layer violation ($dir/ may include: $allowed): $line"
    status=1
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$dir" --include='*.h' --include='*.cpp' \
             --include='*.cu' --include='*.cuh' --include='*.c')
}
check base "base"
check kernels "base kernels"
check engine "base kernels engine request"
check recipe "base recipe request"
check request "base request"
check server "base server"
exit $status
