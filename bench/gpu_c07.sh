#!/usr/bin/env bash
# C07's calibration: the fused quantizer checked on the GPU, then eager and graph-captured steps, launch
# floors and GEMM rates recorded. Usage: bench/gpu_c07.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
status=0
run() { echo "=== $*"; "$@" 2>&1 | tee -a "$out/log.txt"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1; }
run python3 -m tutor_build.cli labs verify C07 --vendor python
run python3 -m tutor_build.cli labs bench C07 --lab calibration --course
cp measurements/*.jsonl "$out/" 2>/dev/null
exit $status
