#!/usr/bin/env bash
# The A01 timeline and B04 quantize labs re-measured after their changes, C07's calibration (fused quantizer,
# graph capture, launch floors), and the A02/B04 profiler counters. Usage: bench/gpu_wave2.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
mkdir -p "$out"
tutor() { python3 -m tutor_build.cli "$@"; }
status=0
run() { echo "=== $*"; "$@" 2>&1 | tee -a "$out/log.txt"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1; }
run tutor labs build A01 --vendor cuda
run tutor labs build B04 --vendor cuda
run tutor labs verify A01
run tutor labs verify B04
run tutor labs verify C07 --vendor python
run tutor labs bench A01 --lab timeline --course
run tutor labs bench B04 --lab quantize --course
run tutor labs bench C07 --lab calibration --course
run tutor labs profile A02 --course
run tutor labs profile B04 --course
cp measurements/*.jsonl "$out/" 2>/dev/null
cp -r build/profile "$out/" 2>/dev/null
exit $status
