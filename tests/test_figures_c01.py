"""Figures of module C01: each is drawn as the site draws it, parsed, and checked against the closed forms
of section 2 written out here, so a figure that drifts from the count, or a count the figures do not follow,
fails here."""

from __future__ import annotations

import math

import pytest

from svgparse import draw, module_fixtures, rects, texts
from tutor_build.figures import c01
from tutor_build.models import hardware

module, figs = module_fixtures("C01")

XL = dict(L=48, d=1600, a=25, V=50257, s=1024, b=6)
MEDIUM = dict(L=24, d=1024, a=16, V=50257, s=1024, b=8)
GiB = 2.0**30


def per_token(m: dict) -> list[float]:
    n = 12 * m["L"] * m["d"] ** 2 + m["V"] * m["d"]
    return [2.0 * n, 4.0 * n, 12.0 * m["L"] * m["s"] * m["d"]]


def test_shapes_are_the_published_ones():
    for key, want in (("gpt2_xl", XL), ("gpt2_medium", MEDIUM)):
        got = {k: v for k, v in c01.SHAPES[key].items() if k != "name"}
        assert got == want


def test_work_order_bars_are_the_count(figs):
    root = draw(figs, "work-order")
    bars = rects(root)
    assert len(bars) == 6
    per_gflop = None
    for i, m in enumerate((MEDIUM, XL)):
        want = per_token(m)
        row = bars[3 * i: 3 * i + 3]
        x = row[0]["x"]
        for r, f in zip(row, want):
            assert r["title"].endswith(f"{f / 1e9:.3f} GFLOP")
            assert r["x"] == pytest.approx(x, abs=0.02)  # stacked without gaps
            x += r["w"]
            scale = r["w"] / f
            per_gflop = per_gflop or scale
            assert scale == pytest.approx(per_gflop, rel=1e-3)  # one scale for both bars
        share = want[2] / sum(want)
        assert f"attention {share:.1%} of the step" in texts(root)
    alt = figs["work-order"].alt
    for m in (MEDIUM, XL):
        w = per_token(m)
        for f in w + [sum(w)]:
            assert f"{f / 1e9:.2f}" in alt
        assert f"{w[2] / sum(w):.1%}" in alt


def test_intensity_ladder_points_and_ridges(figs):
    root = draw(figs, "intensity-ladder")
    words = texts(root)
    for gpu, label in (("h200", "H200"), ("mi300x", "MI300X (not measured)")):
        r = hardware.peak(gpu, "bf16") / hardware.value(gpu, "hbm_bw")
        assert f"{label} ridge: {r:.0f} FLOP/byte" in words
        assert f"{r:.0f} FLOP per byte" in figs["intensity-ladder"].alt
    d, V, T = XL["d"], XL["V"], 6144
    titles = [cc.find("{http://www.w3.org/2000/svg}title").text
              for cc in root.iter("{http://www.w3.org/2000/svg}circle")]
    ends = []
    for name, K, N in (("QKV", d, 3 * d), ("output projection", d, d), ("MLP", d, 4 * d), ("output layer", d, V)):
        i = 2 * T * K * N / (2 * (T * K + K * N + T * N))
        ends.append(i)
        assert f"{name} at 6,144 tokens: {i:.1f} FLOP/byte" in titles
        # one token: about one FLOP a byte, the product is a memory read
        assert c01.intensity(1, K, N) == pytest.approx(1.0, rel=0.01)
    alt = figs["intensity-ladder"].alt
    assert f"{min(ends):,.0f}" in alt and f"{max(ends):,.0f}" in alt


def test_memory_ledger_is_the_count(figs):
    root = draw(figs, "memory-ledger")
    L, d, V, s, b = XL["L"], XL["d"], XL["V"], XL["s"], XL["b"]
    n = L * (12 * d * d + 13 * d) + 2 * d + V * d + s * d
    T = b * s
    state = 16 * n
    eager = state + 34 * s * b * d * L + 2 * (12 * L * d * d + V * d) + 4 * T * V
    recomputed = state + 4 * s * b * d * L + 4 * T * V
    words = texts(root)
    assert f"GPT-2 XL, eager: {eager / GiB:.2f} GiB" in words
    assert f"GPT-2 XL, recomputed: {recomputed / GiB:.2f} GiB" in words
    bars = rects(root)
    total_w = {v: sum(r["w"] for r in bars if r["title"].startswith(v + " ")) for v in ("eager", "recomputed")}
    assert total_w["eager"] / total_w["recomputed"] == pytest.approx(eager / recomputed, rel=1e-3)
    quarter = [r for r in bars if r["title"].startswith("eager fp32 weights")][0]
    assert quarter["title"].endswith(f"{4 * n / GiB:.2f} GiB")
    alt = figs["memory-ledger"].alt
    for x in (state, 4 * n, eager, recomputed, 4 * T * V, 4 * s * b * d * L):
        assert f"{x / GiB:.2f} GiB" in alt
    assert not math.isclose(eager, recomputed)


def test_step_gap_is_the_records(figs):
    from tutor_build.measurements import records
    from svgparse import ROOT

    recs = records(ROOT)

    def v(variant: str) -> float:
        return recs[f"C01/train_mfu/{variant}/python"]["value"]

    step = v("step_xl_padded_none")
    terms = [v("matmuls_gpt2_xl_padded"), v("attention_gpt2_xl_padded"), v("optimizer_xl_padded_none")]
    terms.append(step - sum(terms))
    peak = hardware.peak("h200", "bf16")
    T = XL["b"] * XL["s"]
    ideal = [6.0 * (12 * XL["L"] * XL["d"] ** 2 + XL["V"] * XL["d"]) * T / peak * 1e3,
             12.0 * XL["L"] * XL["s"] * XL["d"] * T / peak * 1e3]
    root = draw(figs, "step-gap")
    bars = rects(root)
    assert [r["title"].rpartition(": ")[2] for r in bars] == [f"{x:.1f} ms" for x in ideal + terms]
    # one scale: the measured bar is as long as the step, the ideal one as its FLOPs at the peak
    w_ideal = sum(r["w"] for r in bars[:2])
    w_meas = sum(r["w"] for r in bars[2:])
    assert w_meas / w_ideal == pytest.approx(step / sum(ideal), rel=1e-3)
    mfu = sum(ideal) / step
    assert f"MFU = ideal / measured = {mfu:.1%}" in texts(root)
    assert mfu * 100 == pytest.approx(v("mfu_xl_padded_none"), rel=1e-9)
    alt = figs["step-gap"].alt
    for x in ideal + terms + [sum(ideal), step]:
        assert f"{x:.1f} ms" in alt.replace("\n", " ").replace("9\n    ms", "9 ms")
    assert f"{mfu:.1%}" in alt
    # "the smallest relative loss": measured over ideal, products against attention
    caption = " ".join(figs["step-gap"].caption.split())
    assert terms[0] / ideal[0] < terms[1] / ideal[1]
    assert f"{terms[0] / ideal[0]:.2f} times it, against {terms[1] / ideal[1]:.2f}" in caption
