"""Measurement plots of the real course: inline SVG in the lab's own order, with human labels, ceilings named,
a prediction mark per configuration, no overlapping or tiny text; and the declaration that orders them checked."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor_build.checks import run_all
from tutor_build.load import load_course
from tutor_build.mdscan import scan
from tutor_build.render.inline import TOKEN
from tutor_build.render.measured import Filler
from tutor_build.render.plots import overlap, svg_texts, text_box

REPO = Path(__file__).resolve().parents[1]
NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def course():
    course, _ = load_course(REPO)
    return course


def placeholders(course) -> list[tuple[str, str, str]]:
    """(func, prefix, page) of every plot and roofline placeholder on the course's pages."""
    found = []
    for m in course.modules:
        for section in m.sections:
            for p in scan(section.text).placeholders:
                if p.func in ("plot", "roofline"):
                    found.append((p.func, p.args[0], section.path))
    return found


def draw(course, func: str, prefix: str) -> tuple[str, str, str]:
    """(key, svg, caption) of one placeholder, through the page filler."""
    filler = Filler(course)
    token = filler.fill(f'{{{{ {func}("{prefix}") }}}}', "../")
    m = TOKEN.fullmatch(token)
    assert m, f"{func}({prefix}) did not give an inline SVG token: {token[:200]}"
    return m.group("key"), filler.inline[m.group("key")], m.group("caption")


def texts(svg: str) -> list[str]:
    return [t for t, _, _ in svg_texts(svg)]


def bar_labels(svg: str) -> list[str]:
    """The label lines above the bars, top to bottom: texts at the left margin in the plain fg colour."""
    root = ET.fromstring(svg)
    return [el.text for el in root.iter(f"{NS}text")
            if el.get("x") == "16" and el.get("class") == "fi-fg" and el.get("font-weight") is None]


def test_every_plot_placeholder_of_the_course_renders_as_inline_svg(course):
    found = placeholders(course)
    assert {(f, p) for f, p, _ in found} >= {("plot", "A01/timeline"), ("plot", "A02/transpose"), ("roofline", "C07/calibration/gemm_")}
    for func, prefix, page in found:
        key, svg, caption = draw(course, func, prefix)
        assert re.fullmatch(r"[\w.-]+", key)
        root = ET.fromstring(svg)  # well-formed
        assert root.get("role") == "img" and root.find(f"{NS}title").text.strip()
        alt = root.get("aria-label")
        assert len(alt) > 80 and re.search(r"\d", alt), f"{page}: alt text of {prefix} must state its main values"
        assert "H200" in caption and "2026-" in caption and ("CUDA 13.0" in caption), caption
        assert re.search(r"ceiling|copy|total|prediction|derived|roofs", caption, re.I)


def test_no_text_is_small_overlapping_or_outside_the_canvas(course):
    for func, prefix, _ in placeholders(course):
        _, svg, _ = draw(course, func, prefix)
        vb = [float(v) for v in ET.fromstring(svg).get("viewBox").split()]
        assert vb[2] <= 560
        boxes = [(t, b, s) for t, b, s in svg_texts(svg) if t.strip()]
        for t, b, size in boxes:
            assert size >= 14, f"{prefix}: {t!r} at {size}"
            assert b[0] >= 0 and b[2] <= vb[2] and b[1] >= 0 and b[3] <= vb[3], f"{prefix}: {t!r} leaves the canvas {b}"
        for i, (t1, b1, _) in enumerate(boxes):
            for t2, b2, _ in boxes[i + 1:]:
                assert not overlap(b1, b2), f"{prefix}: {t1!r} overlaps {t2!r}"


def test_the_text_box_estimate_follows_anchor_baseline_and_rotation():
    assert text_box(100, 50, "abcde", 20) == (100, 34, 160, 54)
    assert text_box(100, 50, "abcde", 20, anchor="middle")[0] == 70
    assert text_box(100, 50, "abcde", 20, anchor="end", middle=True) == (40, 40, 100, 60)
    x0, y0, x1, y1 = text_box(16, 200, "abcde", 20, anchor="middle", rotate=-90)  # a y-axis title
    assert (x1 - x0, y1 - y0) == (20, 60) and y0 == 170


def test_height_grows_with_the_number_of_bars(course):
    for prefix in ("A01/vector_add", "A02/transpose", "C07/calibration/step_bf16", "A01/timeline"):
        _, svg, _ = draw(course, "plot", prefix)
        height = float(ET.fromstring(svg).get("viewBox").split()[3])
        bars = len([r for r in ET.fromstring(svg).iter(f"{NS}rect") if r.find(f"{NS}title") is not None])
        assert 30 * bars <= height <= 60 * bars + 260, (prefix, bars, height)


def test_a02_ladder_runs_in_the_labs_order_with_human_labels(course):
    _, svg, _ = draw(course, "plot", "A02/transpose")
    labels = bar_labels(svg)
    assert labels == ["naive, coalesced reads, strided writes", "naive, strided reads, coalesced writes",
                      "32 × 32 shared-memory tile, bank conflicts", "tile padded to 33 columns, no conflicts",
                      "best (64 × 64 tile, 16-byte accesses)", "32 × 32 tile, 4 warps", "best (64 × 64 tile, 16-byte accesses)"] + [
                      f"candidate, {tile} tile, {warps} warps" for tile, warps in
                      (("64 × 64", 8), ("64 × 64", 4), ("128 × 64", 8), ("64 × 128", 8), ("128 × 128", 16), ("32 × 128", 4))]
    all_text = " ".join(texts(svg))
    assert all_text.index("CUDA") < all_text.index("Triton")
    for raw in ("naive_row", "tiled_padded", "best/cuda", "/triton"):
        assert raw not in all_text


def test_a01_timeline_keeps_phase_order_and_each_vendor_has_its_own_total(course):
    _, svg, caption = draw(course, "plot", "A01/timeline")
    labels = bar_labels(svg)
    phases = ["create the GPU context (first API call)", "allocate device memory", "copy the inputs host to device",
              "the kernel, first launch, host clock", "the kernel, warm, device events", "copy the result device to host",
              "free device memory", "the whole program"]
    assert labels == phases + phases
    root = ET.fromstring(svg)
    # Each vendor's "whole program" bar spans its own axis: the full width, though the totals differ ~2x.
    totals = [r for r in root.iter(f"{NS}rect") if (r.findtext(f"{NS}title") or "").startswith("the whole program")]
    assert len(totals) == 2 and totals[0].get("width") == totals[1].get("width")
    kernel = [r for r in root.iter(f"{NS}rect") if (r.findtext(f"{NS}title") or "").startswith("the kernel, first launch")]
    assert float(kernel[0].get("width")) < 2.5 < float(kernel[1].get("width"))  # CUDA's is tiny, Triton's is most
    all_text = " ".join(texts(svg))
    totals = {v: f"{round(course.measured(f'A01/timeline/total/{v}').value):,} ms" for v in ("cuda", "triton")}
    assert f"% of the CUDA program total, {totals['cuda']}" in all_text
    assert f"% of the Triton program total, {totals['triton']}" in all_text
    assert f"{totals['cuda']} for CUDA, {totals['triton']} for Triton" in caption


def test_axis_titles_name_the_ceiling(course):
    expect = {"A02/transpose": "device-to-device copy measured in the same run", "A01/vector_add": "device-to-device copy",
              "B04/quantize": "device-to-device copy", "A01/timeline": "program total",
              "C07/calibration/step_bf16": "calibrated model's", "B07/pipeline_memory": "derivation's value"}
    for prefix, words in expect.items():
        _, svg, _ = draw(course, "plot", prefix)
        axis_titles = [el.text for el in ET.fromstring(svg).iter(f"{NS}text")
                       if el.get("text-anchor") == "middle" and el.get("class") == "fi-fg"]
        assert any(words.split()[0] in t for t in axis_titles) and words in " ".join(axis_titles), (prefix, axis_titles)
        percents = [t for t in texts(svg) if "%" in t]
        assert all(re.search(r"% of (copy|total|the)", t) or t.endswith("%") for t in percents)


def test_one_prediction_mark_per_configuration(course):
    for prefix, count in (("C07/calibration/step_bf16", 12), ("B07/pipeline_memory", 10)):
        _, svg, _ = draw(course, "plot", prefix)
        root = ET.fromstring(svg)
        bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
        ticks = [ln for ln in root.iter(f"{NS}line") if ln.get("stroke-width") == "3"]
        assert len(bars) == len(ticks) == count
        assert len({ln.get("x1") for ln in ticks}) >= 3, "each configuration has its own prediction, not one line for all"
        recs = [m for m in course.measurements if m.key.startswith(prefix) and not m.local]
        ratios = sorted(round(m.ceiling_value / m.value, 2) for m in recs)
        drawn = []
        for bar, tick in zip(bars, ticks):  # the tick crosses its own bar, at that record's own prediction
            x, w, y, h = (float(bar.get(k)) for k in ("x", "width", "y", "height"))
            assert float(tick.get("y1")) < y < y + h < float(tick.get("y2"))
            drawn.append(round((float(tick.get("x1")) - x) / w, 2))
        assert sorted(drawn) == pytest.approx(ratios, abs=0.011)


def test_roofline_has_decades_datasheet_and_measured_roofs_and_numbered_points(course):
    _, svg, caption = draw(course, "roofline", "C07/calibration/gemm_")
    all_text = texts(svg)
    for decade in ("0.1", "1", "10", "100", "1,000"):
        assert decade in all_text
    assert any(t.startswith("datasheet: 4.8 TB/s, bf16 990 TFLOP/s") for t in all_text)
    assert any(t.startswith("datasheet: 4.8 TB/s, fp8 1,979 TFLOP/s") for t in all_text)
    assert any(t.startswith("measured device-to-device copy:") for t in all_text)
    numbers = [el.text for el in ET.fromstring(svg).iter(f"{NS}text")
               if el.get("font-weight") == "700" and re.fullmatch(r"\d+", el.text)]
    gemms = [m for m in course.measurements if m.key.startswith("C07/calibration/gemm_") and not m.local]
    assert len(gemms) == 15 and len(numbers) == 2 * len(gemms)  # bf16, fp8 and per-row fp8 at five M each
    assert sorted(set(numbers), key=int) == [str(i) for i in range(1, len(gemms) + 1)]  # on the plot, and listed
    listed = [t for t in all_text if "FLOP/B" in t]
    assert len(listed) == len(gemms) and listed[0].startswith("bf16 GEMMs of one layer, M = 1:")
    assert any(t.startswith("fp8 GEMMs of one layer") for t in all_text)
    assert not any("_ctx" in t or "/python" in t for t in all_text)
    assert "[@nvidia-h200-datasheet]" in caption


def test_downloadable_copy_is_a_standalone_svg_with_colours(course):
    filler = Filler(course)
    filler.fill('{{ plot("A02/transpose") }}', "../")
    copy = filler.plots["assets/generated/plots/a02-transpose.svg"]
    assert copy.startswith("<?xml") and "<style>" in copy and "--tf-s1" in copy
    ET.fromstring(copy.split("\n", 1)[1])


# ---------------------------------------------------------------- the declaration, broken in a copy of the course

@pytest.fixture
def course_copy(tmp_path) -> Path:
    dest = tmp_path / "course"
    ignore = shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "site", "__pycache__", "*.egg-info")
    shutil.copytree(REPO, dest, ignore=ignore)
    return dest


def diagnose(root: Path) -> list[tuple[str, int, str, str]]:
    course, diags = load_course(root)
    return [(d.path, d.line, d.code, d.message) for d in run_all(course, diags) if d.code.startswith("E5")]


def test_a_variant_missing_from_the_declaration_is_an_error_naming_file_and_line(course_copy):
    decl = course_copy / "labs/A02/plots.yml"
    text = decl.read_text()
    decl.write_text(text.replace("    tiled: 32 × 32 shared-memory tile, bank conflicts\n", ""))
    line = next(i for i, s in enumerate(decl.read_text().splitlines(), 1) if s.startswith("transpose:"))
    found = diagnose(course_copy)
    assert [(p, ln, c) for p, ln, c, _ in found] == [("labs/A02/plots.yml", line, "E508")]
    assert "'tiled'" in found[0][3] and "A02/transpose/tiled/cuda" in found[0][3]
    # ... and the record still appears, last of its vendor, under a readable name.
    course, _ = load_course(course_copy)
    _, svg, _ = draw(course, "plot", "A02/transpose")
    labels = bar_labels(svg)
    assert labels[:5] == ["naive, coalesced reads, strided writes", "naive, strided reads, coalesced writes",
                          "tile padded to 33 columns, no conflicts", "best (64 × 64 tile, 16-byte accesses)", "tiled"]


def test_reordering_the_declaration_reorders_the_bars(course_copy):
    decl = course_copy / "labs/A01/plots.yml"
    text = decl.read_text()
    free = "    free: free device memory\n"
    decl.write_text(text.replace(free, "").replace("    context:", free + "    context:"))
    course, _ = load_course(course_copy)
    _, svg, _ = draw(course, "plot", "A01/timeline")
    assert bar_labels(svg)[:2] == ["free device memory", "create the GPU context (first API call)"]
    assert diagnose(course_copy) == []


def test_a_broken_declaration_gives_its_diagnostics(course_copy):
    decl = course_copy / "labs/C07/plots.yml"
    text = decl.read_text()
    decl.write_text(text.replace("    step_bf16_graph_b1_ctx4096: bf16, CUDA graph, batch 1, context 4,096",
                                 "    step_bf16_graph_b1_ctx4096: ''")
                    + "sizing_typo:\n  variants:\n    a: A\nkv_read_extra: 3\n")
    codes = sorted((c, ln) for _, ln, c, _ in diagnose(course_copy))
    lines = decl.read_text().splitlines()
    at = {name: i for i, s in enumerate(lines, 1) for name in [s.split(":")[0].strip()]}
    assert ("E509", at["step_bf16_graph_b1_ctx4096"]) in codes  # an empty label
    assert ("E508", at["calibration"]) in codes  # ... so that variant is undeclared
    assert ("E510", at["sizing_typo"]) in codes  # a lab C07 does not have
    assert ("E509", at["kv_read_extra"]) in codes  # not a mapping with variants


def test_a_plot_of_an_undeclared_lab_is_an_error_at_the_placeholder(course_copy):
    decl = course_copy / "labs/C07/plots.yml"
    text = decl.read_text()
    decl.write_text(text[:text.index("kv_read:")])
    page = "modules/C07-capstone-serving-node/5-performance.md"
    line = next(i for i, s in enumerate((course_copy / page).read_text().splitlines(), 1) if 'plot("C07/kv_read")' in s)
    assert [(p, ln, c) for p, ln, c, _ in diagnose(course_copy)] == [(page, line, "E511")]


def test_a_roofline_of_several_prefixes_places_the_points_of_every_prefix(course):
    filler = Filler(course)
    token = filler.fill('{{ roofline("C07/calibration/gemm_bf16", "C07/calibration/gemm_fp8") }}', "../")
    m = TOKEN.fullmatch(token)
    assert m, token[:200]
    shown = texts(filler.inline[m.group("key")])
    listed = [t for t in shown if "FLOP/B" in t]
    bf16 = [x for x in course.measurements if x.key.startswith("C07/calibration/gemm_bf16") and not x.local]
    fp8 = [x for x in course.measurements if x.key.startswith("C07/calibration/gemm_fp8") and not x.local]
    assert bf16 and fp8 and len(listed) == len(bf16) + len(fp8), listed
    legend = " ".join(shown)
    assert "fp8 GEMMs" in legend and legend.index("bf16 GEMMs") < legend.index("fp8 GEMMs")  # the prefixes' order
    one, _, _ = draw(course, "roofline", "C07/calibration/gemm_bf16")  # one prefix still draws as before
    assert one != m.group("key")


def test_a_ceiling_that_starts_with_a_formula_or_a_count_is_called_a_bound():
    """The tick's noun is the ceiling's first word; "max(bytes / copy bandwidth, ...)" once printed "1.76x max(bytes"."""
    from tutor_build.model import Measurement, SourceRef
    from tutor_build.render.plots import ceiling_of

    def noun(name):
        m = Measurement("X/y/z/python", "t", 2.0, "ms", "G", "T", "2026-01-01", name, 1.0, "ms", (), "", False,
                        SourceRef("measurements/h200.jsonl", 1), {})
        return ceiling_of(m).noun
    assert noun("max(bytes / copy bandwidth, FLOPs / torch.mm rate), same run") == "bound"
    assert noun("16 bytes a parameter, derived") == "bound"
    assert noun("derived, fp32 replica") == "derived"
    assert noun("torch.mm bf16, 8192 x 8192 x 8192") == "torch.mm"
