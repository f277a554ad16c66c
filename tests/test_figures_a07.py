"""The concept figures of A07 draw what tutor_build/models/mma_layout.py computes."""

import re

from tutor_build.figures import a07
from tutor_build.models import mma_layout as L


def _svg(canvas) -> str:
    return canvas.render("figure")


def test_tile_machine_counts_the_instruction():
    svg = _svg(a07.tile_machine(16, 8, 16))
    assert f"{L.macs_per_instruction(16, 8, 16):,} multiply-adds" in svg
    assert svg.count("<title>A[") == 16 * 16 and svg.count("<title>C[") == 16 * 8


def test_m16n8k16_cells_name_the_ptx_owner():
    svg = _svg(a07.m16n8k16_layout(0))
    found = dict(re.findall(r"<title>(A\[\d+\]\[\d+\]): lane (\d+), element \d+</title>", svg))
    assert len(found) == 256
    for lane in range(32):
        for i in range(8):
            r, c = L.m16n8k16_a(lane, i)
            assert found[f"A[{r}][{c}]"] == str(lane)
    b = dict(re.findall(r"<title>(B\[\d+\]\[\d+\]): lane (\d+)", svg))
    assert all(b[f"B[{r}][{c}]"] == str(lane) for lane in range(32) for r, c in (L.m16n8k16_b(lane, i) for i in range(4)))
    assert "rows 0 and 8" in svg


def test_mfma32_figure_draws_every_element():
    svg = _svg(a07.mfma32_layout())
    cells = svg.count("<rect")
    assert cells >= 32 * 8 + 8 * 32 + 32 * 32
    assert len(L.owners(L.mfma32_c, 64, 16)) == 1024
