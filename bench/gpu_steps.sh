#!/usr/bin/env bash
# Run lab steps on the GPU, each under its own time limit, the console of each name kept apart, the records
# copied out after every step. A step that would start past DEADLINE seconds (default 570) is skipped, and
# one that starts before it is cut at it, so the call ends before its own limit with the records so far.
# Usage: bench/gpu_steps.sh OUTDIR 'NAME|SECONDS|COMMAND' ...
set -uo pipefail
out=${1:?output folder}; shift
deadline=${DEADLINE:-570}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
status=0
for spec in "$@"; do
  IFS='|' read -r name limit cmd <<<"$spec"
  left=$((deadline - SECONDS))
  if [ $left -lt 10 ]; then echo "=== skipped (deadline): $cmd" | tee -a "$out/$name.txt"; status=1; continue; fi
  [ "$limit" -gt "$left" ] && limit=$left
  start=$SECONDS
  echo "=== $cmd" | tee -a "$out/$name.txt"
  timeout "$limit" bash -c "$cmd" >>"$out/$name.txt" 2>&1; rc=$?
  echo "=== rc $rc in $((SECONDS - start)) s (at $SECONDS s)" | tee -a "$out/$name.txt"
  [ $rc -eq 0 ] || status=1
  cp measurements/*.jsonl "$out/" 2>/dev/null
done
exit $status
