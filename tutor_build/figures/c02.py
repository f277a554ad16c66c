"""Figures of module C02 (anatomy of inference), drawn from tutor_build/models/decode.py and the lab's records.

Every length and every number printed here is computed from the decode model (the same closed forms the claims
test checks against the records' bytes and FLOP) with the two ceilings the lab measured in the same run, or is
a measured step time. Each drawn quantity carries a <title> naming it and its value, which the tests read back.
"""

from __future__ import annotations

from ..models import decode as dm
from ..models import hardware as hw
from ..render.svg import Canvas, Scale, axis_x, axis_y

W = 560
C_READ, C_MATH, C_MEAS, C_FIT = "s1", "s4", "s2", "s3"


def _ceilings() -> tuple[float, float]:
    return dm.ceilings(dm.course_records())


def _swatch(c: Canvas, x: float, y: float, fill: str, label: str) -> None:
    c.rect(x, y - 8, 16, 16, fill=fill)
    c.text(x + 24, y, label, middle=True)


# ---------------------------------------------------------------- section 1: the shelf and the pen


def shelf_rows(context: int = 128, batches: tuple[int, ...] | list[int] = (1, 64, 512)) -> list[tuple[int, float, float]]:
    """(batch, read ms, arithmetic ms) of a decode step: the given batches plus the predicted crossover,
    rounded, in order."""
    bw, rate = _ceilings()
    cross = dm.crossover_batch(context, bw, rate)
    bs = sorted(set(list(batches) + ([round(cross)] if cross else [])))
    return [(b, 1e3 * dm.step_bytes(b, 1, context) / bw, 1e3 * dm.step_flops(b, 1, context) / rate) for b in bs]


def shelf_and_pen(context: int = 128, batches: tuple[int, ...] | list[int] = (1, 64, 512)) -> Canvas:
    """For each batch, the time to read the step's bytes (walking the shelf and the notebooks) and to do its
    FLOP (writing), on the measured ceilings; the longer one is the step's floor."""
    rows = shelf_rows(context, batches)
    top, row_h = 84, 86
    c = Canvas(W, top + row_h * len(rows) + 40)
    x0, x1 = 20, 470
    hi = max(max(r, m) for _, r, m in rows) * 1.08
    sx = Scale(0, hi, x0, x1)
    _swatch(c, x0, 16, C_READ, "walking the shelf and notebooks (bytes)")
    _swatch(c, x0, 42, C_MATH, "writing (FLOP)")
    for i, (b, read, math_ms) in enumerate(rows):
        y = top + i * row_h
        label = f"{b} letter" + ("s" if b != 1 else "")
        if b not in batches:
            label += ": walk = writing"
        c.text(x0, y, label, bold=True)
        c.rect(x0, y + 12, sx(read) - x0, 24, fill=C_READ, title=f"batch {b} read: {read:.2f} ms")
        c.rect(x0, y + 40, max(sx(math_ms) - x0, 1), 24, fill=C_MATH, title=f"batch {b} math: {math_ms:.2f} ms")
        c.text(sx(read) + 6, y + 24, f"{read:.2f} ms", middle=True, fill="muted")
        c.text(sx(math_ms) + 6, y + 52, f"{math_ms:.2f} ms", middle=True, fill="muted")
    c.text(x0, top + row_h * len(rows) + 14, f"one decode step, {context}-token notebooks", fill="muted")
    return c


# ---------------------------------------------------------------- section 2: intensity against batch


def intensity(batch: int, context: int) -> float:
    """FLOP per byte of one decode step."""
    return dm.step_flops(batch, 1, context) / dm.step_bytes(batch, 1, context)


def ridges() -> list[tuple[str, float, str]]:
    """(label, FLOP per byte, colour): the measured ridge and the two datasheet ridges."""
    bw, rate = _ceilings()
    return [("H200, measured here", rate / bw, "good"),
            ("H200 datasheet", hw.peak("h200", "bf16") / hw.value("h200", "hbm_bw"), "muted"),
            ("MI300X datasheet", hw.peak("mi300x", "bf16") / hw.value("mi300x", "hbm_bw"), "warn")]


def decode_intensity(contexts: tuple[int, ...] | list[int] = (128, 1024), max_batch: int = 512) -> Canvas:
    """Arithmetic intensity of a decode step against batch for each context, under three ridge lines; the
    predicted crossover (where the 128-token curve meets the measured ridge) marked."""
    bw, rate = _ceilings()
    c = Canvas(W, 440)
    sx = Scale(0, max_batch, 70, 540)
    sy = Scale(0, 320, 360, 70)
    axis_x(c, sx, 360, "batch (sequences per decode step)")
    axis_y(c, sy, 70, "FLOP per byte", grid_to=540)
    for label, r, col in ridges():
        c.line(sx(0), sy(r), sx(max_batch), sy(r), stroke=col, width=2, dash="6 4")
        c.text(sx(max_batch) - 4, sy(r) - 6, f"{label}: {r:.0f}", anchor="end", fill=col)
    styles = [("s1", None), ("s2", "2 3"), ("s5", "8 3")]
    for j, ctx in enumerate(contexts):
        col, dash = styles[j % len(styles)]
        pts = [(sx(b), sy(intensity(b, ctx))) for b in range(1, max_batch + 1, 4)]
        c.polyline(pts, stroke=col, width=3, dash=dash)
        at = int(max_batch * 0.3)
        c.text(sx(at), sy(intensity(at, ctx)) + 24, f"context {ctx}", fill=col, bold=True)
        cross = dm.crossover_batch(ctx, bw, rate)
        if cross and cross <= max_batch:
            c.circle(sx(cross), sy(rate / bw), 6, fill="bad", title=f"crossover, context {ctx}: batch {cross:.1f}")
            c.text(sx(cross) - 10, sy(rate / bw) - 12, f"batch {cross:.0f}", anchor="end", fill="bad", bold=True)
    c.text(70, 30, "intensity of one decode step, Llama 3.1 8B, bf16", fill="muted")
    return c


# ---------------------------------------------------------------- section 5: the knee, predicted and found


def knee_data(context: int = 128) -> dict:
    """The measured points, the hinge fit, the bound and the predicted crossover."""
    recs = dm.course_records()
    bw, rate = dm.ceilings(recs)
    pts = dm.decode_points(recs, context)
    return {"points": pts, "fit": dm.hinge_fit(pts), "cross": dm.crossover_batch(context, bw, rate),
            "bound": [(b, dm.bound_ms(b, context, bw, rate)) for b in range(1, pts[-1][0] + 1)],
            "kernel_bound": [(b, dm.kernel_bound_ms(b, context, bw, rate)) for b in range(1, pts[-1][0] + 1)]}


def decode_knee(context: int = 128) -> Canvas:
    """Measured decode step times against batch, the two-segment fit with its knee, and the bound with its
    predicted crossover."""
    d = knee_data(context)
    pts, fit = d["points"], d["fit"]
    bmax = pts[-1][0]
    c = Canvas(W, 496)
    sx = Scale(0, bmax, 70, 540)
    sy = Scale(0, 24, 406, 126)
    axis_x(c, sx, 406, "batch (sequences per decode step)")
    axis_y(c, sy, 70, "ms per step", grid_to=540)
    c.polyline([(sx(b), sy(t)) for b, t in d["bound"]], stroke=C_READ, width=2)
    c.polyline([(sx(b), sy(t)) for b, t in d["kernel_bound"]], stroke=C_MATH, width=2, dash="2 3")
    c.polyline([(sx(0), sy(fit(0))), (sx(fit.knee), sy(fit(fit.knee))), (sx(bmax), sy(fit(bmax)))],
               stroke=C_FIT, width=2, dash="6 3")
    for b, t in pts:
        c.circle(sx(b), sy(t), 5, fill=C_MEAS, title=f"batch {b}: {t:.2f} ms")
    c.line(sx(fit.knee), sy(0), sx(fit.knee), sy(24), stroke=C_FIT, width=1.5, dash="3 3")
    c.text(sx(fit.knee) - 4, sy(22.5), f"knee, fit: {fit.knee:.0f}", anchor="end", fill=C_FIT, bold=True)
    if d["cross"]:
        c.line(sx(d["cross"]), sy(0), sx(d["cross"]), sy(24), stroke=C_READ, width=1.5, dash="3 3")
        c.text(sx(d["cross"]) + 4, sy(22.5), f"bound: {d['cross']:.0f}", fill=C_READ, bold=True)
    c.circle(86, 18, 5, fill=C_MEAS)
    c.text(98, 18, f"measured, CUDA graph, context {context}", middle=True)
    c.line(80, 44, 96, 44, stroke=C_FIT, width=2, dash="6 3")
    c.text(104, 44, f"fit: {fit.below * 1e3:.1f} then {fit.above * 1e3:.1f} µs per sequence", middle=True)
    c.line(80, 70, 96, 70, stroke=C_READ, width=2)
    c.text(104, 70, "bound: max(bytes ÷ copy, FLOP ÷ torch.mm)", middle=True)
    kb = d["kernel_bound"][-1][1]
    c.line(80, 96, 96, 96, stroke=C_MATH, width=2, dash="2 3")
    c.text(104, 96, f"kernel by kernel: {kb:.2f} ms", middle=True)
    return c
