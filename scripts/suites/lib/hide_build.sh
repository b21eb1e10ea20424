# Sourced by the packaging suites: hide_build BUILD renames the build tree away so that what
# was installed must run without it (a leftover RUNPATH or path into build/ fails), and puts it
# back when the suite exits, however it exits. The suites of scripts/test.sh run one at a time.
# Sourcing it also makes the suite's scratch folder $tmp, removed at exit.
hide_build() {
  _di_build=$1
  _di_hidden=$1.hidden-by-$(basename "$0" .sh)
  [ -e "$_di_hidden" ] && { echo "hide_build: $_di_hidden exists (an earlier run was killed?)"; return 1; }
  mv "$_di_build" "$_di_hidden" || return 1
  trap 'unhide_build' EXIT
  trap 'exit 130' INT TERM
}
unhide_build() {
  if [ -n "${_di_hidden:-}" ] && [ -d "$_di_hidden" ]; then mv "$_di_hidden" "$_di_build"; fi
  [ -n "${_di_cleanup:-}" ] && rm -rf "$_di_cleanup"
  return 0
}
tmp=$(mktemp -d); _di_cleanup=$tmp
trap unhide_build EXIT
