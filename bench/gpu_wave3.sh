#!/usr/bin/env bash
# A01's timeline re-measured (the poison timed apart) with its transcripts, and C07's calibration.
# Usage: bench/gpu_wave3.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
mkdir -p "$out"
tutor() { python3 -m tutor_build.cli "$@"; }
status=0
run() { echo "=== $*"; "$@" 2>&1 | tee -a "$out/log.txt"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1; }
run tutor labs build A01 --vendor cuda
run tutor labs verify A01
run tutor labs bench A01 --lab timeline --course
bench/a01_transcripts.sh "$out"
run tutor labs verify C07 --vendor python
run tutor labs bench C07 --lab calibration --course
cp measurements/*.jsonl "$out/" 2>/dev/null
exit $status
