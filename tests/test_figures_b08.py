"""Figures of module B08: each draws from the loaded course, and its bars and points are the bytes and FLOPs
that tutor_build.models.activations derives (the same model the claims test holds the lab to)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from svgparse import SVG, draw, module_fixtures, placed, titles
from tutor_build.models import activations as act

MiB = 2**20
module, figs = module_fixtures("B08")


@pytest.fixture(scope="module")
def figures(figs):
    return {fig_id: (spec, draw(figs, fig_id)) for fig_id, spec in figs.items()}


def test_every_figure_draws_and_is_placed(module, figures):
    where = placed(module)
    assert where == {"bench-space": 1, "inventory": 2, "tradeoff": 2}
    for spec, root in figures.values():
        assert spec.alt.strip() and spec.caption.strip()
        assert root.get("role") == "img" and root.find(f"{SVG}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560
        assert "opacity" not in ET.tostring(root, encoding="unicode")


def test_bench_space_bars_sum_to_the_model(figures):
    spec, root = figures["bench-space"]
    a = spec.args
    totals = {}
    for t in titles(root):
        m = re.fullmatch(r"(.+?): .+, ([\d,.]+) MiB", t)
        if m:
            totals[m.group(1)] = totals.get(m.group(1), 0) + float(m.group(2).replace(",", ""))
    for mode, name in [("none", "keep everything"), ("selective", "redo the attention core"), ("full", "redo the whole layer")]:
        want = act.block_bytes(mode, a["s"], a["b"], a["h"], a["a"]) - (act.ln_stats_bytes(a["s"], a["b"]) if mode != "full" else 0)
        assert totals[name] == pytest.approx(want / MiB, abs=0.2), mode


def test_inventory_lists_every_term(figures):
    spec, root = figures["inventory"]
    a = spec.args
    sbh, as2b = a["s"] * a["b"] * a["h"], a["a"] * a["s"] ** 2 * a["b"]
    drawn = {t.split(": ", 1)[0] + ":" + t.split(": ", 1)[1].rsplit(", ", 1)[0]: t.rsplit(", ", 1)[1] for t in titles(root)}
    for part, terms, scale in (("paper", act.PAPER_TERMS, 1), ("block", act.BLOCK_TERMS, 2)):
        for term in terms:
            want = scale * (term.sbh * sbh + term.as2b * as2b)
            assert drawn[f"{part}:{term.name}"] == f"{want / MiB:,.0f} MiB"


def test_tradeoff_points_are_the_model(figures):
    spec, root = figures["tradeoff"]
    a = spec.args
    points = titles(root, "circle")
    for s in a["seqs"]:
        for mode in act.MODES:
            gib = act.block_bytes(mode, s, a["b"], a["h"], a["a"]) / 2**30
            x = 1 + act.overhead(mode, s, a["b"], a["h"])
            assert f"s = {s}: {mode}, {gib:.3f} GiB per layer, {x:.4f}x the FLOPs" in points
