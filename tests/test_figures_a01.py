"""Figures of module A01: each is drawn from the course as the site draws it, parsed, and checked against the
models it is drawn from (tutor_build/models/where_time_goes.py and hardware.py), so a figure that drifts
from the model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor_build.figures import svg
from tutor_build.load import load_course
from tutor_build.mdscan import scan
from tutor_build.models import hardware
from tutor_build.models import where_time_goes as wt

ROOT = Path(__file__).parents[1]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def module():
    course, _ = load_course(ROOT)
    return next(m for m in course.modules if m.id == "A01")


@pytest.fixture(scope="module")
def figs(module):
    return {f.id: f for f in module.figures}


def draw(figs, fig_id: str) -> ET.Element:
    return ET.fromstring(svg(figs[fig_id]))


def rects(root: ET.Element) -> list[dict]:
    """Every rect with a <title>, in drawing order."""
    out = []
    for r in root.iter(f"{SVG}rect"):
        t = r.find(f"{SVG}title")
        if t is not None:
            out.append({"title": t.text, "x": float(r.get("x")), "w": float(r.get("width")),
                        "h": float(r.get("height")), "cls": r.get("class")})
    return out


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


# ---------------------------------------------------------------- declared, drawable, placed

def test_every_figure_draws_and_is_placed(module, figs):
    assert len(figs) >= 3
    placed = {}
    for section in module.sections:
        for ph in scan(section.text).placeholders:
            if ph.func == "figure":
                placed[ph.args[0]] = section.spec.number
    for fig_id, spec in figs.items():
        root = draw(figs, fig_id)
        assert root.get("role") == "img" and root.find(f"{SVG}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560
        assert fig_id in placed, f"{fig_id} is declared but not placed"
    assert placed["stadium"] == 1
    assert {placed["littles-law"], placed["timeline"]} <= {2}
    assert placed["hierarchy"] == 3


# ---------------------------------------------------------------- the analogy: gate and corridor to scale

def test_stadium_passages_are_the_two_bandwidths(figs):
    root = draw(figs, "stadium")
    by = {r["title"].split(":")[0]: r for r in rects(root)}
    gate, corridor = by["narrow gate"], by["wide corridor"]
    link = wt.INPUTS["link_gbps"]["default"] * 1e9
    hbm = hardware.value("h200", "hbm_bw")
    assert gate["w"] / corridor["w"] == pytest.approx(link / hbm, rel=1e-2)
    assert any(f"{hbm / link:.0f}×" in t for t in texts(root))  # "75×"
    assert any(f"{int(hardware.value('h200', 'units'))} sections" in t for t in texts(root))


# ---------------------------------------------------------------- Little's law

def test_littles_law_area_and_loads_per_warp(figs):
    spec = figs["littles-law"]
    root = draw(figs, "littles-law")
    hbm = hardware.value("h200", "hbm_bw")
    warps = hardware.value("h200", "units") * hardware.value("h200", "max_warps_per_unit")
    lats = spec.args["latencies_ns"]
    areas = {int(r["title"].split(" ns")[0]): r for r in rects(root) if "TB/s =" in r["title"]}
    assert sorted(areas) == sorted(lats)
    for lat, r in areas.items():  # widths proportional to latency, all the same height (the bandwidth)
        assert r["w"] / areas[500]["w"] == pytest.approx(lat / 500, rel=1e-6)
        assert r["h"] == pytest.approx(areas[500]["h"])
    assert areas[500]["title"].endswith("= 2.4 MB")  # section 2, step 3
    bars = {int(r["title"].split(" ns")[0]): r for r in rects(root) if "loads per warp" in r["title"]}
    for lat, r in bars.items():
        need = hbm * lat * 1e-9 / 128 / warps
        assert r["title"].endswith(f"{need:.2f} loads per warp")
        assert r["w"] / bars[500]["w"] == pytest.approx(lat / 500, rel=1e-6)
    assert f"{hbm * 500e-9 / 128 / warps:.1f}" == "2.2"  # the number section 2 states


# ---------------------------------------------------------------- the timeline, to scale

def bar(root: ET.Element, name: str) -> dict[str, dict]:
    return {r["title"].split(": ", 1)[1].rsplit(" ", 2)[0]: r for r in rects(root)
            if r["title"].startswith(name + ": ")}


@pytest.mark.parametrize("which", ["first", "best"])
def test_timeline_segments_are_the_model(figs, which):
    spec = figs["timeline"]
    inputs = spec.args[which]
    r = wt.compute(inputs)
    name = {"first": "first run", "best": "best case"}[which]
    segs = bar(draw(figs, "timeline"), name)
    want = {"context": r["context_s"], "allocate": r["alloc_s"], "copy in": r["copies_s"] * 2 / 3,
            "kernel": r["kernel_s"], "copy out": r["copies_s"] / 3}
    want = {k: v for k, v in want.items() if v > 0}
    assert set(segs) == set(want)
    width = sum(s["w"] for s in segs.values())
    assert width == pytest.approx(520, abs=0.05)
    for k, t in want.items():
        assert segs[k]["w"] / width == pytest.approx(t / r["total_s"], rel=1e-3, abs=0.01)
    assert segs["kernel"]["w"] / width == pytest.approx(r["kernel_share"], rel=1e-2, abs=0.006)


def test_timeline_kernel_is_a_sliver_and_best_case_is_section_2(figs):
    root = draw(figs, "timeline")
    best = wt.compute(figs["timeline"].args["best"])
    assert best["kernel_share"] == pytest.approx(0.013, abs=0.0005)  # "at most about 1.3%"
    assert best["kernel_s"] == pytest.approx(41.9e-6, abs=0.05e-6)   # step 2
    assert best["copies_s"] == pytest.approx(3.15e-3, abs=0.005e-3)   # step 3
    labels = [t for t in texts(root) if t.startswith("kernel ")]
    assert "kernel 41.9 µs: 1.3% of the run" in labels
    first = wt.compute(figs["timeline"].args["first"])
    assert first["kernel_share"] < 0.001
    zoomed = bar(root, "first run, zoomed")["kernel"]
    assert zoomed["w"] < 5  # still a sliver after removing the context


# ---------------------------------------------------------------- grid, block, warp, wavefront

def test_hierarchy_groups_are_the_lane_widths(figs):
    spec = figs["hierarchy"]
    root = draw(figs, "hierarchy")
    block = spec.args["block"]
    assert any(f"{-(-2 ** spec.args['n_log2'] // block):,} blocks" in t for t in texts(root))
    for word, device in (("warp", "h200"), ("wave", "mi300x")):
        lanes = int(hardware.value(device, "lanes"))
        cells = [r["title"] for r in rects(root) if r["title"].startswith(word + " ")]
        assert len(cells) == block
        groups = {t.split(",")[0] for t in cells}
        assert len(groups) == block // lanes
        assert max(int(t.split("lane ")[1].split(":")[0]) for t in cells) == lanes - 1
        threads = sorted(int(t.rsplit("thread ", 1)[1]) for t in cells)
        assert threads == list(range(block))
    assert {int(hardware.value("h200", "lanes")), int(hardware.value("mi300x", "lanes"))} == {32, 64}
