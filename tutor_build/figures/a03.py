"""Concept figures of module A03, warps, wavefronts and occupancy.

Every number a figure shows is computed by the course's models: the issue timeline and Little's law from
``models/latency_hiding.py``, occupancy and its limiter from ``models/occupancy.py`` (the "Warps, wavefronts
and occupancy" player), the passes of a branch from ``latency_hiding.split_passes`` (checked against the
"Divergence" player's model in tests/test_model_latency_hiding.py). Tooltips carry the computed values so
that tests/test_figures_a03.py can compare what is drawn with what the models say.
"""

from __future__ import annotations

from ..models import hardware, latency_hiding as lh, occupancy
from ..render.svg import Canvas, Scale, axis_x, axis_y

W = 560
SERIES = ("s1", "s2", "s3", "s4", "s5", "s6")


# ------------------------------------------------------------------ 1. the analogy: rows waiting for runners

def rows_waiting(scenarios: list[dict], latency: int = 15, cycles: int = 48) -> Canvas:
    """One strip of `cycles` clock ticks per scenario ({label, rows, requests}): each cell is coloured by
    the row (warp) whose request leaves in that tick, grey when the corridor is idle."""
    x0, cell, h = 20, (W - 40) / cycles, 22
    c = Canvas(W, 30 + len(scenarios) * 92)
    y = 24
    for sc in scenarios:
        t = lh.timeline(sc["rows"], latency, cycles, sc["requests"])
        c.text(x0, y, sc["label"], bold=True)
        y += 10
        for k, who in enumerate(t.issue):
            fill = SERIES[who % len(SERIES)] if who >= 0 else "grid"
            tip = f"tick {k}: row {who} sends a request" if who >= 0 else f"tick {k}: corridor idle"
            c.rect(x0 + k * cell + 0.5, y, cell - 1, h, fill=fill, title=tip)
        c.text(x0, y + h + 22, f"corridor busy {round(100 * t.busy)}% of the ticks", fill="muted")
        y += h + 58
    return c


# ------------------------------------------------------------------ 2. occupancy against registers per thread

def occupancy_vs_registers(threads: int = 128, max_regs: int = 256) -> Canvas:
    """Occupancy (%) of a `threads`-thread block as registers per thread grow, on one H200 SM and one
    MI300X CU, each as a step line; every step is labelled with the register count where it falls and the
    resource that limits the point just past it."""
    c = Canvas(W, 470)
    sx = Scale(0, max_regs, 70, W - 20)
    panels = (("H200 SM (warps of 32)", "h200", occupancy.hopper, 30), ("MI300X CU (wavefronts of 64)", "mi300x", occupancy.cdna3, 250))
    for title, dev, fn, top in panels:
        sy = Scale(0, 100, top + 170, top + 20)
        c.text(70, top + 6, title, bold=True)
        axis_y(c, sy, 70, "occupancy, %", ticks=[0, 25, 50, 75, 100], grid_to=W - 20)
        pts, last = [], None
        for r in range(1, max_regs + 1):
            res = fn(dev, threads, r, 0)
            occ = 100 * res["occupancy"]
            if last is not None and occ != last:
                pts.append((sx(r - 0.5), sy(last)))
                pts.append((sx(r - 0.5), sy(occ)))
                if occ > 0:
                    c.circle(sx(r - 0.5), sy(occ), 3.5, fill="s2",
                             title=f"{dev}: above {r - 1} registers per thread, {occ:g}% ({res['warps']} of "
                                   f"{res['max_warps']} slots), limited by {res['limit']}")
            if last is None:
                pts.append((sx(r - 0.5), sy(occ)))
            last = occ
        pts.append((sx(max_regs), sy(last)))
        c.polyline(pts, stroke="s1", width=2.5)
        first = next(r for r in range(1, max_regs + 1) if fn(dev, threads, r + 1, 0)["occupancy"] < 1)
        c.text(sx(first) + 8, sy(100) + 18, f"100% up to {first} registers", fill="muted")
    axis_x(c, sx, 440 - 20, "registers per thread (block of 128 threads, no shared memory)",
           ticks=[0, 32, 64, 96, 128, 160, 192, 224, 256])
    return c


# ------------------------------------------------------------------ 3. Little's law: bandwidth against bytes in flight

def littles_law(latencies_ns: list[float], points_kib: list[float], device: str = "h200") -> Canvas:
    """The read+write rate of a copy that keeps B bytes of loads in flight per SM (log axis), for each
    latency: min(2 U B / L, peak), with U the device's SMs and the datasheet HBM peak as the roof. The
    lab's sweep points sit on the axis as ticks."""
    units = int(hardware.value(device, "units"))
    peak = hardware.value(device, "hbm_bw")
    c = Canvas(W, 400)
    sx = Scale(0.5, 256, 80, W - 20, log=True)
    sy = Scale(0, peak / 1e12 * 1.1, 320, 30)
    axis_y(c, sy, 80, "copy rate, TB/s", ticks=[0, 1, 2, 3, 4, 5], grid_to=W - 20)
    c.line(80, sy(peak / 1e12), W - 20, sy(peak / 1e12), stroke="bad", dash="5 4")
    c.text(W - 24, sy(peak / 1e12) - 8, f"HBM3e peak, {peak / 1e12:g} TB/s (datasheet)", anchor="end", fill="bad")
    for i, lat in enumerate(latencies_ns):
        pts = []
        for k in range(0, 101):
            kib = 0.5 * 512 ** (k / 100)
            rate = lh.copy_rate(kib * 1024, lat * 1e-9, units, peak)
            pts.append((sx(kib), sy(rate / 1e12)))
        c.polyline(pts, stroke=SERIES[i], width=2.5)
        knee = lh.needed_in_flight(peak / 2, lat * 1e-9, units) / 1024
        c.circle(sx(knee), sy(peak / 1e12), 4, fill=SERIES[i],
                 title=f"latency {lat:g} ns: the peak needs {knee:.1f} KiB of loads in flight per SM")
        c.text(sx(knee) + 6, sy(peak / 1e12) + 20 + 18 * i, f"{lat:g} ns: {knee:.1f} KiB", fill=SERIES[i])
    for kib in points_kib:
        c.line(sx(kib), 320, sx(kib), 312, stroke="s5", width=2.5)
    axis_x(c, sx, 320, "KiB of loads in flight per SM (log scale); ticks: the lab's sweep points",
           ticks=[0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256], fmt=lambda v: f"{v:g}")
    return c


# ------------------------------------------------------------------ 4. divergence: which lanes take which path

def branch_lanes(splits: list[dict], span: int = 128) -> Canvas:
    """For each split ({label, group}: path B where (t / group) is odd), the first `span` threads of a
    block as cells coloured by path, with the 32-lane warp and 64-lane wavefront boundaries, and the
    passes each warp and each wavefront needs (latency_hiding.split_passes)."""
    x0 = 20
    cell = (W - 2 * x0) / span
    c = Canvas(W, 40 + len(splits) * 96)
    y = 22
    for sp in splits:
        g = sp["group"]
        c.text(x0, y, sp["label"], bold=True)
        y += 10
        for t in range(span):
            b = (t // g) % 2 == 1
            c.rect(x0 + t * cell, y, cell, 20, fill="s2" if b else "s1",
                   title=f"thread {t}: path {'B' if b else 'A'}")
        for t in range(0, span + 1, 32):
            c.line(x0 + t * cell, y - 4, x0 + t * cell, y + 24, stroke="fg", width=2.5 if t % 64 == 0 else 1)
        p32, p64 = lh.split_passes(g, 32), lh.split_passes(g, 64)
        c.text(x0, y + 44, f"warp of 32: {p32} path{'s' if p32 > 1 else ''} each;  "
                           f"wavefront of 64: {p64} path{'s' if p64 > 1 else ''} each", fill="muted")
        y += 86
    c.text(x0, y, "thin lines: warps of 32 lanes; thick lines: wavefronts of 64", fill="muted")
    return c
