"""Figures of module A01: each is drawn from the course as the site draws it, parsed, and checked against the
models it is drawn from (tutor_build/models/where_time_goes.py and hardware.py), so a figure that drifts
from the model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from svgparse import SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, numbers, rects, shown, texts
from tutor_build.figures import a01
from tutor_build.models import hardware
from tutor_build.models import where_time_goes as wt



module, figs = module_fixtures("A01")






# ---------------------------------------------------------------- declared, drawable, placed

def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["stadium"] == 1
    assert {placed["littles-law"], placed["timeline"]} <= {2}
    assert placed["hierarchy"] == 3


# ---------------------------------------------------------------- the analogy: gate and corridor to scale

def test_stadium_passages_are_the_two_bandwidths(figs):
    root = draw(figs, "stadium")
    by = {r["title"].split(":")[0]: r for r in rects(root)}
    gate, corridor = by["narrow gate"], by["wide corridor"]
    # pinned, not read back from the model: the numbers section 2 derives and the alt text states
    link, hbm = 64e9, 4.8e12  # PCIe Gen5 x16 each way [nvidia-h100-whitepaper]; H200 HBM [nvidia-h200-datasheet]
    assert wt.INPUTS["link_gbps"]["default"] * 1e9 == link
    assert hardware.value("h200", "hbm_bw") == hbm
    assert gate["w"] / corridor["w"] == pytest.approx(link / hbm, rel=1e-2)
    assert gate["title"] == "narrow gate: host link (PCIe): 64 GB/s each way"
    assert corridor["title"] == "wide corridor: HBM bandwidth: 4.8 TB/s, 75× the gate"
    words = texts(root)
    assert "64 GB/s each way" in words and "4.8 TB/s, 75× the gate" in words
    assert "Stadium = GPU: 132 sections (SMs)" in words
    assert "a row = 32 students (a warp);" in words


# ---------------------------------------------------------------- Little's law

def test_littles_law_area_and_requests_per_warp(figs):
    spec = figs["littles-law"]
    root = draw(figs, "littles-law")
    hbm = hardware.value("h200", "hbm_bw")
    warps = hardware.value("h200", "units") * hardware.value("h200", "max_warps_per_unit")
    assert warps == 8448
    lats = spec.args["latencies_ns"]
    areas = {int(r["title"].split(" ns")[0]): r for r in rects(root) if "TB/s =" in r["title"]}
    assert sorted(areas) == sorted(lats)
    for lat, r in areas.items():  # widths proportional to latency, all the same height (the bandwidth)
        assert r["w"] / areas[500]["w"] == pytest.approx(lat / 500, rel=1e-6)
        assert r["h"] == pytest.approx(areas[500]["h"])
    assert areas[500]["title"].endswith("= 2.4 MB")  # section 2, step 3
    loads = {int(r["title"].split(" ns")[0]): r for r in rects(root) if r["title"].endswith("loads per warp")}
    stores = {int(r["title"].split(" ns")[0]): r for r in rects(root) if r["title"].endswith("stores per warp")}
    assert sorted(loads) == sorted(stores) == sorted(lats)
    px = None
    for lat in lats:
        need = hbm * lat * 1e-9 / 128 / warps  # every byte in flight, as 128-byte requests
        ld, st = loads[lat], stores[lat]
        # a vector add's traffic: two loads and one store per element, so loads carry two-thirds of it
        assert ld["title"].endswith(f"{need * 2 / 3:.2f} loads per warp")
        assert st["title"].endswith(f"{need / 3:.2f} stores per warp")
        assert st["x"] == pytest.approx(ld["x"] + ld["w"], abs=0.01)  # the store part continues the bar
        px = px or ld["w"] / (need * 2 / 3)
        assert ld["w"] == pytest.approx(need * 2 / 3 * px, rel=1e-3)
        assert st["w"] == pytest.approx(need / 3 * px, rel=1e-3)
        assert f"{need:.1f}" in texts(root) and f"{need * 2 / 3:.1f}" in texts(root)
        assert ("fi-bg" in st["cls"]) and ("fi-bg" not in ld["cls"])  # stores hollow, loads solid
    assert "fi-s1" in loads[spec.args["assumed_ns"]]["cls"]
    need = hbm * 500e-9 / 128 / warps
    assert f"{need:.1f}" == "2.2" and f"{need * 2 / 3:.1f}" == "1.5"  # the numbers section 2 states
    assert need * 2 / 3 / 2 == pytest.approx(0.74, abs=0.005)  # "three-quarters of its life"
    # the dashed line: the two loads a one-element vector add issues, on the bars' scale
    dashed = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray")]
    assert len(dashed) == 1 and "st-bad" in dashed[0].get("class")
    x0 = loads[500]["x"]
    assert float(dashed[0].get("x1")) == pytest.approx(x0 + 2 * px, abs=0.05)
    assert "2 loads issued" in texts(root)


def test_littles_law_alt_and_caption_state_the_figures_numbers(figs):
    spec = figs["littles-law"]
    hbm = hardware.value("h200", "hbm_bw")
    warps = hardware.value("h200", "units") * hardware.value("h200", "max_warps_per_unit")
    alt, cap = spec.alt, spec.caption
    for lat in spec.args["latencies_ns"]:
        need = hbm * lat * 1e-9 / 128 / warps
        assert f"{need:.1f} at {lat} ns" in alt
        assert f"{need * 2 / 3:.1f}" in alt
        assert f"{a01._bytes(hbm * lat * 1e-9)}" in alt
    assert "8,448 resident warps" in alt and "dashed line at 2" in alt
    assert "2.2" in cap and "1.5 per warp" in cap and "issues 2" in cap
    assert "device-to-device copy" in cap and "one in three is a store" in cap
    # the figure is drawn at the datasheet peak, and the caption says that the one-float kernel's margin sits
    # inside the uncertainty of the assumed latency (no prediction that it falls short)
    assert "datasheet peak" in cap and "inside the uncertainty" in cap and "falls short" not in cap


# ---------------------------------------------------------------- every number in an alt text is drawn

@pytest.mark.parametrize("fig_id", ["stadium", "littles-law", "timeline", "hierarchy"])
def test_alt_text_numbers_are_shown_in_the_figure(figs, fig_id):
    root = draw(figs, fig_id)
    missing = numbers(figs[fig_id].alt, powers=True) - shown(root, powers=True)  # 2^20 and 2²⁰ are one number
    assert not missing, f"{fig_id}: the alt text states {sorted(missing)}, which the figure does not show"


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
    # widths in SVG units: 1% of the value, or the SVG's rounding to 0.01 units, whichever is larger (the
    # first run's kernel is 0.012% of the bar, 0.06 units: a tolerance on the share would let anything pass)
    for k, t in want.items():
        assert segs[k]["w"] == pytest.approx(width * t / r["total_s"], rel=1e-2, abs=0.006), k
    assert segs["kernel"]["w"] == pytest.approx(width * r["kernel_share"], rel=1e-2, abs=0.006)
    assert segs["kernel"]["w"] > 0
    # the kernel's colour is far from both copies' (it sits between them): neither red nor orange
    assert "fi-fg" in segs["kernel"]["cls"]
    assert {segs[k]["cls"] for k in ("copy in", "copy out")} == {"fi-s1", "fi-s2"}


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
    rest = first["total_s"] - first["context_s"]
    assert zoomed["w"] == pytest.approx(520 * first["kernel_s"] / rest, rel=1e-2, abs=0.006)


def test_timeline_alt_and_caption_state_the_models_numbers(figs):
    spec = figs["timeline"]
    root = draw(figs, "timeline")
    first, best = wt.compute(spec.args["first"]), wt.compute(spec.args["best"])
    words = texts(root)
    # pinned: the first run is the player's default (2^20, new context, pageable copies at 7 GB/s)
    assert first["inputs"]["log2_n"] == 20 and first["copy_gbps"] == 7
    assert first["total_s"] == pytest.approx(62.4e-3, abs=0.05e-3)
    assert first["context_s"] == 60e-3
    assert best["copy_gbps"] == 64 and best["context_s"] == 0 and best["alloc_s"] == 0
    alt = spec.alt
    for r, name in ((first, "First run"), (best, "Best case")):
        total = a01._ms(r["total_s"])
        kernel = a01._ms(r["kernel_s"])
        share = a01._pct(r["kernel_share"])
        assert f"{name}: {total}" in words
        assert f"kernel {kernel}: {share} of the run" in words
        assert total in alt and kernel in alt and share in alt
    assert "2^20 elements, new context, pageable copies" in alt
    assert "2^24 elements, warm context, pinned copies, no allocation" in alt
    assert f"context creation is {a01._ms(first['context_s'])}" in alt
    assert "Where the time goes" in spec.caption and "sliver" in spec.caption


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


def test_hierarchy_alt_and_caption_state_the_figures_numbers(figs):
    spec = figs["hierarchy"]
    block, n = spec.args["block"], 2 ** spec.args["n_log2"]
    alt = spec.alt
    assert f"{-(-n // block):,} blocks for 2^{spec.args['n_log2']} elements" in alt
    warp, wave = int(hardware.value("h200", "lanes")), int(hardware.value("mi300x", "lanes"))
    assert f"its {block} threads" in alt
    assert f"{block // warp} rows of {warp} lanes (warps)" in alt
    assert f"{block // wave} rows of {wave}" in alt
    assert f"{warp} lanes on NVIDIA, {wave} on AMD" in spec.caption


def test_stadium_alt_and_caption_state_the_figures_numbers(figs):
    spec = figs["stadium"]
    root = draw(figs, "stadium")
    assert "64 GB/s each way" in spec.alt and "75 times wider" in spec.alt and "4.8 TB/s" in spec.alt
    assert "rows of 32 students" in spec.alt
    assert "64 GB/s" in spec.caption and "4.8 TB/s" in spec.caption
    assert "75×" in " ".join(texts(root))  # the figure says 75×, the alt "75 times"
