#!/usr/bin/env bash
# The corrected labs of A01, A02 and B04 re-measured, A02's profiler counters recorded, and the device
# facts the pages quote. Usage: bench/gpu_errata.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
mkdir -p "$out"
tutor() { python3 -m tutor_build.cli "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
python3 -c "import torch; p = torch.cuda.get_device_properties(0); f, t = torch.cuda.mem_get_info(); print('L2_cache_size', p.L2_cache_size, 'total_memory', p.total_memory, 'mem_get_info_total', t)" | tee -a "$out/gpu.txt"
status=0
run() { echo "=== $*"; "$@" 2>&1 | tee -a "$out/log.txt"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1; }
run tutor labs build A01 --vendor cuda
run tutor labs build A02 --vendor cuda
run tutor labs build B04 --vendor cuda
run tutor labs verify A01 --vendor cuda
run tutor labs verify A02
run tutor labs verify B04 --vendor cuda
run tutor labs bench A01 --lab vector_add --vendor cuda --course
run tutor labs bench A02 --lab transpose --course
run tutor labs bench B04 --lab fp8_codec --vendor cuda --course
run tutor labs bench B04 --lab quantize --vendor cuda --course
run tutor labs profile A02 --course
cp measurements/*.jsonl "$out/" 2>/dev/null
cp -r build/profile "$out/" 2>/dev/null
exit $status
