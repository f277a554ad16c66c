"""A08's Triton lab checks its own timer (TODO 2) on a CPU too: the events are host clocks there and the
spin a sleep, so a timer that opens its window before the flush-and-spin, or waits inside its loop, fails
here, without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_timing_lab_passes_its_own_timer_check_on_the_cpu():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "labs/common/python"))
    done = subprocess.run([sys.executable, "labs/A08/triton/timing.py", "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert '"variant": "timer_one_spin"' in done.stdout and '"variant": "timer_no_wait"' in done.stdout
