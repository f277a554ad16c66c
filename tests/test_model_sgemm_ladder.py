"""The SGEMM ladder model (tutor_build/models/sgemm_ladder.py) against the lab it describes and the player's
model: the steps are the lab's ladder in the lab's order, their tiles are the lab's constants, and the tile
intensity agrees with gemm_tiling."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor_build.models import gemm_tiling, hardware, sgemm_ladder

ROOT = Path(__file__).parents[1]
LAB = (ROOT / "labs/A06/cuda/sgemm.cu").read_text(encoding="utf-8")


def test_steps_are_the_labs_ladder_in_order():
    block = LAB[LAB.index("const Kernel kLadder[] = {"):]
    block = block[:block.index("};")]
    names = re.findall(r'\{"(\w+)",', block)
    assert names == [s.name for s in sgemm_ladder.STEPS]
    tiles = re.findall(r'\{"(\w+)", \w+(?:<[^>]*>)?, (\w+), (\w+)\}', block)
    consts = {k: int(v) for k, v in re.findall(r"\b(k\w+) = (\d+)", LAB)}
    for name, bm, bn in tiles:
        s = sgemm_ladder.step(name)
        assert (s.bm, s.bn) == (int(consts.get(bm, bm)), int(consts.get(bn, bn))), name


@pytest.mark.parametrize("bm,bn", [(16, 16), (32, 32), (64, 128), (128, 128), (256, 128)])
def test_tile_intensity_is_the_players(bm, bn):
    s = sgemm_ladder.Step("x", "", bm, bn)
    assert sgemm_ladder.global_intensity(s) == gemm_tiling.compute(
        {"bm": bm, "bn": bn, "bytes_per_element": 4})["tile_intensity"]


def test_counts():
    s = sgemm_ladder.step("reg_2d")
    assert sgemm_ladder.fma_per_shared_load(s) == 4
    assert sgemm_ladder.fma_per_shared_load(sgemm_ladder.step("vectorized")) == 16
    assert sgemm_ladder.shared_intensity(sgemm_ladder.step("naive")) == 0
    assert sgemm_ladder.global_bytes(s, 2, 2, 2) == 4 * (8 * (2 / 128) + 4)
    assert sgemm_ladder.register_cap(256, 2) == hardware.value("h200", "regs_per_unit") // 512
    tiles, waves, eff = sgemm_ladder.waves(4096, 4096, 128, 128, 2)
    assert (tiles, waves) == (1024, 4) and eff == pytest.approx(1024 / (4 * 264))
    assert sgemm_ladder.ridge("h200") == hardware.peak("h200", "fp32") / hardware.value("h200", "hbm_bw")
    compute, traffic = sgemm_ladder.time_bounds(s, "h200", 4096, 4096, 4096)
    assert compute < sgemm_ladder.time_bounds(sgemm_ladder.step("smem_tiled"), "h200", 4096, 4096, 4096)[1]
    assert traffic < compute
    assert sgemm_ladder.tolerance(16) == pytest.approx(2.0**-24 * 16**2)


def test_transposed_store_conflicts_follow_the_labs_indexing():
    # the lab's mapping of a thread to its float4 of A (tiled_gemm's load_global / store_shared)
    assert "r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;" in LAB
    assert "As[s][c + 0][r] = pa[l].x;" in LAB
    pad = int(re.search(r"constexpr int kPad = (\d+);", LAB).group(1))
    # unpadded, two lanes of a warp land on each bank used; the pad of 4 makes the BK = 8 store conflict-free
    assert sgemm_ladder.transposed_store_ways(8, 128) == 2
    assert sgemm_ladder.transposed_store_ways(8, 128 + pad) == 1
    # the same pad does not cover deeper K-steps: 4c mod 32 repeats every 8 columns of k
    for bm in (64, 128, 256):
        assert [sgemm_ladder.transposed_store_ways(bk, bm + pad) for bk in (8, 16, 32)] == [1, 2, 4]
