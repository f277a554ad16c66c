"""Figures of module B05: each drawn as the site draws it, parsed, and checked against the labs' schedule, the
ring_copies records and the collectives player's model (tutor_build/models/collectives.py)."""

from __future__ import annotations

import re

import pytest

from svgparse import SVG, draw, module_fixtures, rects, texts
from tutor_build.figures import b05
from tutor_build.measurements import records

module, figs = module_fixtures("B05")
RECS = records(b05.Path(b05.__file__).resolve().parents[2])


def circles(root):
    out = []
    for c in root.iter(f"{SVG}circle"):
        t = c.find(f"{SVG}title")
        if t is not None:
            out.append((t.text, float(c.get("cx")), float(c.get("cy"))))
    return out


def test_ring_schedule_cells(figs):
    root = draw(figs, "ring-schedule")
    p = 4
    cells = rects(root)
    assert len(cells) == p * 2 * (p - 1)
    want = b05.schedule(p)
    for cell in cells:
        m = re.match(r"rank (\d) step (\d): sends chunk (\d) to rank (\d)", cell["title"])
        r, s, c, to = map(int, m.groups())
        assert want[r][s - 1] == c and to == (r + 1) % p
        assert ("adds into" in cell["title"]) == (s <= p - 1)
    assert "6/4 = 1.5 buffers per rank in all" in texts(root)


def test_alphabeta_fit_points_are_records(figs):
    if b05.key(2, 30) not in RECS:
        pytest.skip("no ring_copies records")
    root = draw(figs, "alphabeta-fit")
    pts = circles(root)
    measured = [t for t, _, _ in pts if "measured" in t]
    assert len(measured) == 3 * len(b05.SIZES)
    for t in measured:
        p, k, v = re.match(r"p=(\d) 2\^(\d+) B measured: ([\d.e+-]+) GB/s", t).groups()
        assert float(v) == pytest.approx(RECS[b05.key(int(p), int(k))]["value"], rel=1e-3)
    legend = " ".join(texts(root))
    bc = b05.copy_ceiling_gbps(RECS)
    for p in b05.PS:
        assert f"plateau {b05.b_eff_gbps(p, bc):.0f} GB/s" in legend
        assert f"alpha {b05.alpha_step_us(p, RECS):.3g} µs" in legend


def test_alphabeta_fit_curves_follow_model(figs):
    if b05.key(2, 30) not in RECS:
        pytest.skip("no ring_copies records")
    # the drawn model is the closed form of section 2: 2(p-1) alpha + 7(p-1) n / B_copy
    bc = b05.copy_ceiling_gbps(RECS)
    for p in b05.PS:
        for k in (3, 20, 30):
            n = 2.0 ** k
            t = 2 * (p - 1) * b05.alpha_step_us(p, RECS) * 1e-6 + 7 * (p - 1) * n / (bc * 1e9)
            v = b05.model_busbw(p, k, b05.alpha_step_us(p, RECS), b05.b_eff_gbps(p, bc))
            assert v == pytest.approx(n / t * 2 * (p - 1) / p / 1e9, rel=1e-9)


def test_predicted_8gpu(figs):
    root = draw(figs, "predicted-8gpu")
    words = texts(root)
    assert "predicted, not measured" in words
    for g in ("h200", "mi300x"):
        v = b05.model_busbw(8, 30, b05.ALPHA_RING_SIMPLE_US, b05.predicted_8gpu_link_gbps(g))
        assert any(f"{v:.0f} GB/s at 1 GiB" in w for w in words)
    tips = [t for t, _, _ in circles(root)]
    assert len(tips) == 2 and all("predicted" in t for t in tips)
