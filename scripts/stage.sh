#!/usr/bin/env bash
# Runs one CI stage and says how long it took: scripts/stage.sh NAME command [args...].
# Prints "stage NAME: 123 s (ok|failed, exit N)" after the command and exits with its status.
# With STAGE_LOG set, the same line is appended to that file too (.ci/run prints it as a
# summary at the end).
set -uo pipefail
name=$1
shift
start=$(date +%s)
"$@"
status=$?
took=$(($(date +%s) - start))
outcome=ok
[ "$status" -eq 0 ] || outcome="failed, exit $status"
line="stage $name: $took s ($outcome)"
echo "$line"
if [ -n "${STAGE_LOG:-}" ]; then echo "$line" >>"$STAGE_LOG"; fi
exit "$status"
