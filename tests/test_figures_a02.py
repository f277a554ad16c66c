"""Figures of module A02: each is drawn from the course as the site draws it, parsed, and checked against the
coalescing model (tutor_build/models/coalescing.py) and the bank arithmetic of section 2, so a figure that
drifts from the model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from svgparse import SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, numbers, rects, shown, texts
from tutor_build.figures import a02
from tutor_build.models import coalescing



module, figs = module_fixtures("A02")






def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
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


def panels(root: ET.Element, strides) -> dict[int, dict]:
    """Per stride (in drawing order): its 32 lane rects, its sector rects and the connector lines drawn
    from its lanes (a connector starts 1 unit below the bottom centre of a lane rect)."""
    drawn = rects(root)
    lanes = [x for x in drawn if re.fullmatch(r"lane \d+: byte \d+", x["title"])]
    assert len(lanes) == coalescing.LANES * len(strides)
    connectors = [ln for ln in root.iter(f"{SVG}line") if "st-muted" in (ln.get("class") or "")]
    out = {}
    for k, stride in enumerate(strides):
        mine = lanes[k * coalescing.LANES:(k + 1) * coalescing.LANES]
        top = mine[0]["y"] + mine[0]["h"]
        sectors = [x for x in drawn if x["title"].startswith(f"stride {stride}, line ")]
        conn = {}
        for x in mine:
            i = int(x["title"].split()[1].rstrip(":"))
            cx = x["x"] + x["w"] / 2
            hits = [ln for ln in connectors if float(ln.get("x1")) == pytest.approx(cx, abs=0.02)
                    and float(ln.get("y1")) == pytest.approx(top + 1, abs=0.02)]
            conn[i] = hits
        out[stride] = {"lanes": mine, "sectors": sectors, "connectors": conn}
    return out


def test_lanes_to_sectors_connectors_end_on_the_sector_of_the_address(figs):
    spec = figs["lanes-to-sectors"]
    root = draw(figs, "lanes-to-sectors")
    elem = spec.args["elem"]
    joined = 0
    for stride, p in panels(root, spec.args["strides"]).items():
        lines = {(i * stride * elem) // 128 for i in range(coalescing.LANES)}
        if len(lines) > 4:  # stacked rows, one per line: no connectors, the rows are labelled instead
            assert all(not hits for hits in p["connectors"].values()), stride
            continue
        # the touched lines lie side by side in one row, so no connector can cross another line's row
        assert len({x["y"] for x in p["sectors"]}) == 1, stride
        for i, hits in p["connectors"].items():
            assert len(hits) == 1, (stride, i)
            ln = hits[0]
            ex, ey = float(ln.get("x2")), float(ln.get("y2"))
            under = [x for x in p["sectors"] if x["x"] - 0.01 <= ex <= x["x"] + x["w"] + 0.01
                     and x["y"] - 0.01 <= ey <= x["y"] + x["h"]]
            assert len(under) == 1, (stride, i, ex, ey)
            line_no, sec = map(int, re.search(r"line (\d+), sector (\d+)", under[0]["title"]).groups())
            addr = i * stride * elem
            assert (line_no, sec) == (addr // 128, addr % 128 // coalescing.SECTOR), (stride, i)
            assert under[0]["title"].endswith(": moved")
            # and within its sector, on the slot of its element
            slot = (ex - under[0]["x"]) / under[0]["w"] * (coalescing.SECTOR // elem)
            assert int(slot) == addr % coalescing.SECTOR // elem, (stride, i)
            joined += 1
    assert joined == coalescing.LANES * 2  # strides 1 and 2


def test_lanes_to_sectors_legend_names_every_sector_state(figs):
    root = draw(figs, "lanes-to-sectors")
    words = texts(root)
    assert {"asked for", "sector moved", "sector not moved"} <= set(words)
    drawn = rects(root)
    # the sectors not moved are drawn (stride 32 touches one sector in four) and look as the legend says
    idle = [x for x in drawn if x["title"].endswith(": not moved")]
    assert len(idle) == 32 * 3
    assert all(x["cls"] == "fi-bg st-muted" for x in idle)
    legend = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is None and r.get("width") == "16"]
    assert [r.get("class") for r in legend] == ["fi-s1", "fi-grid st-fg", "fi-bg st-muted"]
    assert all(x["cls"] == "fi-grid st-fg" for x in drawn if x["title"].endswith(": moved"))


# ---------------------------------------------------------------- alt texts and captions

@pytest.mark.parametrize("fig_id", ["crates", "lanes-to-sectors", "bank-conflicts"])
def test_alt_text_numbers_are_shown_in_the_figure(figs, fig_id):
    root = draw(figs, fig_id)
    missing = numbers(figs[fig_id].alt) - shown(root)
    assert not missing, f"{fig_id}: the alt text states {sorted(missing)}, which the figure does not show"


def test_alt_texts_and_captions_state_the_models_numbers(figs):
    spec = figs["crates"]
    alt = spec.alt
    for row in ("lucky", "unlucky"):
        r = coalescing.compute({"stride": spec.args[f"{row}_stride"], "bytes_per_element": 4})
        assert f"{r['sectors']} crates" in alt
    r = coalescing.compute({"stride": spec.args["unlucky_stride"], "bytes_per_element": 4})
    assert f"{r['bytes_moved'] // 4} sheets, of which {r['bytes_requested'] // 4} are used" in alt
    assert f"a {coalescing.SECTOR}-byte sector of eight 4-byte sheets" in spec.caption
    spec = figs["lanes-to-sectors"]
    alt = spec.alt
    for stride in spec.args["strides"]:
        r = coalescing.compute({"stride": stride, "bytes_per_element": spec.args["elem"]})
        lines = len({ln for ln, _ in a02._shipments(stride, spec.args["elem"])})
        pct = f"{r['efficiency']:.1%}".replace(".0%", "%")
        if lines == 1:
            assert f"Stride {stride} touches {r['sectors']} sectors of one line, {pct} useful" in alt
        elif r["sectors"] == lines:
            assert f"stride {stride} touches one sector in each of {lines} lines, {r['sectors']} sectors, {pct}" in alt
        else:
            assert f"stride {stride} touches {r['sectors']} sectors over {lines} lines, {pct} useful" in alt
    # "from stride 8 on every lane has a sector of its own": the model agrees, and stride 32 is one of them
    assert all(coalescing.sectors(s, 4) == 32 for s in range(8, 65))
    assert coalescing.sectors(7, 4) < 32 and "From stride 8 on" in spec.caption
    spec = figs["bank-conflicts"]
    col, tile = spec.args["col"], spec.args["tile"]
    assert f"reads column {col}" in spec.alt and f"fall in bank {col}" in spec.alt
    assert f"a {coalescing.conflict_degree(tile, 0, 4)}-way conflict" in spec.alt
    assert f"{tile} by {tile + 1} padded" in spec.alt and coalescing.conflict_degree(tile, 1, 4) == 1
    assert "$w \\bmod 32$" in spec.caption and coalescing.BANKS == 32


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
