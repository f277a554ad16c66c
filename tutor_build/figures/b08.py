"""Figures of module B08 (activation memory and recomputation).

Every length drawn here comes from tutor_build.models.activations, the same code the claims test uses: the
terms of Korthikanti et al.'s inventory and of the lab's block, the bytes each mode keeps, the FLOPs each
mode pays. Each bar carries a <title> naming its term and its bytes, so the tests can read the drawing.
"""

from __future__ import annotations

from ..models import activations as act
from ..render.svg import Canvas, Scale, axis_x, axis_y

MODE_NAMES = {"none": "keep everything", "selective": "redo the attention core", "full": "redo the whole layer"}
MiB = 2.0**20


def _groups(s: int, b: int, h: int, a: int) -> list[tuple[str, str, dict[str, float]]]:
    """(label, colour, bytes per mode) for the block's terms grouped as the analogy speaks of them."""
    groups = {
        "the layer's input": ("s3", ["LayerNorm 1 input (the block's input)"]),
        "inputs of the matrix products": ("s1", ["LayerNorm 1 output (QKV input)", "Q, K, V (one QKV output)",
                                                "attention output (projection input)", "LayerNorm 2 input",
                                                "LayerNorm 2 output (MLP input)", "GELU input",
                                                "GELU output (second linear input)"]),
        "the s x s attention table": ("s2", ["softmax output P (also P V's input)"]),
    }
    terms = {t.name: t for t in act.BLOCK_TERMS}
    out = []
    for label, (colour, names) in groups.items():
        per_mode = {}
        for mode in act.MODES:
            per_mode[mode] = sum(2 * (terms[n].sbh * s * b * h + terms[n].as2b * a * s * s * b)
                                 for n in names if mode in terms[n].keep)
        out.append((label, colour, per_mode))
    return out


def bench_space(s: int = 2048, b: int = 1, h: int = 12288, a: int = 96) -> Canvas:
    """Section 1: the counter space each way of working needs, one bar per mode, drawn to scale."""
    groups = _groups(s, b, h, a)
    top = max(sum(g[2]["none"] for g in groups), 1)
    c = Canvas(560, 330)
    x0, x1 = 16, 544
    c.text(16, 22, "Counter space one layer's notes take until the way back", bold=True, size=16)
    y = 52
    for mode in act.MODES:
        total = sum(g[2][mode] for g in groups)
        c.text(16, y, MODE_NAMES[mode], bold=True)
        c.text(544, y, f"{total / MiB:,.0f} MiB", anchor="end", fill="muted")
        x = x0
        for label, colour, per_mode in groups:
            w = (x1 - x0) * per_mode[mode] / top
            if w > 0:
                c.rect(x, y + 8, w, 28, fill=colour, stroke="bg",
                       title=f"{MODE_NAMES[mode]}: {label}, {per_mode[mode] / MiB:,.1f} MiB")
            x += w
        y += 72
    ly = y - 6
    for label, colour, _ in groups:
        c.rect(16, ly - 12, 16, 16, fill=colour, rx=2)
        c.text(40, ly + 1, label)
        ly += 22
    return c


def inventory(s: int = 2048, b: int = 1, h: int = 12288, a: int = 96) -> Canvas:
    """Section 2: every term of the paper's inventory and of the lab's block, in 16-bit bytes, to scale."""
    sbh, as2b = s * b * h, a * s * s * b
    rows = [("paper", t.name, t.sbh * sbh + t.as2b * as2b) for t in act.PAPER_TERMS]
    rows += [("block", t.name, 2 * (t.sbh * sbh + t.as2b * as2b)) for t in act.BLOCK_TERMS]
    biggest = max(r[2] for r in rows)
    row_h, label_w = 24, 250
    c = Canvas(560, 96 + row_h * len(rows) + 40)
    scale = Scale(0, biggest, label_w, 500)
    y = 24
    for part, head in (("paper", f"Korthikanti et al., with dropout: {act.coefficients('none', True)[0]:g} sbh + "
                                 f"{act.coefficients('none', True)[1]:g} as²b bytes"),
                       ("block", "the lab's block, no dropout: 32 sbh + 2 as²b bytes (16-bit)")):
        c.text(8, y, head, bold=True)
        y += 14
        for p, name, nbytes in rows:
            if p != part:
                continue
            c.text(label_w - 8, y + row_h / 2, name.split(" (")[0], anchor="end", middle=True)
            fill = "s2" if "softmax" in name or "dropout output" in name or "dropout mask" in name and "attention " in name[:10] else "s1"
            if "dropout" in name and "attention dropout" not in name:
                fill = "s4"
            c.rect(label_w, y + 3, scale(nbytes) - label_w, row_h - 6, fill=fill,
                   title=f"{part}: {name}, {nbytes / MiB:,.0f} MiB")
            c.text(scale(nbytes) + 4, y + row_h / 2, f"{nbytes / MiB:,.0f}", middle=True, fill="muted")
            y += row_h
        y += 22
    c.text(8, y + 4, f"MiB for s = {s:,}, b = {b}, h = {h:,}, a = {a} (GPT-3 175B's layer)", fill="muted")
    return c


def tradeoff(seqs: list[int] | None = None, b: int = 1, h: int = 12288, a: int = 96) -> Canvas:
    """Memory kept against FLOPs paid: one point per mode and sequence length, saved bytes per layer in GiB
    (16-bit) against the step's FLOPs relative to no recompute."""
    seqs = seqs or [2048, 8192]
    pts = [(s, m, 1 + act.overhead(m, s, b, h), act.block_bytes(m, s, b, h, a) / 2**30)
           for s in seqs for m in act.MODES]
    c = Canvas(560, 420)
    lo = min(p[3] for p in pts) / 2
    hi = max(p[3] for p in pts) * 2
    sx, sy = Scale(0.98, 1.38, 80, 530), Scale(lo, hi, 350, 50, log=True)
    ticks = [t for t in (0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if lo <= t <= hi]
    axis_y(c, sy, 80, "GiB kept per layer (log)", ticks=ticks, grid_to=530, fmt=lambda v: f"{v:g}")
    axis_x(c, sx, 350, "FLOPs of the step, relative to keeping everything", ticks=[1.0, 1.1, 1.2, 1.3],
           fmt=lambda v: f"{v:.1f}x")
    palette = ["s1", "s2", "s3", "s4"]
    for s, mode, x, gib in pts:
        colour = palette[seqs.index(s) % len(palette)]
        c.circle(sx(x), sy(gib), 7, fill=colour,
                 title=f"s = {s}: {mode}, {gib:.3f} GiB per layer, {x:.4f}x the FLOPs")
        left = mode == "full"
        c.text(sx(x) + (-12 if left else 12), sy(gib), f"{mode}, {gib:.2g} GiB", anchor="end" if left else "start",
               middle=True)
    x = 300
    for i, s in enumerate(seqs):
        c.circle(x, 24, 7, fill=palette[i % len(palette)])
        c.text(x + 14, 24, f"s = {s:,}", middle=True)
        x += 120
    return c
