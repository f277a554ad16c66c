"""Figures of module B02 (floating point for ML): the stalled counter, the four layouts, the error as K grows.

Every value drawn here comes from tutor_build.models.accumulation, the arithmetic the labs and the claims
test of B02 use; nothing is typed in by hand.
"""

from __future__ import annotations

import math
import random

from ..models import accumulation as acc
from ..render.svg import Canvas, Scale, axis_x, axis_y, tick_label


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sup(n: int) -> str:
    """An exponent as superscript characters: sup(-7) is ⁻⁷."""
    return str(n).translate(SUPERSCRIPT)


def dot_errors(k_values, rows: int, seed: int) -> dict[str, list[tuple[int, float]]]:
    """||computed - exact|| / ||exact|| over `rows` dot products of length K, for each accumulator format."""
    rng = random.Random(seed)
    kmax = max(k_values)
    a = [[acc.round_bf16(rng.random()) for _ in range(kmax)] for _ in range(rows)]
    b = [[acc.round_bf16(rng.random()) for _ in range(kmax)] for _ in range(rows)]
    errors: dict[str, list[tuple[int, float]]] = {"fp32": [], "bf16": []}
    for k in k_values:
        exact = [math.fsum(x * y for x, y in zip(ar[:k], br[:k])) for ar, br in zip(a, b)]
        for name in errors:
            num = 0.0
            for ar, br, e in zip(a, b, exact):
                s = 0.0
                for x, y in zip(ar[:k], br[:k]):
                    s = acc.add(s, x * y, name == "bf16")  # x * y is exact in fp32 (16 significant bits)
                num += (s - e) ** 2
            errors[name].append((k, max(math.sqrt(num / sum(e * e for e in exact)), 1e-9)))
    return errors


def running_sum(n_max: int = 1000, formats: tuple[str, ...] = ("fp32", "bf16")) -> Canvas:
    """The running sum of 1 + 1 + ... as each one is added, for each accumulator format."""
    c = Canvas(560, 380)
    sx = Scale(0, n_max, 70, 530)
    sy = Scale(0, n_max, 300, 40)
    axis_x(c, sx, 300, "ones added so far")
    axis_y(c, sy, 70, "the counter reads", grid_to=530)
    colours = {"fp32": "s1", "bf16": "s2", "fp16": "s3"}
    for name in formats:
        bf = name == "bf16"
        s, pts = 0.0, [(sx(0), sy(0))]
        for i in range(1, n_max + 1):
            s = acc.add(s, 1.0, bf) if name != "fp16" else float(min(i, acc.FP16.stall))
            if i % 10 == 0:
                pts.append((sx(i), sy(s)))
        c.polyline(pts, stroke=colours[name], width=3)
        label = f"{name} counter: {s:,.0f}"
        c.text(sx(n_max) - 4, sy(s) - 10, label, anchor="end", fill=colours[name], bold=True)
    stall = acc.BF16.stall
    c.line(sx(stall), sy(0), sx(stall), sy(stall), stroke="muted", dash="4 4")
    c.text(sx(stall) + 8, sy(stall) + 24, f"stuck at {stall}: {stall} + 1 is a tie,", fill="muted")
    c.text(sx(stall) + 8, sy(stall) + 44, f"and the tie rounds back to {stall}", fill="muted")
    return c


def layouts(formats: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16")) -> Canvas:
    """Sign, exponent and mantissa of each format, one bit per cell width, with what the fields give."""
    c = Canvas(560, 40 + 92 * len(formats))
    unit = 15.0  # units per bit; 32 bits = 480
    x0 = 70
    for row, name in enumerate(formats):
        f = acc.FORMATS[name]
        y = 30 + 92 * row
        c.text(8, y + 20, name, bold=True)
        exp_label = f"exponent {f.exponent_bits}" if f.exponent_bits >= 8 else f"exp. {f.exponent_bits}"
        parts = [("s", 1, "s3"), (exp_label, f.exponent_bits, "s1"),
                 (f"mantissa {f.mantissa_bits}", f.mantissa_bits, "s2")]
        x = x0
        for label, width, colour in parts:
            c.rect(x, y, width * unit, 30, fill=colour, stroke="fg", title=f"{name}: {label} bit(s)")
            if width * unit >= 40:
                c.text(x + width * unit / 2, y + 20, label, anchor="middle", fill="bg", bold=True)
            x += width * unit
        if name == "tf32":
            c.text(x + 4, y + 20, "(stored in 32)", fill="muted")
        c.text(x0, y + 52, f"ε = 2{sup(-f.mantissa_bits)} = {f.epsilon:.3g}   max ≈ {f.max_finite:.3g}   "
                           f"min normal = {f.min_normal:.3g}", fill="muted")
        c.text(x0, y + 72, f"a sum of ones stalls at 2{sup(f.mantissa_bits + 1)} = {f.stall:,}", fill="muted")
    return c


def dot_error(k_values: tuple[int, ...] = (64, 256, 1024, 4096, 16384), rows: int = 8, seed: int = 2) -> Canvas:
    """The normwise relative error of `rows` dot products of K products of numbers uniform in [0, 1) (rounded to
    bf16), accumulated in order in fp32 and in bf16, against the exact sums, on log-log axes."""
    errors = dot_errors(k_values, rows, seed)
    kmax = max(k_values)
    c = Canvas(560, 400)
    sx = Scale(min(k_values), kmax, 80, 520, log=True)
    sy = Scale(1e-8, 1.0, 320, 30, log=True)
    axis_x(c, sx, 320, "K, the length of the dot product", ticks=list(k_values), fmt=tick_label)
    axis_y(c, sy, 80, "relative error", grid_to=520, ticks=[1e-8, 1e-6, 1e-4, 1e-2, 1.0])
    colours = {"fp32": "s1", "bf16": "s2"}
    for name, pts in errors.items():
        c.polyline([(sx(k), sy(e)) for k, e in pts], stroke=colours[name], width=3)
        for k, e in pts:
            c.circle(sx(k), sy(e), 4, fill=colours[name], title=f"{name} accumulator, K = {k}: {e:.2g}")
        k, e = pts[-1]
        c.text(sx(k) - 6, sy(e) + (22 if name == "fp32" else -12), f"{name} accumulator", anchor="end",
               fill=colours[name], bold=True)
    for name, u in (("fp32", acc.FP32.unit_roundoff), ("bf16", acc.BF16.unit_roundoff)):
        c.line(sx(min(k_values)), sy(u), sx(kmax), sy(u), stroke="muted", dash="4 4")
        c.text(sx(min(k_values)) + 4, sy(u) + 18, f"u of {name} = {u:.2g}", fill="muted")
    return c
