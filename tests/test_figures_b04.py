"""Figures of module B04: each draws from the loaded course, and what it shows is what fp8.py decodes.

Besides the codec, a few marks are pinned to the format definitions themselves (OCP 8-bit floating point
spec, AMD's FNUZ types), so a codec and a figure that broke together still fail; and the numbers that the
alt texts and captions state are checked against what the figure draws."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from svgparse import SVG, draw, module_fixtures, placed, titles
from tutor_build.figures import b04
from tutor_build.models import fp8


module, figs = module_fixtures("B04")


@pytest.fixture(scope="module")
def figures(figs):
    """Each figure's spec and its drawing, by id."""
    return {fig_id: (spec, draw(figs, fig_id)) for fig_id, spec in figs.items()}


def shown(s: str) -> str:
    """A label as the figure shows it: a power written 2^−9 is drawn as 2 with a raised −9."""
    return s.replace("^", "")


def text_els(root) -> list[ET.Element]:
    return list(root.iter(f"{SVG}text"))


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in text_els(root)]


def vticks(root) -> list[ET.Element]:
    return [el for el in root.iter(f"{SVG}line") if el.get("y2") != el.get("y1") and el.get("x1") == el.get("x2")]


def pow2_labels(root) -> dict[int, float]:
    """Axis labels 2^e (drawn as 2 and a raised exponent): exponent -> x."""
    out = {}
    for el in text_els(root):
        m = re.fullmatch(r"2([−-]?\d+)", "".join(el.itertext()))
        if m and el.find(f"{SVG}tspan") is not None:
            out[int(m[1].replace("−", "-"))] = float(el.get("x"))
    return out


# ---------------------------------------------------------------- placement


def test_every_figure_draws_and_is_placed(module, figures):
    where = placed(module)
    assert where == {"two-rulers": 1, "bit-fields": 2, "value-grid": 2, "amax-scaling": 2}
    assert set(figures) == set(where)
    for spec, root in figures.values():
        assert spec.alt.strip() and spec.caption.strip()
        assert root.get("role") == "img" and root.find(f"{SVG}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560
        assert "^" not in " ".join(texts(root))  # powers are superscripts, never a caret


# ---------------------------------------------------------------- two-rulers (section 1)

# Bit patterns from the format definitions, independent of the codec: OCP E4M3 (bias 7, NaN S.1111.111)
# and FNUZ E4M3 (bias 8, the single NaN 0x80, no negative zero).
OCP_E4M3 = {0x00: "0", 0x01: "2^−9", 0x08: "0.015625", 0x20: "0.125", 0x28: "0.25", 0x30: "0.5", 0x38: "1", 0x3C: "1.5",
            0x40: "2", 0x7E: "448", 0x7F: "NaN", 0x80: "−0", 0xFF: "NaN"}
FNUZ_E4M3 = {0x00: "0", 0x01: "2^−10", 0x08: "2^−7", 0x20: "0.0625", 0x28: "0.125", 0x30: "0.25", 0x38: "0.5", 0x3C: "0.75",
             0x40: "1", 0x7E: "224", 0x7F: "240", 0x80: "NaN", 0xFF: "−240"}


def test_rulers_label_every_mark_as_the_codec_decodes_it(figures):
    spec, root = figures["two-rulers"]
    a, b = spec.args["fmt_a"], spec.args["fmt_b"]
    assert (a, b) == ("e4m3", "e4m3fnuz")
    marks = {}
    for t in titles(root):
        if t.startswith("mark "):
            code, va, vb = re.fullmatch(r"mark (0x[0-9a-f]+): (\S+) on ruler 1, (\S+) on ruler 2", t).groups()
            marks[int(code, 16)] = (va, vb)
    assert sorted(marks) == list(range(spec.args["top_code"] + 1))
    for code, (va, vb) in marks.items():
        assert va == b04.num(fp8.decode(code, a)) and vb == b04.num(fp8.decode(code, b))
        if code in OCP_E4M3:  # independent of the codec
            assert (va, vb) == (OCP_E4M3[code], FNUZ_E4M3[code]), hex(code)
    # the notes below the ruler: the highlighted mark and every mark that changes meaning
    notes = {}
    for el in text_els(root):
        m = re.fullmatch(r"mark (0x[0-9A-F]{2}):", el.text or "")
        if m:
            body = next(t for t in text_els(root) if t.get("y") == el.get("y") and t is not el)
            notes[int(m[1], 16)] = body.text
    assert set(notes) == {spec.args["mark"], 0x7F, 0x80, 0xFF}
    for code, body in notes.items():
        assert body == f"{OCP_E4M3[code]} on ruler 1, {FNUZ_E4M3[code]} on ruler 2"


def test_rulers_caption_names_the_marks_that_change_meaning(figures):
    spec, root = figures["two-rulers"]
    changed = b04.changed_marks(spec.args["fmt_a"], spec.args["fmt_b"])
    # from the definitions: a label that is not the OCP one halved is NaN on one side
    by_definition = {c for c in OCP_E4M3 if "NaN" in (OCP_E4M3[c], FNUZ_E4M3[c])}
    assert set(changed) == by_definition == {0x7F, 0x80, 0xFF}
    named = {int(h, 16) for h in re.findall(r"0x[0-9A-F]{2}", spec.caption)}
    assert named == set(changed) and "three marks" in spec.caption
    assert "0x80 (−0 on one ruler, NaN on the other)" in spec.caption
    assert f"±{b04.num(fp8.decode(0x7F, 'e4m3fnuz'))}" in spec.caption  # ±240
    # every other mark is halved, on the ruler and off it
    for code in set(range(256)) - set(changed):
        assert fp8.decode(code, "e4m3fnuz") == fp8.decode(code, "e4m3") / 2


def test_rulers_alt_text_states_the_drawn_labels(figures):
    spec, root = figures["two-rulers"]
    top = [t.text for t in text_els(root) if t.get("y") == "54"]
    bottom = [t.text for t in text_els(root) if t.get("y") == "136"]
    lists = re.findall(r"\(([0-9., ]+)\)", spec.alt)
    assert [s.split(", ") for s in lists] == [sorted(top, key=float), sorted(bottom, key=float)]
    assert f"0x00 to 0x{spec.args['top_code']:02X}" in spec.alt
    assert f"from 0 to {max(top, key=float)}" in spec.alt
    m = spec.args["mark"]
    assert (f"Mark 0x{m:02X} reads {b04.num(fp8.decode(m, 'e4m3'))} on one ruler and "
            f"{b04.num(fp8.decode(m, 'e4m3fnuz'))} on the other") in spec.alt
    assert f"0x7F reads NaN on one ruler and {FNUZ_E4M3[0x7F]}" in spec.alt
    assert "0xFF NaN and minus 240" in spec.alt and FNUZ_E4M3[0xFF] == "−240"


# ---------------------------------------------------------------- bit-fields (section 2)


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
        assert shown(f"{b04.num(fp8.decode(0x01, fmt))} (0x01)") in body
    assert body.count("= −0") == 2 and body.count("= NaN") == 2  # 0x80: -0 in OCP, NaN in FNUZ
    assert "S.1111.111" in body and "1.0000.000" in body and "S.11111.00" in body  # E4M3 NaN, FNUZ NaN, E5M2 inf
    assert b04.pattern(b04.nan_codes("e4m3"), "e4m3") == "S.1111.111"
    assert b04.pattern(b04.nan_codes("e5m2"), "e5m2") == "S.11111.xx (x ≠ 00)"
    assert [b04.num(fp8.fmt_info(f).max) for f in spec.args["formats"]] == ["448", "240", "57344", "57344"]
    # the smallest subnormals, from the definition 2^(1 - bias - m)
    assert [t for t in body if t.endswith("(0x01)")] == ["2−9 (0x01)", "2−10 (0x01)", "2−16 (0x01)", "2−17 (0x01)"]


def test_bit_fields_alt_and_caption_state_the_drawn_numbers(figures):
    spec, root = figures["bit-fields"]
    body = texts(root)
    fmts = spec.args["formats"]
    biases = re.search(r"the bias \(([\d, ]+)\)", spec.alt)[1].split(", ")
    assert biases == [t.split()[1] for t in body if t.startswith("bias ")] == [str(fp8.fmt_info(f).bias) for f in fmts]
    maxes = re.search(r"finite value with its bits \(([\d, ]+)\)", spec.alt)[1].split(", ")
    assert maxes == [t.split(" = ")[1] for t in body if re.fullmatch(r"[01]\.[01]+\.[01]+ = \d+", t)]
    assert "minus zero in OCP, NaN in FNUZ" in spec.alt
    one = [f"0x{fp8.encode(1.0, f):02X}" for f in ("e4m3", "e4m3fnuz")]
    assert f"= {one[0]}" in body and f"= {one[1]}" in body
    assert f"1.0 moves from {one[0]} to {one[1]} in E4M3" in spec.caption
    # "every byte that is a number on both sides is worth half as much on the right", in both rows
    assert "worth half as much on the right" in spec.caption
    for ocp, fnuz in (("e4m3", "e4m3fnuz"), ("e5m2", "e5m2fnuz")):
        for code in range(256):
            va, vb = fp8.decode(code, ocp), fp8.decode(code, fnuz)
            if math.isfinite(va) and math.isfinite(vb):
                assert vb == va / 2, (ocp, hex(code))


# ---------------------------------------------------------------- value-grid (section 2)


def test_value_grid_ticks_sit_at_their_values(figures):
    spec, root = figures["value-grid"]
    a = spec.args
    ticks = vticks(root)
    rows: dict[tuple[float, str], list[float]] = {}
    for el in ticks:
        length = float(el.get("y2")) - float(el.get("y1"))
        if length in (12, 14):  # value ticks: 12 on the linear rows, 14 on the log rows
            rows.setdefault((length, el.get("y1")), []).append(float(el.get("x1")))
    linear = [xs for (n, y), xs in sorted(rows.items(), key=lambda kv: float(kv[0][1])) if n == 12]
    log = [xs for (n, y), xs in sorted(rows.items(), key=lambda kv: float(kv[0][1])) if n == 14]
    assert len(linear) == len(a["linear_formats"]) and len(log) == len(a["log_formats"])
    # the linear axis, read off its labels 0..linear_max
    lab = {int(t.text): float(t.get("x")) for t in text_els(root) if re.fullmatch(r"\d+", t.text or "")}
    x0, x1 = lab[0], lab[int(a["linear_max"])]
    assert sorted(lab) == list(range(int(a["linear_max"]) + 1))
    for fmt, xs in zip(a["linear_formats"], linear):
        vals = sorted({fp8.decode(k, fmt) for k in range(0x80) if 0 <= fp8.decode(k, fmt) <= a["linear_max"]})
        want = [x0 + v / a["linear_max"] * (x1 - x0) for v in vals]
        assert sorted(xs) == pytest.approx(want, abs=0.02), fmt
    # the log axis, read off its 2^e labels; its small axis ticks sit under them
    pw = pow2_labels(root)
    lo, hi = min(pw), max(pw)
    x_of = lambda v: pw[lo] + (math.log2(v) - lo) / (hi - lo) * (pw[hi] - pw[lo])  # noqa: E731
    axis_ticks = sorted(float(el.get("x1")) for el in ticks if float(el.get("y2")) - float(el.get("y1")) == 6)
    assert axis_ticks == pytest.approx(sorted(pw.values()), abs=0.01)
    for fmt, xs in zip(a["log_formats"], log):
        f = fp8.fmt_info(fmt)
        vals = [fp8.decode(k, fmt) for k in range(1, f.max_code + 1)]
        assert sorted(xs) == pytest.approx(sorted(x_of(v) for v in vals), abs=0.02), fmt
    # OCP E4M3 from 2^-9 to 448, FNUZ from 2^-10 to 240, one binade lower (from the definitions)
    assert x_of(2.0 ** -9) == pytest.approx(min(log[0]), abs=0.02) and x_of(448) == pytest.approx(max(log[0]), abs=0.02)
    assert x_of(2.0 ** -10) == pytest.approx(min(log[1]), abs=0.02) and x_of(240) == pytest.approx(max(log[1]), abs=0.02)
    # subnormal ticks in the warning colour: 2^m - 1 of them per log row
    warn = [el for el in ticks if "st-warn" in el.get("class") and float(el.get("y2")) - float(el.get("y1")) == 14]
    assert len(warn) == sum(2 ** fp8.fmt_info(f).mbits - 1 for f in a["log_formats"])


def test_value_grid_steps_and_texts_are_the_codecs(figures):
    spec, root = figures["value-grid"]
    body = " ".join(texts(root))
    assert "step 0.5" in body and "step 0.25" in body and "0.125" in body  # E4M3 steps in [1,8)
    assert "step 1" in body  # E5M2's step in [4, 8)
    # the alt's E4M3 steps between 1, 2, 4 and 8 are the codec's spacing
    steps = re.search(r"E4M3: ([\d., ]+) between 1, 2, 4 and 8", spec.alt)[1].split(", ")
    assert [float(s) for s in steps] == [fp8.decode(fp8.encode(lo, "e4m3") + 1, "e4m3") - lo for lo in (1, 2, 4)]
    assert "eight ticks per binade" in spec.alt and fp8.fmt_info("e4m3").mbits == 3
    # the caption's ranges are the row labels
    rng = [t for t in texts(root) if " to " in t and not t.startswith(("Linear", "Log"))]
    assert rng == ["2−9 to 448", "2−10 to 240"]
    assert "from $2^{-9}$ to 448 to $2^{-10}$ to 240" in spec.caption
    # "the top is 240, not 224, because FNUZ's 0x7F is a number where OCP's, which would be 480, is NaN"
    assert fp8.decode(0x7E, "e4m3") / 2 == 224 and fp8.decode(0x7F, "e4m3fnuz") == 240
    assert math.isnan(fp8.decode(0x7F, "e4m3")) and 2 * fp8.decode(0x7F, "e4m3fnuz") == 480
    assert "the top is 240, not 224" in spec.caption and "which would be 480, is NaN" in spec.caption


# ---------------------------------------------------------------- amax-scaling (section 2)


def scaling_parts(root):
    """Per panel: zones {name: (x0, x1)} and bars [(x0, x1, count, lo_exp, hi_exp)], in drawing order."""
    panels = []
    for el in root.iter(f"{SVG}rect"):
        t = el.find(f"{SVG}title")
        if t is None:
            continue
        x0, x1 = float(el.get("x")), float(el.get("x")) + float(el.get("width"))
        if t.text.startswith("→ 0:"):
            panels.append({"zones": {}, "bars": []})
        m = re.fullmatch(r"(\d+) of \d+ elements with \|x\| in 2\^(\S+) to 2\^(\S+)", t.text)
        if m:
            panels[-1]["bars"].append((x0, x1, int(m[1]), float(m[2]), float(m[3])))
        else:
            panels[-1]["zones"][t.text.split(":")[0]] = (x0, x1)
    return panels


def test_scaling_counts_are_the_encoders(figures):
    spec, root = figures["amax-scaling"]
    xs = b04._sample(spec.args["n"], spec.args["sigma"])
    fmt = spec.args["fmt"]
    f = fp8.fmt_info(fmt)
    assert (f.max, f.min_normal, f.min_subnormal) == (448, 2.0 ** -6, 2.0 ** -9)  # OCP E4M3, by definition
    amax = max(abs(x) for x in xs)
    raw = b04.quantize_stats(xs, fmt, 1.0)
    scaled = b04.quantize_stats(xs, fmt, f.max / amax)
    body = texts(root)
    assert f"round to 0: {raw['zero']:.0%}" in body and f"round to 0: {scaled['zero']:.0%}" in body
    assert f"mean relative error {raw['rel_error']:.1%}" in body
    assert f"mean relative error {scaled['rel_error']:.1%}" in body
    assert raw["zero"] > 0.5 and scaled["zero"] == 0 and scaled["rel_error"] < 1 / 16
    assert "value cast, |s·x|, log scale" in body
    # the drawn axis, read off its 2^e labels
    pw = pow2_labels(root)
    lo, hi = min(pw), max(pw)
    x_of = lambda e: pw[lo] + (e - lo) / (hi - lo) * (pw[hi] - pw[lo])  # noqa: E731
    panels = scaling_parts(root)
    assert len(panels) == 2
    for panel, scale in zip(panels, (1.0, f.max / amax)):
        z = panel["zones"]
        # the zones are the format's: below half the smallest subnormal rounds to 0, then subnormal, normal, over
        assert z["→ 0"][1] == pytest.approx(x_of(-10), abs=0.02) == pytest.approx(z["sub"][0], abs=0.02)
        assert z["sub"][1] == pytest.approx(x_of(-6), abs=0.02) == pytest.approx(z["normal"][0], abs=0.02)
        assert z["normal"][1] == pytest.approx(x_of(math.log2(448)), abs=0.02) == pytest.approx(z["over"][0], abs=0.02)
        bars = panel["bars"]
        assert sum(b[2] for b in bars) == spec.args["n"]
        for x0, x1, _, e0, e1 in bars:  # each bar spans its bin on the drawn axis
            left = z["→ 0"][0]  # the axis starts there: the lowest bin is clipped to it
            assert x0 == pytest.approx(max(x_of(e0), left), abs=0.02) and x1 == pytest.approx(max(x_of(e1), left), abs=0.02)
        # the drawn amax: the top bar holds log2(amax * s); after scaling that is the edge of the over zone
        top = max(bars, key=lambda b: b[0])
        assert top[0] <= x_of(math.log2(amax * scale)) <= top[1]
        assert all(b[0] < z["over"][0] for b in bars)
    top = max(panels[1]["bars"], key=lambda b: b[0])
    assert top[0] < panels[1]["zones"]["over"][0] < top[1]  # the largest element lands on 448 exactly
    assert f"amax → {b04.num(f.max)}" in body and f"amax → {amax:.2g}" in body


def test_scaling_alt_and_caption_state_the_drawn_numbers(figures):
    spec, root = figures["amax-scaling"]
    body = texts(root)
    xs = b04._sample(spec.args["n"], spec.args["sigma"])
    amax = max(abs(x) for x in xs)
    f = fp8.fmt_info(spec.args["fmt"])
    raw = b04.quantize_stats(xs, spec.args["fmt"], 1.0)
    scaled = b04.quantize_stats(xs, spec.args["fmt"], f.max / amax)
    # alt
    assert f"largest element about {amax:.2g}" in spec.alt and f"amax → {amax:.2g}" in body
    assert "two thirds of the" in spec.alt and abs(raw["zero"] - 2 / 3) < 0.01
    assert "the rest are subnormal" in spec.alt and raw["zero"] + raw["subnormal"] == 1
    assert f"Multiplied by {b04.num(f.max)} over the amax" in spec.alt and f"lands on {b04.num(f.max)}" in spec.alt
    assert f"mean relative error of about {scaled['rel_error']:.0%}" in spec.alt
    assert f"mean relative error {scaled['rel_error']:.1%}" in body
    # caption: the tensor, and where the 81.6% comes from
    assert f"{spec.args['n']:,} values" in spec.caption and f"standard deviation {spec.args['sigma']:g}" in spec.caption
    e, z = f"{raw['rel_error']:.1%}", f"{raw['zero']:.0%}"
    assert f"mean relative error {e}" in body and f"round to 0: {z}" in body
    assert f"mean relative error of {e} is mostly the {z} of elements that round to" in " ".join(spec.caption.split())
    # an element that rounds to zero is 100% wrong: the zeros are most of the mean error
    assert raw["zero"] * 1.0 > raw["rel_error"] / 2
