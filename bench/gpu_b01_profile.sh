#!/usr/bin/env bash
# The Nsight Compute counters of one B01 lab (default chain); console packed into OUT/profile.tgz.
# Usage: bench/gpu_b01_profile.sh OUT [LAB]
out=${1:?output folder}
work=$(mktemp -d)
t="python3 -m tutor_build.cli"
$t labs build B01 --vendor cuda > "$work/build-B01.txt" 2>&1
DEADLINE=$((${DEADLINE:-280} - SECONDS)) bench/gpu_steps.sh "$work" "B01|270|$t labs profile B01 ${2:-chain} --course"
rc=$?
tar czf "$out/profile.tgz" -C "$work" .
exit $rc
