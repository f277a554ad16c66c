#!/usr/bin/env bash
# Build, check and time every lab of the given modules on this machine's GPU, in one go, and write the
# course's measurement records. Usage: bench/gpu_run.sh OUTDIR MODULE...
set -uo pipefail
out=${1:?output folder}; shift
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
python3 -m tutor_build.cli doctor | tee -a "$out/gpu.txt"
status=0
for id in "$@"; do
  echo "=== $id: verify"
  python3 -m tutor_build.cli labs verify "$id" 2>&1 | tee "$out/verify-$id.log" || status=1
  echo "=== $id: bench"
  python3 -m tutor_build.cli labs bench "$id" --course 2>&1 | tee "$out/bench-$id.log" || status=1
done
cp measurements/*.jsonl "$out/" 2>/dev/null
exit $status
