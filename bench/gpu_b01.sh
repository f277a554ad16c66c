#!/usr/bin/env bash
# One B01 lab (default: all) verified, timed and profiled; output packed into OUT/b01.tgz.
# Usage: bench/gpu_b01.sh OUT [LAB]
out=${1:?output folder}
lab=${2:-}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
$t labs build B01 --vendor cuda > "$work/build-B01.txt" 2>&1
DEADLINE=$((${DEADLINE:-500} - SECONDS)) bench/gpu_steps.sh "$work" \
  "B01|450|$t labs verify B01 $lab && $t labs bench B01 $lab --course && $t labs profile B01 $lab --course"
rc=$?
tar czf "$out/b01.tgz" -C "$work" .
exit $rc
