"""Concept figures of module A08, measuring and profiling.

Every length drawn comes from ``models/timing.py``: the readings of each way of timing, the host and device
timelines of one launch, and the DRAM bytes a repeat moves with the L2 warm or flushed (the L2 size the lab's
GPU reports, held to its record by the claims test). Each bar and segment names what it is in its tooltip, so the tests can read the drawing
back and compare it with the model.
"""

from __future__ import annotations

import math

from ..models import timing
from ..render.svg import Canvas, Scale, axis_x, axis_y

W = 560


def _timeline(args: dict) -> timing.Timeline:
    return timing.Timeline(**args)


# ------------------------------------------------------------------ 1. the analogy: four stopwatches

ROWS = [
    ("host_no_sync", "Stopped when the pistol fires", "the runner has not left the blocks", "bad"),
    ("first_call", "Lap 1, shoes laced on the track", "the lacing is in the time", "bad"),
    ("events_warm_l2", "Downhill course", "faster than the race will be", "warn"),
    ("right", "Fair course, many laps, middle lap", "the time the race will see", "good"),
]


def stopwatches(**args) -> Canvas:
    """Four stopwatch readings of one runner, drawn to the model's scale."""
    t = _timeline(args)
    x0, x1 = 24, W - 24
    top = max(timing.reading(t, w) for w, *_ in ROWS)
    s = Scale(0, top, x0, x1)
    c = Canvas(W, 72 + 78 * len(ROWS))
    c.text(x0, 24, "One runner, one lap, four stopwatches", bold=True, size=16)
    c.text(x0, 46, "bar length: what each stopwatch reads", fill="muted")
    y = 70
    right = timing.reading(t, "right")
    for way, title, note, colour in ROWS:
        v = timing.reading(t, way)
        c.text(x0, y + 14, title, bold=True)
        c.rect(x0, y + 24, s(v) - x0, 22, fill=colour, rx=3,
               title=f"{title}: reads {v:g} model units ({timing.error(t, way):.2f} times the fair reading)")
        c.text(x0, y + 64, note, fill="muted")
        y += 78
    xr = s(right)
    c.line(xr, 62, xr, y - 10, stroke="muted", dash="4 3")
    return c


# ------------------------------------------------------------------ 2. host and device timelines

def host_device(**args) -> Canvas:
    """One launch and a synchronize on a host lane and a device lane, with what three timers bracket."""
    t = _timeline(args)
    segs = timing.segments(t)
    end = max(g.end for g in segs)
    x0, x1 = 96, W - 20
    s = Scale(0, end, x0, x1)
    c = Canvas(W, 400)
    lanes = {"host": 70, "device": 150}
    c.text(x0 - 10, lanes["host"] + 16, "host", anchor="end", bold=True)
    c.text(x0 - 10, lanes["device"] + 16, "GPU", anchor="end", bold=True)
    fills = {"launch call (enqueue)": "s1", "synchronize (waits)": "grid", "launch latency": "muted", "kernel": "s2"}
    for g in segs:
        c.rect(s(g.start), lanes[g.lane], s(g.end) - s(g.start), 32, fill=fills[g.what], rx=2,
               title=f"{g.lane}: {g.what}, from {g.start:g} to {g.end:g}")
    c.text(s(segs[0].end) + 4, lanes["host"] - 8, "launch returns", fill="muted")
    k = segs[2]
    c.text((s(k.start) + s(k.end)) / 2, lanes["device"] + 21, "kernel", anchor="middle", bold=True)

    def bracket(y: float, a: float, b: float, label: str, colour: str) -> None:
        c.line(s(a), y, s(b), y, stroke=colour, width=3)
        c.line(s(a), y - 8, s(a), y + 8, stroke=colour, width=2)
        c.line(s(b), y - 8, s(b), y + 8, stroke=colour, width=2)
        c.text(20, y + 26, label, fill=colour)

    bracket(236, 0, segs[0].end, "host clock, no synchronize: the launch call only", "bad")
    bracket(290, k.start, k.end, "events with the work queued: the kernel", "good")
    bracket(344, 0, segs[3].end, "host clock with synchronize: all of it, and the wake-up", "warn")
    c.line(x0, 200, x1, 200, stroke="grid")
    c.text(x1, 392, "time", anchor="end", fill="muted")
    return c


# ------------------------------------------------------------------ 3. what the L2 keeps between repeats

def l2_repeats(l2_mib: float = 60, sizes_mib: tuple = (16, 512), lo_mib: float = 1, hi_mib: float = 4096) -> Canvas:
    """DRAM bytes of a repeat, as a share of the bytes it moves, against the working set: warm and flushed.
    ``l2_mib`` is the L2 the lab's GPU reports to its runtime (the claims test holds it to that record)."""
    mib = 2.0 ** 20
    l2 = l2_mib * mib
    x0, x1, y0, y1 = 70, W - 24, 300, 70
    sx = Scale(lo_mib, hi_mib, x0, x1, log=True)
    sy = Scale(0, 100, y0, y1)
    c = Canvas(W, 420)
    c.text(x0, 26, "DRAM traffic of one repeat, as % of its bytes", bold=True, size=16)
    axis_y(c, sy, x0, "% from DRAM", ticks=[0, 50, 100], fmt=lambda v: f"{v:g}", grid_to=x1)
    axis_x(c, sx, y0, "working set of the kernel, MiB (log scale)", ticks=[1, 10, 100, 1000],
           fmt=lambda v: f"{v:,.0f}")
    pts_warm, pts_cold = [], []
    n = 200
    for i in range(n + 1):
        ws = lo_mib * (hi_mib / lo_mib) ** (i / n)
        warm = 100 * timing.dram_bytes(1.0, ws * mib, l2, warm=True)
        cold = 100 * timing.dram_bytes(1.0, ws * mib, l2, warm=False)
        pts_warm.append((sx(ws), sy(warm)))
        pts_cold.append((sx(ws), sy(cold) - 3))
    c.polyline(pts_cold, stroke="s1", width=3)
    c.polyline(pts_warm, stroke="s3", width=3, dash="6 4")
    xl = sx(l2 / mib)
    c.line(xl, y1 - 6, xl, y0, stroke="muted", dash="3 3")
    c.text(xl - 6, y1 + 4, f"L2: {l2_mib:g} MiB", fill="muted", anchor="end")
    xf = sx(timing.flush_bytes(l2) / mib)
    c.line(xf, y1 - 6, xf, y0, stroke="muted", dash="3 3")
    c.text(xf + 6, y1 + 44, "flush: 2 × L2", fill="muted")
    for ws in sizes_mib:
        warm = 100 * timing.dram_bytes(1.0, ws * mib, l2, warm=True)
        c.circle(sx(ws), sy(warm), 7, fill="s3", stroke="fg",
                 title=f"lab size {ws} MiB moved: {warm:g}% from DRAM when the L2 is warm")
        c.text(sx(ws), sy(warm) - 16, f"lab: {ws} MiB", anchor="middle")
    c.text(x0, 370, "solid: L2 flushed before the repeat (always all bytes)", fill="s1")
    c.text(x0, 394, "dashed: L2 left warm by the repeat before", fill="s3")
    return c
