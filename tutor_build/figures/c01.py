"""Figures of module C01 (transformer FLOPs and memory accounting), computed from first principles.

Each figure counts from a published GPT-2 shape (layers L, width d, heads a, vocabulary V, context s, the
lab's batch b) with the closed forms of the module's section 2, and the H200 and MI300X rates of the one
hardware table. Every drawn quantity carries a <title> naming it and its value, which the tests read back.
"""

from __future__ import annotations

import math

from ..models import hardware
from ..render.svg import Canvas, Scale, axis_x, axis_y

W = 560
GiB = 2.0**30

# The published shapes (Radford et al. 2019) and the lab's batches (labs/C01/python/train_mfu.py CONFIGS).
SHAPES = {
    "gpt2_medium": dict(name="GPT-2 medium", L=24, d=1024, a=16, V=50257, s=1024, b=8),
    "gpt2_xl": dict(name="GPT-2 XL", L=48, d=1600, a=25, V=50257, s=1024, b=6),
}


# ---------------------------------------------------------------- the counts


def n_matmul(L: int, d: int, V: int, **_) -> int:
    """Weights that take part in a product: 12 L d^2 in the blocks, V d in the shared output layer."""
    return 12 * L * d * d + V * d


def n_params(L: int, d: int, V: int, s: int, **_) -> int:
    """Every parameter: blocks (weights, biases, LayerNorms), final LayerNorm, token and position tables."""
    return L * (12 * d * d + 13 * d) + 2 * d + V * d + s * d


def flops_per_token(shape: dict) -> list[tuple[str, float]]:
    """(term, FLOPs a token) of a training step: forward products, backward products, attention."""
    nmm = n_matmul(**shape)
    return [("forward products, 2 N", 2.0 * nmm), ("backward products, 4 N", 4.0 * nmm),
            ("attention, 12 L s d", 12.0 * shape["L"] * shape["s"] * shape["d"])]


def products(d: int, V: int, **_) -> list[tuple[str, int, int]]:
    """(name, K, N) of each product with weights of a block and the output layer."""
    return [("QKV", d, 3 * d), ("output projection", d, d), ("MLP", d, 4 * d), ("output layer", d, V)]


def intensity(T: float, K: int, N: int, elem: int = 2) -> float:
    """FLOP/byte of a T x K by K x N product, each operand read once and the result written once."""
    return 2.0 * T * K * N / (elem * (T * K + K * N + T * N))


def ridge(gpu: str) -> float:
    return hardware.peak(gpu, "bf16") / hardware.value(gpu, "hbm_bw")


def memory_segments(shape: dict) -> dict[str, list[tuple[str, float]]]:
    """Bytes of an eager and of a fully recomputed step: the 16-byte state and the activations as section 2
    counts them (Korthikanti's 34 s b h a layer, the autocast weight copies, the fp32 logits; for
    recomputation the fp32 input of each block and the logits)."""
    L, d, V, s, b = shape["L"], shape["d"], shape["V"], shape["s"], shape["b"]
    n, T = n_params(**shape), b * s
    state = [("fp32 weights", 4.0 * n), ("fp32 gradients", 4.0 * n), ("first moment", 4.0 * n),
             ("second moment", 4.0 * n)]
    logits = ("fp32 logits", 4.0 * T * V)
    eager = state + [("block activations, 34 s b d L", 34.0 * s * b * d * L),
                     ("bf16 weight copies", 2.0 * n_matmul(**shape)), logits]
    recomputed = state + [("block inputs, fp32", 4.0 * s * b * d * L), logits]
    return {"eager": eager, "recomputed": recomputed}


# ---------------------------------------------------------------- section 1: the work order


def work_order(models: list[str] | None = None) -> Canvas:
    """FLOPs a token of a training step, split into forward products, backward products and attention,
    one bar a model, on one scale."""
    models = models or ["gpt2_medium", "gpt2_xl"]
    colours = ["s1", "s2", "s4"]
    top, row_h = 120, 96
    c = Canvas(W, top + row_h * len(models) + 50)
    totals = [sum(f for _, f in flops_per_token(SHAPES[m])) for m in models]
    sx = Scale(0, 1.1 * max(totals) / 1e9, 20, 540)
    for i, (label, _) in enumerate(flops_per_token(SHAPES[models[0]])):
        y = 18 + 26 * i
        c.rect(20, y - 8, 16, 16, fill=colours[i])
        c.text(44, y, label, middle=True)
    for r, m in enumerate(models):
        y = top + row_h * r
        shape = SHAPES[m]
        terms = flops_per_token(shape)
        total = sum(f for _, f in terms)
        c.text(20, y, f"{shape['name']}: {total / 1e9:.2f} GFLOP a token", bold=True)
        x = sx(0)
        for (label, f), col in zip(terms, colours):
            w = sx(f / 1e9) - sx(0)
            c.rect(x, y + 14, w, 34, fill=col, title=f"{shape['name']} {label}: {f / 1e9:.3f} GFLOP")
            x += w
        share = terms[2][1] / total
        c.text(20, y + 68, f"attention {share:.1%} of the step", fill="muted")
    axis_x(c, sx, top + row_h * len(models) - 10, "GFLOP a token of a training step")
    return c


# ---------------------------------------------------------------- section 2: intensity against tokens


def intensity_ladder(model: str = "gpt2_xl", gpus: list[str] | None = None) -> Canvas:
    """Arithmetic intensity of each product with weights against the tokens of the step, log-log, under
    the bf16 ridge points of the H200 and the MI300X."""
    gpus = gpus or ["h200", "mi300x"]
    shape = SHAPES[model]
    c = Canvas(W, 490)
    x0, x1, y0, y1 = 70, 540, 420, 140
    sx = Scale(1, 8192, x0, x1, log=True)
    sy = Scale(0.5, 2000, y0, y1, log=True)
    axis_x(c, sx, y0, "tokens in the product, T", ticks=[1, 10, 100, 1000])
    axis_y(c, sy, x0, "FLOP/byte", ticks=[1, 10, 100, 1000], grid_to=x1)
    cols = ["s1", "s3", "s2", "s4"]
    Ts = [2 ** (k / 4) for k in range(0, 53)]
    for i, ((name, K, N), col) in enumerate(zip(products(**shape), cols)):
        pts = [(sx(T), sy(intensity(T, K, N))) for T in Ts]
        c.polyline(pts, stroke=col, width=2.5)
        lx, ly = 20 + 270 * (i % 2), 18 + 26 * (i // 2)
        c.rect(lx, ly - 8, 16, 16, fill=col)
        c.text(lx + 24, ly, name, middle=True)
        end = intensity(6144, K, N)
        c.circle(sx(6144), sy(end), 4, fill=col, title=f"{name} at 6,144 tokens: {end:.1f} FLOP/byte")
    for j, gpu in enumerate(gpus):
        r = ridge(gpu)
        c.line(x0, sy(r), x1, sy(r), stroke="bad" if j == 0 else "warn", width=1.5, dash="6 4")
        label = {"h200": "H200", "mi300x": "MI300X (not measured)"}[gpu]
        c.text(x0 + 8, sy(r) - 8 - 18 * j, f"{label} ridge: {r:.0f} FLOP/byte", size=14)
    c.text(20, 80, f"{shape['name']}, bf16, each operand read once", fill="muted")
    c.text(20, 102, "memory-bound below a ridge, compute-bound above", fill="muted")
    return c


# ---------------------------------------------------------------- section 2: the memory ledger


def memory_ledger(model: str = "gpt2_xl") -> Canvas:
    """The state (16 bytes a parameter) and the activations of an eager and a recomputed step, stacked
    on one GiB scale, beside the H200's memory."""
    shape = SHAPES[model]
    seg = memory_segments(shape)
    cols = {"fp32 weights": "s1", "fp32 gradients": "s5", "first moment": "s3", "second moment": "s6",
            "block activations, 34 s b d L": "s2", "bf16 weight copies": "s4", "fp32 logits": "warn",
            "block inputs, fp32": "s2"}
    names = list(dict.fromkeys(n for rows in seg.values() for n, _ in rows))
    top = 28 * ((len(names) + 1) // 2) + 30
    c = Canvas(W, top + 2 * 90 + 60)
    for i, n in enumerate(names):
        x, y = 20 + 270 * (i % 2), 18 + 28 * (i // 2)
        c.rect(x, y - 8, 16, 16, fill=cols[n])
        c.text(x + 24, y, n, middle=True)
    most = max(sum(b for _, b in rows) for rows in seg.values())
    sx = Scale(0, 1.1 * most / GiB, 20, 540)
    for r, (variant, rows) in enumerate(seg.items()):
        y = top + 90 * r
        total = sum(b for _, b in rows)
        c.text(20, y, f"{shape['name']}, {variant}: {total / GiB:.2f} GiB", bold=True)
        x = sx(0)
        for n, b in rows:
            w = sx(b / GiB) - sx(0)
            c.rect(x, y + 12, w, 34, fill=cols[n], title=f"{variant} {n}: {b / GiB:.2f} GiB")
            x += w
    axis_x(c, sx, top + 180, "GiB")
    return c


# ---------------------------------------------------------------- section 5: the gap, from the records

GAP_RECORDS = {  # term -> the record of the train_mfu lab that times it (the rest is the step minus the three)
    "products with weights": "C01/train_mfu/matmuls_{config}/python",
    "attention": "C01/train_mfu/attention_{config}/python",
    "optimizer": "C01/train_mfu/optimizer_{variant}/python",
}


def gap_terms(variant: str = "xl_padded", config: str = "gpt2_xl_padded", shape: str = "gpt2_xl") -> dict:
    """The ideal step (its FLOPs at the H200's dense bf16 peak, split into products and attention) and the
    measured step split into the three terms timed alone and the rest, in ms."""
    from pathlib import Path

    from ..measurements import records

    recs = records(Path(__file__).resolve().parents[2])
    m = SHAPES[shape]
    T = m["b"] * m["s"]
    peak = hardware.peak("h200", "bf16")
    ideal = [("products with weights", 6.0 * n_matmul(**m) * T / peak * 1e3),
             ("attention", 12.0 * m["L"] * m["s"] * m["d"] * T / peak * 1e3)]
    measured = [(name, recs[key.format(config=config, variant=variant)]["value"])
                for name, key in GAP_RECORDS.items()]
    step = recs[f"C01/train_mfu/step_{variant}/python"]["value"]
    measured.append(("the rest", step - sum(ms for _, ms in measured)))
    return {"ideal": ideal, "measured": measured, "step": step}


def step_gap(variant: str = "xl_padded", config: str = "gpt2_xl_padded") -> Canvas:
    """Two bars on one ms scale: the ideal step at the datasheet peak, and the measured step split into the
    products with weights, attention, the optimizer and the rest."""
    g = gap_terms(variant, config)
    cols = {"products with weights": "s1", "attention": "s2", "optimizer": "s4", "the rest": "s5"}
    c = Canvas(W, 330)
    for i, name in enumerate(cols):
        x, y = 20 + 270 * (i % 2), 18 + 26 * (i // 2)
        c.rect(x, y - 8, 16, 16, fill=cols[name])
        c.text(x + 24, y, name, middle=True)
    sx = Scale(0, 1.1 * g["step"], 20, 540)
    rows = [("ideal: the model's FLOPs at 989.5 TFLOP/s", g["ideal"]),
            ("measured on an H200", g["measured"])]
    for r, (label, terms) in enumerate(rows):
        y = 90 + 90 * r
        total = sum(ms for _, ms in terms)
        c.text(20, y, f"{label}: {total:.1f} ms", bold=True)
        x = sx(0)
        for name, ms in terms:
            w = sx(ms) - sx(0)
            c.rect(x, y + 12, w, 34, fill=cols[name], title=f"{r and 'measured' or 'ideal'} {name}: {ms:.1f} ms")
            x += w
    mfu = sum(ms for _, ms in g["ideal"]) / g["step"]
    c.text(20, 262, f"MFU = ideal / measured = {mfu:.1%}", fill="muted")
    axis_x(c, sx, 282, "ms")
    return c
