#!/usr/bin/env bash
# Lab steps on the GPU machine: the CUDA labs of MODULES built first, in parallel, then each step under its
# own time limit (bench/gpu_steps.sh, DEADLINE seconds in all); every console and the records are packed into
# OUT/run.tgz, since a call brings back only a few files.
# Usage: bench/gpu_labs.sh OUT "B01 B02" 'NAME|SECONDS|COMMAND' ...
# The measurement day of 2026-12-02 ran, in turn (t = "python3 -m tutor_build.cli"):
#   "B01 B02 A04" 'B02|200|$t labs verify B02 && $t labs verify B02 --vendor triton && $t labs bench B02 --course
#                  && $t labs profile B02 --course' 'B01|230|...the same for B01' 'A04|90|$t labs profile A04 --course'
#   "B01 A03 A04 A05" 'B01|200|$t labs verify B01 chain && $t labs bench B01 chain --course && ...'
#                  'A03-review|80|$t labs bench A03 occupancy --vendor cuda && ...' (reviews: no --course)
#   "B01" 'B01|270|$t labs profile B01 chain --course'
out=${1:?output folder}
modules=${2:?modules whose CUDA labs to build}
shift 2
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$work/gpu.txt" 2>&1
for m in $modules; do python3 -m tutor_build.cli labs build "$m" --vendor cuda > "$work/build-$m.txt" 2>&1 & done
wait
echo "built in $SECONDS s" >> "$work/gpu.txt"
DEADLINE=$((${DEADLINE:-540} - SECONDS)) bench/gpu_steps.sh "$work" "$@"
rc=$?
tar czf "$out/run.tgz" -C "$work" .
exit $rc
