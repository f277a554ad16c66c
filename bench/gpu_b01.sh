#!/usr/bin/env bash
# B01 verified, timed and profiled; output packed into OUT/b01.tgz. Usage: bench/gpu_b01.sh OUT
out=${1:?output folder}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
$t labs build B01 --vendor cuda > "$work/build-B01.txt" 2>&1
DEADLINE=$((${DEADLINE:-500} - SECONDS)) bench/gpu_steps.sh "$work" \
  "B01|400|$t labs verify B01 && $t labs bench B01 --course && $t labs profile B01 --course"
rc=$?
tar czf "$out/b01.tgz" -C "$work" .
exit $rc
