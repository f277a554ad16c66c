#!/usr/bin/env bash
# A01's timeline consoles, as the page quotes them, with the GPU and toolkit they ran on.
# Usage: bench/a01_transcripts.sh OUTDIR (after `tutor labs build A01`)
out=${1:?output folder}
mkdir -p "$out/transcripts"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
toolkit=$(python3 -c "import torch, triton; print(f'PyTorch {torch.__version__}, CUDA {torch.version.cuda}, Triton {triton.__version__}')")
for v in cuda triton; do
  case $v in
    triton) cmd="python labs/A01/triton/timeline.py"; run="python3 labs/A01/triton/timeline.py" ;;
    cuda)   cmd="./build/labs/A01/cuda/timeline"; run="$cmd" ;;
  esac
  { echo "\$ $cmd"; $run 2>&1 | grep -v '^{'; } > "$out/transcripts/A01-timeline-$v-h200.txt"
  echo "# $gpu, $toolkit, $(date -u +%F)" >> "$out/transcripts/A01-timeline-$v-h200.txt"
done
