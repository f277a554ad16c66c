#!/usr/bin/env bash
# The labs of A01, A02, A03, A04, A08, B04 and C07 measured again with the kit's new timer, A01's timeline
# transcripts written again. Usage: bench/gpu_kit1.sh OUTDIR
out=${1:?output folder}
t="python3 -m tutor_build.cli"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$out.gpu.txt" 2>&1
bench/gpu_steps.sh "$out" \
  "A08|150|$t labs verify A08 && $t labs bench A08 --course && $t labs profile A08 --course" \
  "A01|90|$t labs verify A01 && $t labs bench A01 --course && bench/a01_transcripts.sh $out" \
  "A02|90|$t labs verify A02 && $t labs bench A02 --course && $t labs profile A02 --course" \
  "B04|90|$t labs verify B04 && $t labs bench B04 --course && $t labs profile B04 --course" \
  "C07|120|$t labs verify C07 && $t labs bench C07 --course" \
  "A03|90|$t labs verify A03 && $t labs bench A03 --course && $t labs profile A03 --course" \
  "A04|150|$t labs verify A04 && $t labs bench A04 --course && $t labs profile A04 --course"
rc=$?
mv "$out.gpu.txt" "$out/gpu.txt"
exit $rc
