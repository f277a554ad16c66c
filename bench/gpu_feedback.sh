#!/usr/bin/env bash
# One GPU call: re-verify and re-bench the given modules (bench/gpu_run.sh), run the held-out mutants on the
# GPU, and keep the A01 timeline's output on this GPU for the page. Usage: bench/gpu_feedback.sh OUTDIR MODULE...
set -uo pipefail
out=${1:?output folder}; shift
status=0
bash bench/gpu_run.sh "$out" "$@" || status=1
python3 bench/gpu_mutants.py 2>&1 | tee "$out/mutants-gpu.txt"
mkdir -p measurements/transcripts
for v in triton cuda; do
  case $v in
    triton) cmd="python labs/A01/triton/timeline.py"; run="python3 labs/A01/triton/timeline.py" ;;
    cuda)   cmd="./build/labs/A01/cuda/timeline"; run="$cmd" ;;
  esac
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  toolkit=$(python3 -c "import sys; sys.path.insert(0, '.'); from tutor_build.labs.runner import runtime_description as d; from tutor_build.labs.toolchains import probe; print(d('$v', probe()))")
  { echo "\$ $cmd"; $run 2>&1 | grep -v '^{'; } > "$out/A01-timeline-$v-h200.txt"
  echo "# $gpu, $toolkit, $(date -u +%F)" >> "$out/A01-timeline-$v-h200.txt"
done
exit $status
