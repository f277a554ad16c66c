"""Figures of module B01: each is drawn as the site draws it, parsed, and checked against the fusion model
(tutor_build/models/fusion.py), so a figure that drifts from the model fails here."""

from __future__ import annotations

import re

from svgparse import check_every_figure_draws_and_is_placed, draw, module_fixtures, rects
from tutor_build.models import fusion

module, figs = module_fixtures("B01")


def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["pantry-trips"] == 1
    assert placed["chain-bytes"] == 2 and placed["softmax-passes"] == 2


def test_pantry_trips_follow_the_chain_bytes(figs):
    steps = 4
    titles = [r["title"] for r in rects(draw(figs, "pantry-trips"))]
    unfused = [t for t in titles if t.startswith("back to the pantry after every step: trip")]
    fused = [t for t in titles if t.startswith("bowl stays on the counter: trip")]
    assert len(unfused) == fusion.chain_bytes(steps, fused=False) // 8
    assert len(fused) == fusion.chain_bytes(steps, fused=True) // 8


def test_chain_bars_are_the_model_bytes(figs):
    for r in rects(draw(figs, "chain-bytes")):
        m = re.match(r"k = (\d+), (unfused|fused): (\d+) bytes per element", r["title"])
        assert m, r["title"]
        k, kind, b = int(m.group(1)), m.group(2), int(m.group(3))
        assert b == fusion.chain_bytes(k, fused=kind == "fused")


def test_softmax_passes_are_the_model_passes(figs):
    titles = [r["title"] for r in rects(draw(figs, "softmax-passes"))]
    for key, (reads, writes) in fusion.SOFTMAX_PASSES.items():
        assert sum(t.startswith(f"{key}: read pass") for t in titles) == reads
        assert sum(t.startswith(f"{key}: write pass") for t in titles) == writes
