"""Figures of module A08: each is drawn from the course as the site draws it, parsed, and checked against the
timing model (tutor_build/models/timing.py) (the L2 size is held to its record by tests/claims/test_a08.py), so a figure that drifts from the model,
or a model change the figures do not follow, fails here."""

from __future__ import annotations

import pytest

from svgparse import SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, rects
from tutor_build.figures import a08
from tutor_build.models import timing



module, figs = module_fixtures("A08")


def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["stopwatches"] == 1
    assert placed["host-device"] == 2 and placed["l2-repeats"] == 2


def test_the_stopwatch_bars_are_the_model_readings(figs):
    t = timing.Timeline(**figs["stopwatches"].args)
    bars = [r for r in rects(draw(figs, "stopwatches")) if "reads" in r["title"]]
    assert len(bars) == len(a08.ROWS)
    widths = [b["w"] for b in bars]
    readings = [timing.reading(t, way) for way, *_ in a08.ROWS]
    # drawn to one scale: width / reading is the same for every bar, and the longest bar is the first call
    ratios = [w / r for w, r in zip(widths, readings)]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-3)
    assert max(widths) == widths[1] and min(widths) == widths[0]
    for bar, (way, *_) in zip(bars, a08.ROWS):
        assert f"{timing.error(t, way):.2f} times" in bar["title"]


def test_the_analogy_orders_the_traps_as_section_2_does(figs):
    t = timing.Timeline(**figs["stopwatches"].args)
    assert timing.reading(t, "host_no_sync") < timing.reading(t, "events_warm_l2") < timing.reading(t, "right") \
        < timing.reading(t, "first_call")
    assert timing.reading(t, "events_idle") - timing.reading(t, "events_warm_l2") == pytest.approx(t.enqueue)


def test_the_timeline_segments_are_the_model_segments(figs):
    t = timing.Timeline(**figs["host-device"].args)
    drawn = rects(draw(figs, "host-device"))
    segs = timing.segments(t)
    assert len(drawn) == len(segs)
    scale = drawn[0]["w"] / (segs[0].end - segs[0].start)
    for r, g in zip(drawn, segs):
        assert g.what in r["title"] and r["title"].startswith(g.lane)
        assert r["w"] == pytest.approx(scale * (g.end - g.start), rel=1e-3, abs=0.02)
    # the host returns from the launch before the kernel starts: the no-sync clock misses all of it
    kernel = next(g for g in segs if g.what == "kernel")
    assert segs[0].end < kernel.start
    assert kernel.end - kernel.start == t.kernel


def test_the_l2_step_is_at_the_tables_l2(figs):
    spec = figs["l2-repeats"]
    l2 = spec.args["l2_mib"] * 2**20
    root = draw(figs, "l2-repeats")
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert f"L2: {spec.args['l2_mib']:g} MiB" in texts
    dots = [c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle")]
    for ws, tip in zip(spec.args["sizes_mib"], dots):
        share = 100 * timing.dram_bytes(1.0, ws * 2**20, l2, warm=True)
        assert f"{ws} MiB moved: {share:g}% from DRAM" in tip
    assert timing.dram_bytes(1.0, 16 * 2**20, l2, warm=True) == 0.0
    assert timing.dram_bytes(1.0, 512 * 2**20, l2, warm=True) == 1.0
    assert timing.flush_bytes(l2) == 2 * l2
