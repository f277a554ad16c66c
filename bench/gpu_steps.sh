#!/usr/bin/env bash
# Run lab steps on the GPU, each under its own time limit, the console of each name kept apart, the records
# copied out after every step. Usage: bench/gpu_steps.sh OUTDIR 'NAME|SECONDS|COMMAND' ...
set -uo pipefail
out=${1:?output folder}; shift
export PYTHONUNBUFFERED=1
mkdir -p "$out"
status=0
for spec in "$@"; do
  IFS='|' read -r name limit cmd <<<"$spec"
  echo "=== $cmd" | tee -a "$out/$name.txt"
  timeout "$limit" bash -c "$cmd" >>"$out/$name.txt" 2>&1; rc=$?
  echo "=== rc $rc" | tee -a "$out/$name.txt"
  [ $rc -eq 0 ] || status=1
  cp measurements/*.jsonl "$out/" 2>/dev/null
done
exit $status
