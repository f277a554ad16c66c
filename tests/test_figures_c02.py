"""Figures of module C02: each is drawn as the site draws it, parsed, and checked against the decode model
(tutor_build/models/decode.py) and the lab's records, so that a figure drifting from the model or the records,
or an alt text drifting from the figure, fails here."""

from __future__ import annotations

import re

import numpy as np
import pytest

from svgparse import SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, numbers, titles
from tutor_build.figures import c02
from tutor_build.models import decode as dm
from tutor_build.models import hardware as hw

module, figs = module_fixtures("C02")

RECS = dm.course_records()
if "C02/prefill_decode/copy_bandwidth/python" not in RECS:
    pytest.skip("the C02 records are not in this tree", allow_module_level=True)
BW, RATE = dm.ceilings(RECS)


def test_every_figure_draws_and_is_placed(module, figs):
    where = check_every_figure_draws_and_is_placed(module, figs)
    assert where == {"shelf-and-pen": 1, "decode-intensity": 2, "decode-knee": 5}


def test_shelf_and_pen_is_the_models_step(figs):
    root = draw(figs, "shelf-and-pen")
    got = titles(root)
    cross = dm.crossover_batch(128, BW, RATE)
    bs = sorted({1, 64, 512, round(cross)})
    want = []
    for b in bs:
        want += [f"batch {b} read: {1e3 * dm.step_bytes(b, 1, 128) / BW:.2f} ms",
                 f"batch {b} math: {1e3 * dm.step_flops(b, 1, 128) / RATE:.2f} ms"]
    assert got == want
    # the alt text states the figure's numbers
    alt = figs["shelf-and-pen"].alt
    for t in want:
        assert t.split(": ")[1].replace(" ms", "") in numbers(alt), t
    assert str(round(cross)) in numbers(alt)
    # at the crossover (rounded to a whole batch) the two bars agree within 1%
    r, m = c02.shelf_rows()[[b for b, _, _ in c02.shelf_rows()].index(round(cross))][1:]
    assert abs(r - m) / m < 0.01


def test_decode_intensity_ridges_and_crossover(figs):
    root = draw(figs, "decode-intensity")
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    want = {"H200, measured here": RATE / BW,
            "H200 datasheet": hw.peak("h200", "bf16") / hw.value("h200", "hbm_bw"),
            "MI300X datasheet": hw.peak("mi300x", "bf16") / hw.value("mi300x", "hbm_bw")}
    for label, r in want.items():
        assert f"{label}: {r:.0f}" in texts
        assert f"{r:.0f}" in numbers(figs["decode-intensity"].alt)
    circles = titles(root, "circle")
    cross = dm.crossover_batch(128, BW, RATE)
    assert circles == [f"crossover, context 128: batch {cross:.1f}"]
    alt = figs["decode-intensity"].alt
    assert f"{cross:.0f}" in numbers(alt)
    assert f"{c02.intensity(512, 128):.0f}" in numbers(alt)
    s, f = dm.step_bytes(1, 1, 1024) - dm.step_bytes(0, 1, 1024), dm.step_flops(1, 1, 1024)
    assert f"{f / s:.1f}" in numbers(alt)
    assert c02.intensity(512, 1024) < f / s < RATE / BW


def test_decode_knee_is_the_records_and_the_fit(figs):
    root = draw(figs, "decode-knee")
    pts = dm.decode_points(RECS, 128)
    assert titles(root, "circle")[: len(pts)] == [f"batch {b}: {t:.2f} ms" for b, t in pts]
    fit = dm.hinge_fit(pts)
    # an independent fit: numpy least squares at every integer knee
    b = np.array([p[0] for p in pts], float)
    t = np.array([p[1] for p in pts])
    sse = {}
    for k in range(2, 449):
        X = np.stack([np.ones_like(b), np.minimum(b, k), np.maximum(b - k, 0)], 1)
        c = np.linalg.lstsq(X, t, rcond=None)[0]
        sse[k] = float(((t - X @ c) ** 2).sum())
    assert min(sse, key=sse.get) == fit.knee
    texts = [x.text or "" for x in root.iter(f"{SVG}text")]
    assert f"knee, fit: {fit.knee:.0f}" in texts
    cross = dm.crossover_batch(128, BW, RATE)
    assert f"bound: {cross:.0f}" in texts
    assert f"fit: {fit.below * 1e3:.1f} then {fit.above * 1e3:.1f} µs per sequence" in texts
    # the kernel-by-kernel bound, drawn to batch 512, is the lab's own record of it
    kb = RECS["C02/prefill_decode/decode_bound_kernels_ctx128_b512/python"]["ceiling"]["value"]
    assert f"kernel by kernel: {kb:.2f} ms" in texts
    assert f"{kb:.2f}" in numbers(figs["decode-knee"].alt)
    alt, cap = figs["decode-knee"].alt, figs["decode-knee"].caption
    for n in (f"{fit.knee:.0f}", f"{fit.below * 1e3:.1f}", f"{fit.above * 1e3:.1f}", f"{cross:.0f}",
              f"{pts[0][1]:.2f}", f"{pts[-1][1]:.2f}", f"{dict(pts)[448]:.2f}",
              f"{dm.bound_ms(512, 128, BW, RATE):.2f}"):
        assert n in numbers(alt), n
    ratios = [t / dm.bound_ms(b, 128, BW, RATE) for b, t in pts]
    assert f"{min(ratios):.2f}" in numbers(cap) and f"{max(ratios):.2f}" in numbers(cap)
    assert str(len(pts)) in numbers(cap)
    assert re.search(rf"batch {fit.knee:.0f}", cap) and re.search(rf"batch {cross:.0f}", cap)
