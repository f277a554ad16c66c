"""Without a GPU, `tutor labs verify` runs Triton labs at their --quick sizes and prints the command that
checks every size. That command must work when typed: a Triton lab imports triton before the kit can switch
the interpreter on, so the line carries TRITON_INTERPRET=1 (a PyTorch lab needs no interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor_build.labs import cli, runner

ROOT = Path(__file__).resolve().parents[1]


def test_the_printed_command_switches_the_interpreter_on_for_triton_only():
    triton = cli._full_size_command(runner.LabTarget("A01", "vector_add", "triton"), exercise=False)
    assert triton.startswith("TRITON_INTERPRET=1 ") and triton.endswith("labs/A01/triton/vector_add.py")
    python = cli._full_size_command(runner.LabTarget("B07", "schedule_sim", "python"), exercise=True)
    assert "TRITON_INTERPRET" not in python and python.endswith("_exercise.py")


@pytest.mark.skipif(subprocess.run([sys.executable, "-c", "import triton, torch"], capture_output=True).returncode,
                    reason="needs triton and torch")
def test_the_printed_command_runs_a_lab_on_the_cpu():
    # A05's reduce imports triton before the kit: without the variable on the line it fails on a CPU
    line = cli._full_size_command(runner.LabTarget("A05", "reduce", "triton"), exercise=False)
    env_part, _, rest = line.partition(" ")
    name, value = env_part.split("=")
    args = [sys.executable, *rest.split()[1:]]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {name: value, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
