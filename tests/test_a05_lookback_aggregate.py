"""A05's Triton look-back walks back over tiles that have published only their own total (status 1).

Under the interpreter the programs run one after another, so in the lab's own check every predecessor has
already published its inclusive prefix (status 2) and that branch of the loop never runs. Here the state is
seeded as a GPU run can leave it: tile 0 with its prefix, tiles 1..T-1 with their totals only, and the ticket
counter at T. The programs then scan tiles T.. and each must add the totals of every status-1 tile before it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

SCRIPT = r"""
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("a05_scan_lab", sys.argv[1])
lab = importlib.util.module_from_spec(spec); sys.modules[spec.name] = lab; spec.loader.exec_module(lab)
BLOCK, seeded, n = 16, 5, 16 * 9 + 7  # nine whole tiles and a ragged tenth
torch.manual_seed(0)
x = torch.randint(0, 8, (n,)).float()
tiles = -(-n // BLOCK)
totals = x.view(-1)[: tiles * BLOCK].tolist()
state = torch.zeros(tiles + 1, dtype=torch.int64)
state[0] = seeded  # tickets 0..seeded-1 already handed out
def word(status, value):
    bits = torch.tensor([value], dtype=torch.float32).view(torch.int32).item() & 0xFFFFFFFF
    return (status << 32) | bits
tile_sum = [float(x[t * BLOCK:(t + 1) * BLOCK].sum()) for t in range(tiles)]
state[1] = word(2, tile_sum[0])
for t in range(1, seeded):
    state[1 + t] = word(1, tile_sum[t])  # total published, prefix not yet
y = torch.full((n,), float("nan"))
lab.lookback_kernel[(tiles - seeded,)](x, y, state, n, BLOCK=BLOCK)
want = torch.cumsum(x, 0)
start = seeded * BLOCK
assert torch.equal(y[start:], want[start:]), (y[start:], want[start:])
assert torch.isnan(y[:start]).all()  # no program scanned a seeded tile again
assert int(state[0]) == tiles
print("ok")
"""


def run(lab: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "labs/common/python"), CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-c", SCRIPT, str(lab)], env=env, capture_output=True, text=True, timeout=300)


def test_lookback_adds_the_totals_of_tiles_that_have_no_prefix_yet():
    pytest.importorskip("triton")
    done = run(ROOT / "labs/A05/triton/scan.py")
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_the_seeded_check_fails_on_a_look_back_that_stops_at_a_total(tmp_path):
    """The same check on a copy of the lab whose loop stops at the first total it sees, as it would if the
    status-1 branch were wrong: the check must fail."""
    pytest.importorskip("triton")
    source = (ROOT / "labs/A05/triton/scan.py").read_text()
    broken = source.replace("tl.where(st == 1, j - 1, -1)", "tl.where(st == 1, -1, -1)")
    assert broken != source
    lab = tmp_path / "scan.py"
    lab.write_text(broken)
    assert run(lab).returncode != 0
