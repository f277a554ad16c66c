#!/usr/bin/env bash
# A03, A04, A05 and A08 measured with the kit's new timer (timed_ms): every lab built first, in parallel,
# then each module verified, timed and profiled. All output is packed into OUT/kit2.tgz (a call may bring
# back only a few files). Usage: bench/gpu_kit2.sh OUT
out=${1:?output folder}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$work/gpu.txt" 2>&1
start=$SECONDS
for m in A03 A04 A05 A08; do $t labs build $m --vendor cuda > "$work/build-$m.txt" 2>&1 & done; wait
echo "built in $((SECONDS - start)) s" >> "$work/gpu.txt"
DEADLINE=$((${DEADLINE:-530} - SECONDS)) bench/gpu_steps.sh "$work" \
  "A08|150|$t labs verify A08 && $t labs bench A08 --course && $t labs profile A08 --course" \
  "A03|150|$t labs verify A03 && $t labs bench A03 --course && $t labs profile A03 --course" \
  "A05|200|$t labs verify A05 && $t labs bench A05 --course && $t labs profile A05 --course" \
  "A04|200|$t labs verify A04 && $t labs bench A04 --course && $t labs profile A04 --course"
rc=$?
tar czf "$out/kit2.tgz" -C "$work" .
exit $rc
