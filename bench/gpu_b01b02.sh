#!/usr/bin/env bash
# B01 and B02 measured for the first time, and A04's stall profiles recorded under their labels. Every CUDA
# lab is built first, in parallel; then each module is verified, timed and profiled. All output is packed
# into OUT/b01b02.tgz (a call may bring back only a few files). Usage: bench/gpu_b01b02.sh OUT
out=${1:?output folder}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$work/gpu.txt" 2>&1
start=$SECONDS
for m in B01 B02 A04; do $t labs build $m --vendor cuda > "$work/build-$m.txt" 2>&1 & done; wait
echo "built in $((SECONDS - start)) s" >> "$work/gpu.txt"
DEADLINE=$((${DEADLINE:-560} - SECONDS)) bench/gpu_steps.sh "$work" \
  "B02|200|$t labs verify B02 && $t labs verify B02 --vendor triton && $t labs bench B02 --course && $t labs profile B02 --course" \
  "B01|230|$t labs verify B01 && $t labs bench B01 --course && $t labs profile B01 --course" \
  "A04|90|$t labs profile A04 --course"
rc=$?
tar czf "$out/b01b02.tgz" -C "$work" .
exit $rc
