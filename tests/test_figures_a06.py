"""Figures of module A06: each is drawn from the course as the site draws it, parsed, and checked against the
models it claims to show (tutor_build/models/sgemm_ladder.py, gemm_tiling.py, hardware.py), so a figure that
drifts from the model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import re

import pytest

from svgparse import check_every_figure_draws_and_is_placed, draw, module_fixtures, numbers, rects, shown, texts
from tutor_build.figures import a06
from tutor_build.models import gemm_tiling, sgemm_ladder



module, figs = module_fixtures("A06")




def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["workbench"] == 1
    assert placed["intensity-ladder"] == 2 and placed["outer-product"] == 2 and placed["pipeline"] == 2


def test_workbench_trips_are_n_over_the_tile_width(figs):
    spec = figs["workbench"]
    n, tiles = spec.args["n"], spec.args["tiles"]
    bars = [r for r in rects(draw(figs, "workbench")) if r["title"].endswith(" trips")]
    assert len(bars) == len(tiles)
    for bar, t in zip(bars, tiles):
        trips = int(re.search(r": ([\d,]+) trips", bar["title"]).group(1).replace(",", ""))
        assert trips == -(-n // t) == a06.fetches_per_element(t, n)
    widths = [b["w"] for b in bars]
    assert widths == sorted(widths, reverse=True)  # fewer trips, shorter bar
    drawn = rects(draw(figs, "workbench"))
    assert len([r for r in drawn if r["title"].endswith(": in the strip")]) == 16  # one row of A, one column of B
    assert len([r for r in drawn if r["title"].endswith(": the tile being built")]) == 1


def test_intensity_ladder_is_the_models_ladder(figs):
    root = draw(figs, "intensity-ladder")
    bars = [r for r in rects(root) if "FLOP/byte" in r["title"]]
    assert [b["title"].split(":")[0] for b in bars] == [s.name for s in sgemm_ladder.STEPS]
    for b, s in zip(bars, sgemm_ladder.STEPS):
        value = float(b["title"].split(": ")[1].split()[0])
        assert value == sgemm_ladder.global_intensity(s)
        if s.bm >= 16:
            assert value == a06.tile_intensity_check(s.bm, s.bn) == gemm_tiling.compute(
                {"bm": s.bm, "bn": s.bn, "bytes_per_element": 4})["tile_intensity"]
    # a bar's length on the log axis grows with its value
    for a, b in zip(bars, bars[1:]):
        va, vb = (float(x["title"].split(": ")[1].split()[0]) for x in (a, b))
        assert (a["w"] < b["w"]) == (va < vb)
    words = " ".join(texts(root))
    for d, name in (("h200", "H200"), ("mi300x", "MI300X")):
        assert f"{name} ridge {sgemm_ladder.ridge(d):.1f}" in words


def test_outer_product_counts(figs):
    root = draw(figs, "outer-product")
    drawn = rects(root)
    for tm, tn in ((1, 1), (8, 1), (8, 8)):
        mine = [r for r in drawn if r["title"].startswith(f"{tm} x {tn}: ")]
        assert len([r for r in mine if "A value" in r["title"]]) == tm
        assert len([r for r in mine if "B value" in r["title"]]) == tn
        assert len([r for r in mine if "product" in r["title"]]) == tm * tn
        assert f"{tm + tn} reads" in texts(root) and f"{tm * tn} FMA" in texts(root)
    bars = [r for r in drawn if "per load instruction" in r["title"]]
    for b in bars:
        name = b["title"].split(":")[0]
        f = sgemm_ladder.fma_per_shared_load(sgemm_ladder.step(name))
        assert b["title"] == f"{name}: {f'{f:.2f}'.rstrip('0').rstrip('.')} FMA per load instruction"


def test_pipeline_times(figs):
    spec = figs["pipeline"]
    steps, load, compute = spec.args["steps"], spec.args["load"], spec.args["compute"]
    root = draw(figs, "pipeline")
    drawn = rects(root)
    for title, end in (("one buffer", steps * (load + compute)), ("two buffers", load + steps * max(load, compute))):
        mine = [r for r in drawn if r["title"].startswith(title + ":")]
        assert len(mine) == 2 * steps
        last = max(float(r["title"].rsplit(" to ", 1)[1]) for r in mine)
        assert last == end
        assert f"done at {end:g}" in texts(root)
    # with two buffers, the load of step k + 1 never starts after the FMAs of step k begin
    two = {r["title"] for r in drawn if r["title"].startswith("two buffers:")}
    for k in range(steps - 1):
        ld = next(t for t in two if f"load of K-step {k + 1}," in t)
        fm = next(t for t in two if f"FMAs of K-step {k}," in t)
        assert float(ld.split(", ")[1].split(" to ")[0]) <= float(fm.split(", ")[1].split(" to ")[0])


@pytest.mark.parametrize("fig_id", ["workbench", "intensity-ladder", "outer-product", "pipeline"])
def test_alt_text_numbers_are_shown_in_the_figure(figs, fig_id):
    root = draw(figs, fig_id)
    missing = numbers(figs[fig_id].alt) - shown(root) - {"8", "0.1", "100"}  # the 8 x 8 grids; the axis ends
    assert not missing, f"{fig_id}: the alt text states {sorted(missing)}, which the figure does not show"
