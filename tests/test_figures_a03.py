"""Figures of module A03: each is drawn as the site draws it, parsed, and checked against the models it is
computed from (tutor_build/models/latency_hiding.py and occupancy.py) and against the lab it pictures, so a
figure that drifts from the models or from the lab fails here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from svgparse import ROOT, SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, rects, texts
from tutor_build.models import hardware, latency_hiding as lh, occupancy

LAB_CU = (ROOT / "labs/A03/cuda/occupancy.cu").read_text(encoding="utf-8")


module, figs = module_fixtures("A03")




def titles(root: ET.Element) -> list[str]:
    alt = root.find(f"{SVG}title").text
    return [t.text for t in root.iter(f"{SVG}title") if t.text != alt]


def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["rows-waiting"] == 1


def test_rows_waiting_is_the_timeline(figs):
    spec = figs["rows-waiting"]
    root = draw(figs, "rows-waiting")
    cells = rects(root)
    lat, cycles = spec.args["latency"], spec.args["cycles"]
    assert len(cells) == cycles * len(spec.args["scenarios"])
    busy = []
    for i, sc in enumerate(spec.args["scenarios"]):
        t = lh.timeline(sc["rows"], lat, cycles, sc["requests"])
        strip = cells[i * cycles:(i + 1) * cycles]
        assert [x["title"].endswith("idle") for x in strip] == [w < 0 for w in t.issue]
        assert f"corridor busy {round(100 * t.busy)}% of the ticks" in texts(root)
        busy.append(round(100 * t.busy))
    # the numbers the alt text and section 1 state: 6%, 25% twice (more rows = more requests), 100%
    assert busy == [6, 25, 25, 100]
    assert "(6%)" in spec.alt and "25%" in spec.alt


def test_occupancy_steps_are_the_models(figs):
    root = draw(figs, "occupancy-vs-registers")
    tips = titles(root)
    for dev, fn in (("h200", occupancy.hopper), ("mi300x", occupancy.cdna3)):
        mine = [t for t in tips if t.startswith(f"{dev}:")]
        want = []
        last = None
        for r in range(1, 257):
            res = fn(dev, 128, r, 0)
            if last is not None and res["occupancy"] != last and res["occupancy"] > 0:
                want.append(r - 1)
            last = res["occupancy"]
        got = [int(re.search(r"above (\d+) registers", t).group(1)) for t in mine]
        assert got == want
        assert all("limited by registers" in t for t in mine)
    # the thresholds the alt text and section 2 state
    regs = int(hardware.value("h200", "regs_per_unit"))
    threads = int(hardware.value("h200", "max_warps_per_unit") * hardware.value("h200", "lanes"))
    assert "100% up to 32 registers" in texts(root) and regs // threads == 32
    assert "100% up to 64 registers" in texts(root)
    assert int(hardware.value("mi300x", "vgprs_per_simd_lane") // hardware.value("mi300x", "max_waves_per_simd")) == 64


def test_littles_law_knees_and_the_lab_points(figs):
    spec = figs["littles-law"]
    root = draw(figs, "littles-law")
    units = int(hardware.value("h200", "units"))
    peak = hardware.value("h200", "hbm_bw")
    for lat in spec.args["latencies_ns"]:
        knee = lh.needed_in_flight(peak / 2, lat * 1e-9, units) / 1024
        assert f"{lat:g} ns: {knee:.1f} KiB" in texts(root)
        assert lh.copy_rate(knee * 1024, lat * 1e-9, units, peak) == pytest.approx(peak)
    # the ticks are the bytes in flight per SM of the lab's variants: warps x 32 lanes x 16 B x ILP
    variants = re.findall(r"TUTOR_VARIANT\(occ\d+_ilp(\d+), (\d+), (\d+)\)", LAB_CU)
    assert len(variants) == 19
    warps_per_block = int(re.search(r"constexpr int kThreads = (\d+);", LAB_CU).group(1)) // 32
    kib = sorted({lh.bytes_in_flight(int(b) * warps_per_block, 32, 16, int(i)) / 1024 for _, i, b in variants})
    assert kib == spec.args["points_kib"]
    assert "about 9 KiB" in spec.alt and "about 18 KiB" in spec.alt


def test_branch_lanes_passes(figs):
    spec = figs["branch-lanes"]
    root = draw(figs, "branch-lanes")
    for sp in spec.args["splits"]:
        p32, p64 = lh.split_passes(sp["group"], 32), lh.split_passes(sp["group"], 64)
        line = (f"warp of 32: {p32} path{'s' if p32 > 1 else ''} each;  "
                f"wavefront of 64: {p64} path{'s' if p64 > 1 else ''} each")
        assert line in texts(root)
    cells = [x for x in rects(root) if x["title"].startswith("thread ")]
    assert len(cells) == spec.args["span"] * len(spec.args["splits"])
    assert [lh.split_passes(s["group"], 32) for s in spec.args["splits"]] == [1, 1, 2]
    assert [lh.split_passes(s["group"], 64) for s in spec.args["splits"]] == [2, 1, 2]
