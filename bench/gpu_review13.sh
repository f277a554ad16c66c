#!/usr/bin/env bash
# B01's chain lab measured again, then the headlines of A03, A04 and A05 timed once more without writing
# course records (measurements/local/), to compare with the records. Output packed into OUT/run.tgz.
# Usage: bench/gpu_review13.sh OUT
out=${1:?output folder}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
for m in B01 A03 A04 A05; do $t labs build $m --vendor cuda > "$work/build-$m.txt" 2>&1 & done; wait
DEADLINE=$((${DEADLINE:-520} - SECONDS)) bench/gpu_steps.sh "$work" \
  "B01|200|$t labs verify B01 chain && $t labs bench B01 chain --course && $t labs profile B01 chain --course" \
  "A03-review|80|$t labs bench A03 occupancy --vendor cuda && $t labs bench A03 divergence --vendor cuda" \
  "A04-review|70|$t labs bench A04 --vendor cuda" \
  "A05-review|90|$t labs bench A05 reduce && $t labs bench A05 scan --vendor triton"
rc=$?
tar czf "$out/run.tgz" -C "$work" .
exit $rc
