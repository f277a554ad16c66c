"""Figures of module A02: each is drawn from the course as the site draws it, parsed, and checked against the
coalescing model (tutor_build/models/coalescing.py) and the bank arithmetic of section 2, so a figure that
drifts from the model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from tutor_build.figures import svg
from tutor_build.load import load_course
from tutor_build.mdscan import scan
from tutor_build.models import coalescing

ROOT = Path(__file__).parents[1]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def module():
    course, _ = load_course(ROOT)
    return next(m for m in course.modules if m.id == "A02")


@pytest.fixture(scope="module")
def figs(module):
    return {f.id: f for f in module.figures}


def draw(figs, fig_id: str) -> ET.Element:
    return ET.fromstring(svg(figs[fig_id]))


def rects(root: ET.Element) -> list[dict]:
    out = []
    for r in root.iter(f"{SVG}rect"):
        t = r.find(f"{SVG}title")
        if t is not None:
            out.append({"title": t.text, "x": float(r.get("x")), "y": float(r.get("y")),
                        "w": float(r.get("width")), "h": float(r.get("height")), "cls": r.get("class")})
    return out


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


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
    assert placed["crates"] == 1
    assert placed["lanes-to-sectors"] == 2 and placed["bank-conflicts"] == 2


# ---------------------------------------------------------------- the analogy: crates are sectors

@pytest.mark.parametrize("row", ["lucky", "unlucky"])
def test_crates_are_the_sectors_the_model_counts(figs, row):
    spec = figs["crates"]
    stride = spec.args[f"{row}_stride"]
    r = coalescing.compute({"stride": stride, "bytes_per_element": 4})
    drawn = rects(draw(figs, "crates"))
    crates = [x for x in drawn if x["title"].startswith(f"{row} row, crate") and x["title"].endswith(": shipped")]
    sheets = [x for x in drawn if x["title"].startswith(f"{row} row, crate") and ", sheet " in x["title"]]
    assert len(crates) == r["sectors"] == coalescing.sectors(stride, 4)
    assert len(sheets) == r["bytes_moved"] // 4
    used = [x for x in sheets if x["title"].endswith(": used")]
    assert len(used) == r["bytes_requested"] // 4 == 32
    assert all("fi-s1" in x["cls"] for x in used)
    assert all("fi-grid" in x["cls"] for x in sheets if x["title"].endswith(": packaging"))
    assert {"lucky": 4, "unlucky": 32}[row] == len(crates)  # the numbers section 1 states


# ---------------------------------------------------------------- lanes to sectors

def test_lanes_to_sectors_highlights_the_model_count(figs):
    spec = figs["lanes-to-sectors"]
    root = draw(figs, "lanes-to-sectors")
    drawn = rects(root)
    elem = spec.args["elem"]
    assert 1 in spec.args["strides"] and 2 in spec.args["strides"] and max(spec.args["strides"]) >= 8
    for stride in spec.args["strides"]:
        moved = [x for x in drawn if x["title"].startswith(f"stride {stride}, ") and x["title"].endswith(": moved")]
        assert len(moved) == coalescing.sectors(stride, elem), stride
        assert all("fi-grid" in x["cls"] for x in moved)
        # the sectors drawn are the ones the lanes' addresses fall in
        want = {(i * stride * elem) // coalescing.SECTOR for i in range(coalescing.LANES)}
        got = set()
        for x in moved:
            line, sec = map(int, re.search(r"line (\d+), sector (\d+)", x["title"]).groups())
            got.add(line * 4 + sec)
        assert got == want
        lanes = [x for x in drawn if re.fullmatch(rf"lane \d+: byte \d+", x["title"])]
        r = coalescing.compute({"stride": stride, "bytes_per_element": elem})
        label = f"{r['sectors']} sectors, {r['efficiency']:.1%} useful".replace(".0%", "%")
        assert label in texts(root)
        assert f"{r['bytes_moved']} B moved for {r['bytes_requested']} B" in texts(root)
    assert len(lanes) == coalescing.LANES * len(spec.args["strides"])
    assert "4 sectors, 100% useful" in texts(root) and "8 sectors, 50% useful" in texts(root)
    assert "32 sectors, 12.5% useful" in texts(root)


# ---------------------------------------------------------------- shared-memory banks

def panel(drawn: list[dict], rule: str) -> tuple[dict[int, int], dict[int, int], float]:
    """lane -> bank of its word (as titled), bank -> lanes (the bars), and the panel's left edge."""
    lane_bank, bars = {}, {}
    for x in drawn:
        if m := re.fullmatch(rf"{re.escape(rule)}, lane (\d+): row \d+, column \d+, word (\d+), bank (\d+)", x["title"]):
            lane, word, bank = map(int, m.groups())
            assert bank == word % coalescing.BANKS
            lane_bank[lane] = (bank, x)
        if m := re.fullmatch(rf"{re.escape(rule)}, bank (\d+): (\d+) lane\(s\)", x["title"]):
            bars[int(m.group(1))] = (int(m.group(2)), x)
    return lane_bank, bars


@pytest.mark.parametrize("rule,pad", [("plain", 0), ("pad 1", 1), ("swizzle c ⊕ r", None)])
def test_bank_conflicts_match_the_model(figs, rule, pad):
    spec = figs["bank-conflicts"]
    col, tile = spec.args["col"], spec.args["tile"]
    lane_bank, bars = panel(rects(draw(figs, "bank-conflicts")), rule)
    assert sorted(lane_bank) == list(range(tile))
    for r, (bank, _) in lane_bank.items():
        want = (col ^ r) if pad is None else (r * (tile + pad) + col) % coalescing.BANKS
        assert bank == want
    # each word is drawn in the column of its bank
    left = min(x["x"] - bank * x["w"] for bank, x in lane_bank.values())
    for bank, x in lane_bank.values():
        assert x["x"] == pytest.approx(left + bank * x["w"])
    per_bank = Counter(b for b, _ in lane_bank.values())
    assert {b: n for b, (n, _) in bars.items()} == dict(per_bank)
    degree = max(per_bank.values())
    if pad is not None:
        assert degree == coalescing.conflict_degree(tile, pad, 4)
    assert degree == {"plain": 32, "pad 1": 1}.get(rule, 1)  # section 2: 32-way, then conflict-free
    heights = {n: x["h"] for n, x in bars.values()}
    assert all(h == pytest.approx(heights[degree] * n / degree) for n, h in heights.items())
