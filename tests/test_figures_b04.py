"""Figures of module B04: each draws from the loaded course, and what it shows is what fp8.py decodes."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor_build.figures import b04, svg
from tutor_build.load import load_course
from tutor_build.models import fp8

ROOT = Path(__file__).parents[1]
NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def figures():
    course = load_course(ROOT)[0]
    module = next(m for m in course.modules if m.id == "B04")
    return {spec.id: (spec, ET.fromstring(svg(spec))) for spec in module.figures}


def texts(root) -> list[str]:
    return [t.text or "" for t in root.iter(f"{NS}text")]


def titles(root, tag="rect") -> list[str]:
    return [t.text for el in root.iter(f"{NS}{tag}") for t in el.findall(f"{NS}title")]


def test_every_figure_draws_and_is_placed(figures):
    assert set(figures) == {"two-rulers", "bit-fields", "value-grid", "amax-scaling"}
    for spec, root in figures.values():
        assert root.get("role") == "img" and root.find(f"{NS}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560


def test_rulers_label_every_mark_as_the_codec_decodes_it(figures):
    spec, root = figures["two-rulers"]
    a, b = spec.args["fmt_a"], spec.args["fmt_b"]
    marks = [t for t in titles(root) if t.startswith("mark ")]
    assert len(marks) == spec.args["top_code"] + 1
    for t in marks:
        code, va, vb = re.fullmatch(r"mark (0x[0-9a-f]+): (\S+) on ruler 1, (\S+) on ruler 2", t).groups()
        assert va == b04.num(fp8.decode(int(code, 16), a)) and vb == b04.num(fp8.decode(int(code, 16), b))
    body = " ".join(texts(root))
    assert "1 on ruler 1, 0.5 on ruler 2" in body  # 0x38: 1.0 in OCP, 0.5 in FNUZ
    assert "−0 on ruler 1, NaN on ruler 2" in body  # 0x80


def test_bit_fields_have_the_widths_and_specials_of_the_codec(figures):
    spec, root = figures["bit-fields"]
    boxes = titles(root)
    fields = [boxes[i:i + 8] for i in range(0, len(boxes), 8)]
    assert len(fields) == 4
    body = texts(root)
    for fmt, byte in zip(spec.args["formats"], fields):
        f = fp8.fmt_info(fmt)
        assert byte.count("sign") == 1 and byte.count("exponent") == f.ebits and byte.count("mantissa") == f.mbits
        assert (f.ebits, f.mbits) in ((4, 3), (5, 2))
        assert f"1/{f.ebits}/{f.mbits}" in body and f"bias {f.bias}" in body
        assert f"{b04.bits(f.max_code, fmt)} = {b04.num(f.max)}" in body
    assert body.count("= −0") == 2 and body.count("= NaN") == 2  # 0x80: -0 in OCP, NaN in FNUZ
    assert "S.1111.111" in body and "1.0000.000" in body and "S.11111.00" in body  # E4M3 NaN, FNUZ NaN, E5M2 inf
    assert b04.pattern(b04.nan_codes("e4m3"), "e4m3") == "S.1111.111"
    assert b04.pattern(b04.nan_codes("e5m2"), "e5m2") == "S.11111.xx (x ≠ 00)"
    assert [b04.num(fp8.fmt_info(f).max) for f in spec.args["formats"]] == ["448", "240", "57344", "57344"]


def test_value_grid_has_a_tick_per_representable_value(figures):
    spec, root = figures["value-grid"]
    ticks = [el for el in root.iter(f"{NS}line") if el.get("y2") != el.get("y1") and el.get("x1") == el.get("x2")]
    expect = 0
    for fmt in spec.args["linear_formats"]:
        expect += len({fp8.decode(k, fmt) for k in range(0x80) if 0 <= fp8.decode(k, fmt) <= spec.args["linear_max"]})
    for fmt in spec.args["log_formats"]:
        expect += fp8.fmt_info(fmt).max_code
    body = " ".join(texts(root))
    assert "step 0.5" in body and "step 0.25" in body and "0.125" in body  # E4M3 steps in [1,8)
    assert "step 1" in body  # E5M2's step in [4, 8)
    # the value ticks (the axis end ticks of the log scale add a few)
    assert expect <= len(ticks) <= expect + 10


def test_scaling_counts_are_the_encoders(figures):
    spec, root = figures["amax-scaling"]
    xs = b04._sample(spec.args["n"], spec.args["sigma"])
    f = fp8.fmt_info(spec.args["fmt"])
    amax = max(abs(x) for x in xs)
    raw = b04.quantize_stats(xs, spec.args["fmt"], 1.0)
    scaled = b04.quantize_stats(xs, spec.args["fmt"], f.max / amax)
    body = texts(root)
    assert f"round to 0: {raw['zero']:.0%}" in body and f"round to 0: {scaled['zero']:.0%}" in body
    assert raw["zero"] > 0.5 and scaled["zero"] == 0 and scaled["rel_error"] < 1 / 16
    # the histogram bars hold every element, twice
    counts = [int(t.split()[0]) for t in titles(root) if " elements with " in t]
    assert sum(counts) == 2 * spec.args["n"]
    # scaling maps the amax onto the largest code exactly
    assert fp8.decode(fp8.encode(amax * f.max / amax, spec.args["fmt"]), spec.args["fmt"]) == f.max
    assert f"amax → {b04.num(f.max)}" in body
