"""Figures of module B05 (collective communication), drawn from tutor_build/models/collectives.py.

The ring schedule is computed from the chunk formulas of the module's labs; both bandwidth plots evaluate
the collectives player's alpha-beta model (the same code the player and the claims test run), the one-GPU
plot with alpha and bandwidth fitted from the ring_copies records, the eight-GPU plot with cited alpha and
the link rates of the hardware table. Every drawn point carries a <title> with its value.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..models import collectives as co
from ..models import hardware as hw
from ..render.svg import Canvas, Scale, axis_x, axis_y

W = 560
PS = (2, 4, 8)
SIZES = tuple(range(3, 31))  # log2 bytes per rank, as the lab's bench
# NCCL's cost model: a ring step of the Simple protocol over NVLink costs 3.4 us (hwLat, src/graph/tuning.cc,
# cited on the page as nccl-tuning-source). The module uses it as alpha for both vendors.
ALPHA_RING_SIMPLE_US = 3.4
BASE_RING_SIMPLE_US = 8.4  # baseLat of ring Simple (the same file, NCCL 2.21.5)
ALPHA_RING_LL_US = 0.6  # hwLat of ring LL over NVLink, on a base of 6.6 us, at half the bandwidth
BASE_RING_LL_US = 6.6
ALPHA_NET_RING_SIMPLE_US = 14.0  # hwLat of ring Simple over the network
# Achievable rates after protocol overhead, as the page cites them (not used by the drawn model):
EFFECTIVE_NVLINK_GBPS = 370.0  # NCCL's maintainer, nccl-tests issue #212 (nccl-tests-issue-212)
XGMI_USABLE_GBPS = 48.0  # per xGMI link, AMD's ROCm blog (amd-rccl-xgmi-blog)
LINKS_MI300X = 7  # one Infinity Fabric link to each of the other seven GPUs (rccl-rome-models)
COLOURS = {2: "s1", 4: "s2", 8: "s3"}


# ---------------------------------------------------------------- the model, fitted to the records

def _records() -> dict:
    from ..measurements import records
    return records(Path(__file__).resolve().parents[2])


def key(p: int, k: int) -> str:
    return f"B05/ring_copies/g1_p{p}_2e{k}/cuda"


def copy_ceiling_gbps(recs: dict | None = None) -> float:
    """The device-to-device copy bandwidth measured in the same run (every record carries it)."""
    recs = _records() if recs is None else recs
    return recs[key(2, 30)]["ceiling"]["value"]


def b_eff_gbps(p: int, b_copy: float) -> float:
    """One GPU as a ring of p virtual ranks: 7(p-1)n bytes of HBM per all-reduce of n bytes per rank,
    written as the ring's 2(p-1)/p n / B, gives B = 2 B_copy / (7p)."""
    return 2.0 * b_copy / (7.0 * p)


def smallest_full_log2(p: int) -> int:
    """log2 of the smallest message whose p chunks all hold at least one float (4p bytes)."""
    return int(math.log2(4 * p))


def alpha_step_us(p: int, recs: dict | None = None) -> float:
    """alpha per ring step: the time of the smallest full message over its 2(p-1) steps."""
    recs = _records() if recs is None else recs
    return recs[key(p, smallest_full_log2(p))]["ms"] * 1e3 / (2 * (p - 1))


def model_busbw(p: int, log2_bytes: int, alpha_us: float, link_gbps: float) -> float:
    """Bus bandwidth (GB/s) of a ring all-reduce from the collectives player's model."""
    out = co.compute({"operation": "all-reduce", "algorithm": "ring", "gpus": p, "log2_bytes": log2_bytes,
                      "alpha_us": alpha_us, "link_gbps": link_gbps})
    return out["busbw"] / 1e9


def predicted_8gpu_link_gbps(gpu: str) -> float:
    """Per-GPU sending rate of an 8-GPU ring (GB/s): NVSwitch gives one peer the whole NVLink rate; on the
    fully connected MI300X platform the rings must spread over all seven links."""
    if gpu == "h200":
        return hw.value("h200", "link_bw") / 1e9
    return LINKS_MI300X * hw.value("mi300x", "link_bw") / 1e9


# ---------------------------------------------------------------- section 1: the ring's schedule

def schedule(p: int) -> list[list[int]]:
    """chunk[r][step] that rank r sends at each of the 2(p-1) steps (the labs' formulas)."""
    rows = []
    for r in range(p):
        rs = [(r - s) % p for s in range(p - 1)]
        ag = [(r + 1 - s) % p for s in range(p - 1)]
        rows.append(rs + ag)
    return rows


def ring_schedule(p: int = 4) -> Canvas:
    """A grid: one row per rank, one column per step; each cell is the chunk the rank sends to the next."""
    rows = schedule(p)
    steps = 2 * (p - 1)
    x0, top = 110, 96
    cw = (W - x0 - 20) / steps
    ch = 46
    c = Canvas(W, top + ch * p + 96)
    c.text(x0 + cw * (p - 1) / 2, 40, "reduce-scatter", anchor="middle", bold=True)
    c.text(x0 + cw * (p - 1) * 1.5, 40, "all-gather", anchor="middle", bold=True)
    c.line(x0 + cw * (p - 1), 28, x0 + cw * (p - 1), top + ch * p + 6, stroke="fg", width=2)
    for s in range(steps):
        c.text(x0 + cw * (s + 0.5), 72, f"step {s + 1}", anchor="middle", fill="muted")
    colours = ["s1", "s2", "s3", "s4", "s5", "s6", "warn", "good"]
    for r, row in enumerate(rows):
        y = top + ch * r
        c.text(x0 - 12, y + ch / 2, f"rank {r}", anchor="end", middle=True)
        for s, chunk in enumerate(row):
            kind = "adds into" if s < p - 1 else "passes on"
            c.rect(x0 + cw * s + 2, y + 3, cw - 4, ch - 6, fill=colours[chunk % len(colours)], rx=4,
                   title=f"rank {r} step {s + 1}: sends chunk {chunk} to rank {(r + 1) % p}, which {kind} it")
            c.text(x0 + cw * (s + 0.5), y + ch / 2, f"c{chunk}", anchor="middle", middle=True, bold=True, fill="bg")
    yb = top + ch * p + 30
    c.text(20, yb, f"p = {p}: {steps} steps; each sends 1/{p} of the buffer,", fill="fg")
    c.text(20, yb + 24, f"{steps}/{p} = {steps / p:g} buffers per rank in all", fill="fg")
    return c


# ---------------------------------------------------------------- shared: a log-log bandwidth plot

def _decade(v: float) -> str:
    """A decade tick: 1e-3 below one, 1 / 10 / 100 / 1,000 above."""
    return f"{v:,.0f}" if v >= 1 else f"1e{round(math.log10(v))}"


def _loglog(c: Canvas, y_hi: float, y_lo: float, x0=70, x1=540, top=30, bottom=330):
    sx = Scale(2 ** 3, 2 ** 30, x0, x1, log=True)
    sy = Scale(y_lo, y_hi, bottom, top, log=True)
    xt = [2 ** k for k in (3, 10, 20, 30)]
    axis_x(c, sx, bottom, "bytes per rank", ticks=xt, fmt=lambda v: {8: "8 B", 1024: "1 KiB", 2 ** 20: "1 MiB",
                                                                        2 ** 30: "1 GiB"}[int(v)])
    axis_y(c, sy, x0, "bus bandwidth (GB/s)", grid_to=x1, fmt=_decade)
    return sx, sy


def alphabeta_fit(ps: list[int] = list(PS)) -> Canvas:
    """Bus bandwidth against message size on one H200: the alpha-beta ring model fitted from the records
    (lines) and the records themselves (dots), for each p."""
    recs = _records()
    b_copy = copy_ceiling_gbps(recs)
    c = Canvas(W, 470)
    sx, sy = _loglog(c, 2000, 1e-5)
    for p in ps:
        a, b = alpha_step_us(p, recs), b_eff_gbps(p, b_copy)
        pts = [(sx(2 ** k), sy(model_busbw(p, k, a, b))) for k in SIZES]
        c.polyline(pts, stroke=COLOURS[p], width=2)
        for k in SIZES:
            v = recs[key(p, k)]["value"]
            c.circle(sx(2 ** k), sy(v), 3.5, fill=COLOURS[p], title=f"p={p} 2^{k} B measured: {v:.4g} GB/s")
        c.line(sx(2 ** 3), sy(b), sx(2 ** 30), sy(b), stroke=COLOURS[p], dash="4 4")
    ly = 392
    for i, p in enumerate(ps):
        a, b = alpha_step_us(p, recs), b_eff_gbps(p, b_copy)
        y = ly + 22 * i
        c.line(20, y, 44, y, stroke=COLOURS[p], width=2)
        c.circle(32, y, 3.5, fill=COLOURS[p])
        c.text(52, y, f"p = {p}: alpha {a:.3g} µs per step, plateau {b:.0f} GB/s", middle=True)
    return c


def predicted_8gpu(gpus: list[str] = ["h200", "mi300x"]) -> Canvas:
    """Predicted (not measured) bus bandwidth of a ring all-reduce on 8 GPUs over NVSwitch and over xGMI."""
    c = Canvas(W, 430)
    sx, sy = _loglog(c, 1000, 1e-4)
    names = {"h200": "8× H200, NVSwitch", "mi300x": "8× MI300X, xGMI"}
    cols = {"h200": "s1", "mi300x": "s4"}
    for i, g in enumerate(gpus):
        b = predicted_8gpu_link_gbps(g)
        pts = [(sx(2 ** k), sy(model_busbw(8, k, ALPHA_RING_SIMPLE_US, b))) for k in SIZES]
        c.polyline(pts, stroke=cols[g], width=2, dash=None if i == 0 else "6 4")
        v30 = model_busbw(8, 30, ALPHA_RING_SIMPLE_US, b)
        c.circle(sx(2 ** 30), sy(v30), 4, fill=cols[g], title=f"{names[g]} at 1 GiB predicted: {v30:.0f} GB/s")
        y = 392 + 22 * i
        c.line(20, y, 44, y, stroke=cols[g], width=2, dash=None if i == 0 else "6 4")
        c.text(52, y, f"{names[g]}: {b:.0f} GB/s per GPU, {v30:.0f} GB/s at 1 GiB", middle=True)
    c.text(300, 60, "predicted, not measured", anchor="middle", fill="muted")
    return c
