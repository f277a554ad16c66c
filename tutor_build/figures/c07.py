"""Figures of module C07 (sizing an LLM serving node), drawn from tutor_build/models/serving.py.

Every length and every number printed on these figures is computed from the sizing model's scenarios (the
same code the serving-sizing player and the module's claims test run), so a figure cannot disagree with them.
Each drawn quantity also carries a <title> naming it and its value, which the tests read back.
"""

from __future__ import annotations

import math

from ..models import serving as sv
from ..render.svg import Canvas, Scale, axis_x, tick_label

W = 560
GB = 1e9

# One meaning per colour across the module's figures: weights (and the time to read them) are s1, the KV
# cache a decode step reads is s2, the rest of the KV pool (what HBM holds beyond that) is s5, FLOP (the
# kitchen's cooking) is s4; what lies outside vLLM's share is grid, and the SLO (the promise) is bad.
C_WEIGHTS, C_KV_READ, C_KV_POOL, C_FLOP = "s1", "s2", "s5", "s4"

# ---------------------------------------------------------------- shared helpers


def scenario(precision: str = "bf16", gpu: str = "h200") -> sv.Scenario:
    """The module's scenario (bf16) or its fp8 variant (W8A8 GEMMs plus an fp8 KV cache), on either node."""
    base = {"bf16": sv.SCENARIO, "fp8": sv.SCENARIO_FP8}[precision]
    return base.with_(gpu={"h200": sv.H200, "mi300x": sv.MI300X}[gpu])


def _gpu_short(gpu: str) -> str:
    return {"h200": "8× H200", "mi300x": "8× MI300X"}[gpu]


def _swatch(c: Canvas, x: float, y: float, fill: str, label: str, hollow: bool = False, size: float = 14) -> None:
    """A legend entry: a small square and its label, vertically centred on y."""
    if hollow:
        c.rect(x, y - 8, 16, 16, fill="bg", stroke=fill, width=2)
    else:
        c.rect(x, y - 8, 16, 16, fill=fill)
    c.text(x + 24, y, label, middle=True, size=size)


def _ms(t_s: float) -> str:
    return f"{t_s * 1e3:.2f} ms"


def _millions(n: float) -> str:
    return f"{n / 1e6:.2f} M"


# ---------------------------------------------------------------- section 1: one round of the kitchen


def kitchen_rows(precision: str = "bf16") -> list[tuple[str, float]]:
    """The diner counts the analogy figure draws: one diner, the batch where cooking catches up with the
    shelf walk (GEMM crossover), the batch where a round fills the promise (SLO), and a full room (KV pool)."""
    s = scenario(precision)
    return [
        ("1 diner", 1.0),
        (f"{round(sv.gemm_crossover_batch(s))} diners: cooking = walk", sv.gemm_crossover_batch(s)),
        (f"{round(sv.slo_batch(s))} diners: promise reached", sv.slo_batch(s)),
        (f"{round(sv.kv_pool_tokens(s) / s.context)} diners: room full", sv.kv_pool_tokens(s) / s.context),
    ]


def kitchen_round(precision: str = "bf16") -> Canvas:
    """One kitchen round (one decode step) for a growing number of diners (sequences): the shelf walk
    (weight read) and the cooking (GEMM compute) overlap, the longer one counts; the notebook reading
    (KV read) follows. The promise (SLO) is a vertical line; the room-full row overshoots it."""
    s = scenario(precision)
    rows = kitchen_rows(precision)
    steps = [sv.step(s, b) for _, b in rows]
    top = 112
    row_h = 74
    c = Canvas(W, top + row_h * len(rows) + 30)
    x0, x1 = 20, 540
    sx = Scale(0, 1.3 * s.slo_s, x0, x1)
    # legend, one entry a line (reads on a phone)
    _swatch(c, x0, 16, C_WEIGHTS, "shelf walk (same for any number of diners)")
    _swatch(c, x0, 40, C_FLOP, "cooking (grows with the diners)")
    _swatch(c, x0, 64, C_KV_READ, "reading the notebooks (grows with the pages)")
    xp = sx(s.slo_s)
    c.line(xp, top - 16, xp, top + row_h * len(rows) - 8, stroke="bad", width=2, dash="6 4")
    c.text(xp, top - 22, "promise", anchor="middle", fill="bad", bold=True)
    for i, ((label, _), st) in enumerate(zip(rows, steps)):
        y = top + i * row_h
        c.text(x0, y + 4, label, bold=True)
        by, bh = y + 16, 30
        walk, cook = st.weight_read_s, st.gemm_compute_s
        first = max(walk, cook)
        # the longer of walk and cooking fills the bar; the shorter runs alongside it, as a strip inside
        long_fill, short_fill = (C_WEIGHTS, C_FLOP) if walk >= cook else (C_FLOP, C_WEIGHTS)
        short = min(walk, cook)
        c.rect(x0, by, sx(first) - x0, bh, fill=long_fill,
               title=f"{'shelf walk' if walk >= cook else 'cooking'}: {_ms(first)}")
        c.rect(x0, by + bh - 9, sx(short) - x0, 9, fill=short_fill, stroke="bg",
               title=f"{'cooking' if walk >= cook else 'shelf walk'}, overlapped: {_ms(short)}")
        read = st.attn_s
        c.rect(sx(first), by, sx(first + read) - sx(first), bh, fill=C_KV_READ, stroke="bg",
               title=f"reading the notebooks: {_ms(read)}")
        share = st.total_s / s.slo_s
        c.text(sx(st.total_s) + 6, by + bh / 2, f"{share:.0%}", middle=True,
               fill="bad" if share > 1.0001 else "fg", bold=share > 1.0001)
    c.text(x0, top + row_h * len(rows) + 12, "round time, as a share of the promise", fill="muted")
    return c


# ---------------------------------------------------------------- section 2: the HBM budget of one GPU


def hbm_segments(precision: str = "bf16", gpu: str = "h200") -> list[tuple[str, float]]:
    """One GPU's HBM, bottom to top, in bytes: its slice of the weights, the KV a decode step at the SLO
    reads, the rest of the KV pool (fits, but no step inside the SLO can read it), and the share outside
    ``mem_util``, which vLLM leaves to other processes and the driver. The four add up to the GPU's HBM.
    vLLM's share also holds its activations and working buffers, which the model does not subtract: the
    pool (the middle two) is an upper bound."""
    s = scenario(precision, gpu)
    n = s.n_gpus
    kv_tok = sv.kv_bytes_per_token(s.model, s.kv_bytes)
    pool = sv.kv_pool_tokens(s)
    used = min(sv.slo_tokens(s), pool)
    weights = sv.weight_bytes_resident(s) / n
    kv_used = used * kv_tok / n
    # the pool rounds down to whole tokens: what that leaves goes with the unreadable part of the offered share
    kv_rest = s.mem_util * s.gpu.hbm_bytes - weights - kv_used
    reserve = s.gpu.hbm_bytes - s.mem_util * s.gpu.hbm_bytes
    return [("weights", weights), ("KV read each step", kv_used), ("KV pool, unread", kv_rest),
            (OUTSIDE, reserve)]


OUTSIDE = "outside vLLM's share"
_HBM_FILL = {"weights": C_WEIGHTS, "KV read each step": C_KV_READ, "KV pool, unread": C_KV_POOL, OUTSIDE: "grid"}


def hbm_budget(gpu: str = "h200", precisions: tuple[str, ...] | list[str] = ("bf16", "fp8")) -> Canvas:
    """Stacked bars of one GPU's HBM for each precision: weights, KV read at the SLO, KV pool the SLO
    cannot read, and the reserve outside vLLM's share. Numbers in GB per GPU; tokens per node."""
    y_top, y_bot = 40, 470
    c = Canvas(W, y_bot + 66 + 4 * 28 + 8)
    hbm = scenario("bf16", gpu).gpu.hbm_bytes
    sy = Scale(0, hbm, y_bot, y_top)
    bar_w = 150
    gap = (W - 2 * 40 - len(precisions) * bar_w) / max(len(precisions) - 1, 1)
    names = {"bf16": ["bf16"], "fp8": ["fp8", "W8A8, fp8 KV"]}
    for j, prec in enumerate(precisions):
        s = scenario(prec, gpu)
        x = 40 + j * (bar_w + gap)
        acc = 0.0
        for name, b in hbm_segments(prec, gpu):
            y0, y1 = sy(acc + b), sy(acc)
            fill = _HBM_FILL[name]
            c.rect(x, y0, bar_w, y1 - y0, fill=fill, stroke="bg" if fill != "grid" else "muted",
                   title=f"{name}: {b / GB:.1f} GB")
            label_fill = "fg" if fill == "grid" else "bg"
            if name == "KV read each step":
                tok = min(sv.slo_tokens(s), sv.kv_pool_tokens(s))
                c.text(x + bar_w / 2, (y0 + y1) / 2 - 8, f"{b / GB:.1f} GB", anchor="middle", fill=label_fill, bold=True, size=16)
                c.text(x + bar_w / 2, (y0 + y1) / 2 + 14, f"{_millions(tok)} tokens", anchor="middle", fill=label_fill, size=16)
            else:
                c.text(x + bar_w / 2, (y0 + y1) / 2, f"{b / GB:.1f} GB", anchor="middle", middle=True,
                       fill=label_fill, bold=True, size=16)
            acc += b
        c.text(x + bar_w / 2, y_top - 12, f"{hbm / GB:.0f} GB per GPU", anchor="middle", fill="muted", size=16)
        for k, line in enumerate(names[prec]):
            c.text(x + bar_w / 2, y_bot + 24 + 20 * k, line, anchor="middle", bold=True, size=16)
    ly = y_bot + 66 + 10
    mem_util = scenario("bf16", gpu).mem_util
    legend = [(C_WEIGHTS, "weights (an eighth per GPU)"), (C_KV_READ, "KV a 30 ms step reads"),
              (C_KV_POOL, "KV that fits but a 30 ms step cannot read"),
              ("grid", f"outside vLLM's {mem_util:.0%} (other processes, driver)")]
    for k, (fill, label) in enumerate(legend):
        if fill == "grid":
            c.rect(40, ly + 28 * k - 8, 16, 16, fill="grid", stroke="muted")
            c.text(64, ly + 28 * k, label, middle=True, size=16)
        else:
            _swatch(c, 40, ly + 28 * k, fill, label, size=16)
    return c


# ---------------------------------------------------------------- section 2: bytes/bandwidth vs FLOP/FLOP-s


def step_terms(precision: str = "bf16", gpu: str = "h200") -> dict[str, float]:
    """The four roofline terms of a decode step at the SLO batch, in seconds."""
    s = scenario(precision, gpu)
    st = sv.step(s, sv.slo_batch(s))
    return {"gemm_read": st.weight_read_s, "gemm_flop": st.gemm_compute_s,
            "attn_read": st.attn_read_s, "attn_flop": st.attn_compute_s, "total": st.total_s}


def decode_terms(gpu: str = "h200", precisions: tuple[str, ...] | list[str] = ("bf16", "fp8")) -> Canvas:
    """For each precision, the step at the SLO batch: each kernel group's time to move its bytes and time to
    do its FLOP (the longer is solid, the shorter hollow: it overlaps), and the step they add up to."""
    x0, x1 = 20, 470
    legend_h = 88
    panel_h = 290
    c = Canvas(W, legend_h + panel_h * len(precisions) + 10)
    _swatch(c, x0, 14, C_WEIGHTS, "weights ÷ bandwidth")
    _swatch(c, x0, 38, C_KV_READ, "KV cache ÷ bandwidth")
    _swatch(c, x0, 62, C_FLOP, "FLOP ÷ FLOP/s")
    c.rect(300, 6, 16, 16, fill="bg", stroke="muted", width=2)
    c.text(324, 14, "hollow: hidden", middle=True)
    c.text(324, 38, "under the other", middle=True)
    names = {"bf16": "bf16", "fp8": "W8A8 + fp8 KV"}
    for j, prec in enumerate(precisions):
        s = scenario(prec, gpu)
        t = step_terms(prec, gpu)
        sx = Scale(0, s.slo_s, x0, x1)
        y = legend_h + j * panel_h + 14
        c.text(x0, y, f"{names[prec]}, batch {sv.slo_batch(s):,.1f}", bold=True, size=16)
        y += 30
        for group, key, bytes_fill in (("weight GEMMs", "gemm", C_WEIGHTS), ("attention over the KV cache", "attn", C_KV_READ)):
            c.text(x0, y, group, fill="muted")
            read, flop = t[f"{key}_read"], t[f"{key}_flop"]
            for k, (val, fill, what) in enumerate(((read, bytes_fill, "bytes / bandwidth"), (flop, C_FLOP, "FLOP / FLOP/s"))):
                by = y + 10 + k * 30
                longer = val >= (flop if k == 0 else read)
                w = max(sx(val) - x0, 1.5)
                if longer:
                    c.rect(x0, by, w, 22, fill=fill, title=f"{group}, {what}: {_ms(val)}")
                else:
                    c.rect(x0, by, w, 22, fill="bg", stroke=fill, width=2, title=f"{group}, {what}: {_ms(val)}")
                c.text(x0 + w + 6, by + 11, _ms(val), middle=True, bold=longer, fill="fg" if longer else "muted")
            y += 84
        # the step: the longer term of each group, one after the other
        c.text(x0, y, "the step (sum of the longer ones)", fill="muted")
        by = y + 10
        g = max(t["gemm_read"], t["gemm_flop"])
        a = max(t["attn_read"], t["attn_flop"])
        c.rect(x0, by, sx(g) - x0, 26, fill=C_FLOP if t["gemm_flop"] > t["gemm_read"] else C_WEIGHTS, stroke="bg",
               title=f"step, weight GEMMs: {_ms(g)}")
        c.rect(sx(g), by, sx(g + a) - sx(g), 26, fill=C_FLOP if t["attn_flop"] > t["attn_read"] else C_KV_READ,
               stroke="bg", title=f"step, attention: {_ms(a)}")
        c.text(sx(g + a) + 6, by + 13, f"{t['total'] * 1e3:.1f} ms", middle=True, bold=True)
        xs = sx(s.slo_s)
        c.line(xs, legend_h + j * panel_h + 34, xs, by + 34, stroke="bad", width=2, dash="6 4")
        c.text(xs, by + 50, f"SLO {s.slo_s * 1e3:.0f} ms", anchor="middle", fill="bad")
    return c


# ---------------------------------------------------------------- section 3: batch x context, pool vs SLO


CONTEXT_LO, CONTEXT_HI = 256, 65536
POOL_DASH = "9 5"
PANEL_TOP, PANEL_H = 96, 330


def context_points(n: int = 49) -> list[float]:
    """Contexts (tokens per sequence) the concurrency curves are sampled at, evenly on a log axis."""
    a, b = math.log2(CONTEXT_LO), math.log2(CONTEXT_HI)
    return [2 ** (a + (b - a) * i / (n - 1)) for i in range(n)]


def concurrency_curves(precision: str, gpu: str) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(context, KV tokens) along the room (the KV pool, flat) and along the promise (SLO batch x context)."""
    s = scenario(precision, gpu)
    pool = sv.kv_pool_tokens(s)
    room = [(cx, float(pool)) for cx in context_points()]
    slo = [(cx, sv.slo_batch(s.with_(context=cx)) * cx) for cx in context_points()]
    return room, slo


def concurrency_scales(panel: int, y_max: float) -> tuple[Scale, Scale]:
    """The x (context, log) and y (KV tokens) scales of panel ``panel`` of the concurrency figure."""
    top = PANEL_TOP + panel * PANEL_H
    return Scale(CONTEXT_LO, CONTEXT_HI, 80, 530, log=True), Scale(0, y_max, top + 200, top)


def concurrency_y_max(precision: str, gpus) -> float:
    """The top of the y axis, shared by the panels: the next whole million above every curve."""
    y_max = 0.0
    for gpu in gpus:
        room, slo = concurrency_curves(precision, gpu)
        y_max = max(y_max, max(v for _, v in room + slo))
    return (int(y_max / 1e6) + 1) * 1e6


def concurrency(precision: str = "bf16", gpus: tuple[str, ...] | list[str] = ("h200", "mi300x")) -> Canvas:
    """KV tokens the node may keep running (batch x context) against the context per sequence: the flat room
    (KV pool) and the rising promise (SLO cap), one panel per node; the lower of the two binds."""
    c = Canvas(W, PANEL_TOP + PANEL_H * len(gpus) - 40)
    y_max = concurrency_y_max(precision, gpus)
    # line keys: the pool is dashed as well as gold, so the two curves differ without colour
    c.line(16, 14, 40, 14, stroke=C_KV_POOL, width=3, dash=POOL_DASH)
    c.text(48, 14, "KV pool: what HBM holds", middle=True)
    c.line(16, 38, 40, 38, stroke=C_KV_READ, width=3)
    c.text(48, 38, "SLO cap: what a 30 ms step reads", middle=True)
    ticks_x = [256, 1024, 4096, 16384, 65536]
    for p, gpu in enumerate(gpus):
        s = scenario(precision, gpu)
        sx, sy = concurrency_scales(p, y_max)
        room, slo = concurrency_curves(precision, gpu)
        # y axis in millions of tokens, drawn by hand so the labels stay short
        c.line(sx.a, sy.a, sx.a, sy.b, stroke="fg")
        for v in range(0, int(y_max / 1e6) + 1):
            yy = sy(v * 1e6)
            c.line(sx.a - 5, yy, sx.a, yy, stroke="fg")
            c.line(sx.a, yy, sx.b, yy, stroke="grid")
            c.text(sx.a - 8, yy, f"{v} M", anchor="end", middle=True, fill="muted")
        c.text(20, (sy.a + sy.b) / 2, "KV tokens", anchor="middle", rotate=-90)
        axis_x(c, sx, sy.a, "tokens of context per sequence", ticks=ticks_x,
               fmt=lambda v: f"{v / 1024:g}K" if v >= 1024 else tick_label(v))
        c.text(sx.a - 60, sy.b - 22, f"{_gpu_short(gpu)}, {precision}", bold=True, size=16)
        c.polyline([(sx(x), sy(y)) for x, y in room], stroke=C_KV_POOL, width=3, dash=POOL_DASH)
        c.polyline([(sx(x), sy(y)) for x, y in slo], stroke=C_KV_READ, width=3)
        flip = sv.context_where_binding_flips(s)
        if flip is not None and CONTEXT_LO < flip < CONTEXT_HI:
            xf = sx(flip)
            c.line(xf, sy.a, xf, sy(sv.kv_pool_tokens(s)), stroke="muted", dash="4 4")
            c.circle(xf, sy(sv.kv_pool_tokens(s)), 5, fill="fg", title=f"binding flips at {flip:,.0f} tokens")
            c.text(xf + 6, sy.a - 14, f"{flip:,.0f}", fill="muted")
        else:
            c.text(sx.b, sy(0.5e6), "latency binds at every context", anchor="end", fill="muted")
        # the module's context: both bounds, as batches
        cx = s.context
        pool_b = sv.kv_pool_tokens(s) / cx
        slo_b = sv.slo_batch(s)
        c.circle(sx(cx), sy(sv.kv_pool_tokens(s)), 5, fill=C_KV_POOL, title=f"room at {cx:,}: {pool_b:,.1f} sequences")
        c.circle(sx(cx), sy(slo_b * cx), 5, fill=C_KV_READ, title=f"promise at {cx:,}: {slo_b:,.1f} sequences")
        c.text(sx.a, sy.a + 62, f"at {cx:,}: {round(pool_b)} sequences fit, {round(slo_b)} meet the SLO")
    return c


# ---------------------------------------------------------------- section 6: the latency-throughput curve


def measured_eta() -> float:
    """The module's bandwidth efficiency: the paged KV read's record over the datasheet bandwidth."""
    from pathlib import Path

    from ..measurements import records

    rec = records(Path(__file__).resolve().parents[2])[sv.ETA_RECORD]
    return sv.bw_eff_from_measured(rec["value"] * 1e9, sv.H200)


LT_VARIANTS = (("bf16", "bf16 weights, bf16 KV", "s1"), ("kv8", "bf16 weights, fp8 KV", "s2"),
               ("w8a8", "W8A8, fp8 KV", "s4"), ("wo8", "weight-only fp8, bf16 KV", "s5"))
LT_T_MAX = 0.060


def latency_throughput_curves() -> dict[str, list[tuple[float, float, float]]]:
    """(batch, step s, tokens/s) of each format on 8 H200 at the measured efficiency, all-reduces charged,
    from batch 1 up to the batch whose step takes LT_T_MAX or the KV pool, whichever is smaller."""
    eta = measured_eta()
    out = {}
    for key, _, _ in LT_VARIANTS:
        s = sv.with_node_costs(sv.VARIANTS[key], eta)
        b_max = min(sv.kv_pool_tokens(s) / s.context, sv.slo_batch(s.with_(slo_s=LT_T_MAX)))
        out[key] = sv.throughput_curve(s, [1 + (b_max - 1) * i / 60 for i in range(61)])
    return out


def latency_throughput() -> Canvas:
    """Node output tokens per second against the time per output token, one curve per format."""
    curves = latency_throughput_curves()
    y_max = max(v for cur in curves.values() for _, _, v in cur)
    y_top = (int(y_max / 10_000) + 1) * 10_000
    c = Canvas(W, 470)
    sx, sy = Scale(0, LT_T_MAX * 1e3, 90, 530), Scale(0, y_top, 400, 110)
    for i, (key, label, col) in enumerate(LT_VARIANTS):
        x, y = 16 + (i % 2) * 270, 14 + (i // 2) * 26
        c.line(x, y, x + 24, y, stroke=col, width=3, dash=None if i % 2 == 0 else "6 4")
        c.text(x + 32, y, label, middle=True)
    c.line(sx.a, sy.a, sx.a, sy.b, stroke="fg")
    for v in range(0, y_top + 1, 10_000):
        yy = sy(v)
        c.line(sx.a - 5, yy, sx.a, yy, stroke="fg")
        c.line(sx.a, yy, sx.b, yy, stroke="grid")
        c.text(sx.a - 8, yy, f"{v // 1000}k", anchor="end", middle=True, fill="muted")
    c.text(20, (sy.a + sy.b) / 2, "output tokens/s", anchor="middle", rotate=-90)
    axis_x(c, sx, sy.a, "time per output token (ms)", ticks=[0, 10, 20, 30, 40, 50, 60])
    c.line(sx(30), sy.a, sx(30), sy.b, stroke="bad", dash="4 4")
    c.text(sx(30) + 4, sy.b + 10, "SLO", fill="bad")
    for i, (key, label, col) in enumerate(LT_VARIANTS):
        cur = curves[key]
        c.polyline([(sx(t * 1e3), sy(v)) for _, t, v in cur], stroke=col, width=3,
                   dash=None if i % 2 == 0 else "6 4")
        s = sv.with_node_costs(sv.VARIANTS[key], measured_eta())
        b = sv.slo_batch(s)
        c.circle(sx(30), sy(b / 0.030), 5, fill=col, title=f"{label}: batch {b:,.1f}, {b / 0.030:,.0f} tokens/s at 30 ms")
    return c
