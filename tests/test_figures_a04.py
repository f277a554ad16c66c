"""Figures of module A04: each is drawn from the course as the site draws it, parsed, and checked against the
hierarchy model (tutor_build/models/hierarchy.py) and the roofline model (tutor_build/models/roofline.py),
so a figure that drifts from the models, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import math
import re

import pytest

from svgparse import SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, rects, texts
from tutor_build.figures import a04, svg
from tutor_build.models import hardware, hierarchy, roofline
from tutor_build.render.plots import overlapping_texts



module, figs = module_fixtures("A04")




def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    for fig_id, spec in figs.items():
        assert not overlapping_texts(svg(spec)), fig_id
    assert placed["places"] == 1 and placed["roofs"] == 2 and placed["ladder"] == 3


def test_places_bars_are_the_model_reach_on_a_log_scale(figs):
    device = figs["places"].args["device"]
    bars = [r for r in rects(draw(figs, "places")) if "within reach" in r["title"]]
    want = [lv for lv in hierarchy.levels(device) if lv.key in a04.PLACES]
    assert [b["title"].split(":")[0] for b in bars] == [lv.key for lv in want]
    x0 = bars[0]["x"]
    per_decade = None
    for b, lv in zip(bars, want):
        reach = lv.capacity if lv.per in ("SM", "CU") else lv.total
        assert b["title"] == f"{lv.key}: {reach:.0f} bytes within reach"
        decades = math.log10(reach / 1e4)
        per_decade = per_decade or b["w"] / decades
        assert b["w"] == pytest.approx(per_decade * decades, abs=0.02)
        assert b["x"] == x0
    pcie = hardware.value(device, "pcie_bw")
    assert any(f"{pcie / 1e9:.0f} GB/s each way" in t for t in texts(draw(figs, "places")))


def test_ladder_has_every_level_of_both_gpus_with_its_total(figs):
    args = figs["ladder"].args
    bars = {r["title"].split(":")[0]: r for r in rects(draw(figs, "ladder")) if "bytes in all" in r["title"]}
    for dev in (args["nvidia"], args["amd"]):
        for lv in hierarchy.levels(dev):
            title = f"{dev} {lv.key}"
            assert title in bars, title
            assert bars[title]["title"] == f"{title}: {lv.total:.0f} bytes in all"
    shown = " ".join(texts(draw(figs, "ladder")))
    assert "x 132 SMs" in shown and "x 304 CUs" in shown and "x 8 XCDs" in shown
    assert "Infinity Cache" in shown and "no memory-side cache: L2 misses go to HBM" in shown
    # one log scale for both columns: width grows with log10(total) at the same rate
    rate = {dev: [(math.log10(lv.total / 1e4), bars[f"{dev} {lv.key}"]["w"]) for lv in hierarchy.levels(dev)]
            for dev in (args["nvidia"], args["amd"])}
    slopes = {round(w / d, 3) for pts in rate.values() for d, w in pts}
    assert max(slopes) - min(slopes) < 0.01


def test_roofs_mark_each_ridge_point_from_the_roofline_model(figs):
    args = figs["roofs"].args
    root = draw(figs, "roofs")
    marks = [c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle")]
    assert len(marks) == len(args["devices"]) * len(args["precisions"])
    for dev in args["devices"]:
        for prec in args["precisions"]:
            r = roofline.compute({"device": dev, "precision": prec, "intensity": 1.0})
            assert r["ridge"] == pytest.approx(hierarchy.ridge(dev, prec))
            want = f"{dev} {prec}: ridge {r['ridge']:.1f} FLOP/byte at {r['peak_flops'] / 1e12:.1f} TFLOP/s"
            assert want in marks
            label = f"{prec.upper()} {r['peak_flops'] / 1e12:,.0f} TFLOP/s, ridge {r['ridge']:.0f}"
            assert label in texts(root)


def test_the_alt_texts_state_the_model_numbers(figs):
    ridge = {f"{hierarchy.ridge(d, p):.0f}" for d in ("h200", "mi300x") for p in ("fp32", "bf16", "fp8")}
    alt = figs["roofs"].alt
    for number in ridge:
        assert re.search(rf"(?<![\d,]){number}(?!\d)", alt), number
    ladder = figs["ladder"].alt
    for dev in ("h200", "mi300x"):
        for lv in hierarchy.levels(dev):
            if lv.copies > 1:
                assert a04._bytes(lv.total) in ladder, (dev, lv.key)
