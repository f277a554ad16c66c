"""Figures of module B02: each draws, and the numbers their alt texts and captions state are what the
course's accumulation model computes (tutor_build.models.accumulation), the arithmetic of the labs."""

from __future__ import annotations

from pathlib import Path

import yaml

from tutor_build.figures import b02
from tutor_build.models import accumulation as acc

FIGURES = Path(__file__).resolve().parents[1] / "modules" / "B02-floating-point-for-ml" / "figures.yml"


def spec(fig_id: str) -> dict:
    return next(f for f in yaml.safe_load(FIGURES.read_text()) if f["id"] == fig_id)


def test_every_figure_draws_on_a_phone_sized_canvas():
    for f in yaml.safe_load(FIGURES.read_text()):
        canvas = getattr(b02, f["draw"].split(".")[1])(**f.get("args", {}))
        assert canvas.width <= 560
        assert "<svg" in canvas.render(f["alt"])


def test_stalled_counter_shows_the_model():
    s = spec("stalled-counter")
    assert acc.serial_sum([1.0] * s["args"]["n_max"], bf16=True) == acc.BF16.stall == 256
    assert f"{s['args']['n_max']:,}" in s["alt"] and "256" in s["alt"]
    svg = b02.running_sum(**s["args"]).render(s["alt"])
    assert "bf16 counter: 256" in svg and "fp32 counter: 1,000" in svg


def test_layouts_state_each_stall():
    s = spec("four-layouts")
    for name in s["args"]["formats"]:
        assert f"{acc.FORMATS[name].stall:,}" in s["alt"]
    svg = b02.layouts(**s["args"]).render(s["alt"])
    assert "16,777,216" in svg and "= 256" in svg and "6.55e+04" in svg


def test_dot_error_alt_states_the_computed_errors():
    s = spec("dot-error")
    args = s["args"]
    errors = dict(b02.dot_errors(tuple(args["k_values"]), args["rows"], args["seed"]))
    bf = dict(errors["bf16"])
    fp = dict(errors["fp32"])
    assert all(e < 10 * acc.FP32.unit_roundoff for e in fp.values())  # "below ten times its unit roundoff"
    assert "below ten times its unit roundoff at every K" in s["alt"]
    assert fp[4096] < fp[1024]  # "its points scatter instead of rising steadily"
    assert "points scatter" in s["alt"] and "one in a million" not in s["alt"]
    assert f"about {bf[64]:.1g} at K = 64" in s["alt"]
    assert round(bf[64] / acc.BF16.unit_roundoff) == 2  # "twice its unit roundoff"
    assert f"reaches {bf[256]:.2g} at K = 256" in s["alt"]
    assert f"{bf[1024]:.2g} at K = 1,024" in s["alt"] and f"{bf[16384]:.2g} at K = 16,384" in s["alt"]
