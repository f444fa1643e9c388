#!/usr/bin/env bash
# Compares internal/abapref with abaplint on public abapGit repositories and grades them in the
# simulator (docs/benchmarks.md, "ABAP references against abaplint").
#
#   scripts/abap-oracle-repos.sh [--deps source[@ref]] name=source[@ref] ...
#
# source is an abapGit checkout (a folder) or a git repository (a bare mirror too); from a git
# repository the ref (default HEAD) is extracted into a temporary folder, which is removed
# afterwards. The repositories' code stays outside the project. Example:
#
#   scripts/abap-oracle-repos.sh abapGit=/mirrors/abapGit.git \
#     flight=/mirrors/abap-platform-refscen-flight.git@ABAP-platform-cloud abap2xlsx=/mirrors/abap2xlsx.git
#
# --deps gives abaplint stubs of SAP objects (github.com/abaplint/deps) so that fewer objects stop at
# a void superclass. ABAP_CLOUD_REPOS=flight (environment) makes the grading assert all-A for it.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# folder NAME SOURCE: an abapGit checkout as is, a git repository's ref extracted into $tmp/NAME;
# prints the folder below the starting folder of .abapgit.xml (src/ by default)
folder() {
  local name="$1" src="$2" ref=HEAD dir start
  case "$src" in *@*) ref="${src##*@}"; src="${src%@*}" ;; esac
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1 && [ ! -f "$src/.abapgit.xml" ]; then
    dir="$tmp/$name"
    mkdir -p "$dir"
    git -C "$src" archive "$ref" | tar -x -C "$dir"
    echo "$name: $(git -C "$src" rev-parse "$ref") of $src" >&2
  else
    dir="$(cd "$src" && pwd)"
    echo "$name: $dir" >&2
  fi
  start="$(sed -n 's:.*<STARTING_FOLDER>/*\([^<]*\)</STARTING_FOLDER>.*:\1:p' "$dir/.abapgit.xml" 2>/dev/null | head -1)"
  echo "$dir/${start:-}"
}

if [ "$1" = "--deps" ]; then
  [ "$#" -ge 3 ] || { echo "abap-oracle-repos: --deps needs a source and a repository" >&2; exit 2; }
  ABAP_ORACLE_DEPS="$(folder abaplint-deps "$2")"
  export ABAP_ORACLE_DEPS
  shift 2
fi

repos=()
for arg in "$@"; do
  name="${arg%%=*}"
  src="${arg#*=}"
  if [ "$name" = "$arg" ] || [ -z "$name" ] || [ -z "$src" ]; then
    echo "abap-oracle-repos: $arg is not name=source[@ref]" >&2
    exit 2
  fi
  repos+=("$name=$(folder "$name" "$src")")
done
list="$(IFS=,; echo "${repos[*]}")"

cd "$root"
status=0
ABAP_ORACLE_REPOS="$list" go test -count=1 -v -timeout 20m -run 'TestAgainstAbaplint' ./internal/abapref/ |
  grep -E '^(---|ok|FAIL|PASS)|compared|recall|adjudicated:' || status=1
ABAP_ORACLE_REPOS="$list" go test -count=1 -v -timeout 20m -run 'TestPublicRepositories' ./internal/sap/sapsim/ |
  grep -E '^(---|ok|FAIL|PASS)|    [a-z_]+\.go:[0-9]+:' || status=1
exit "$status"
