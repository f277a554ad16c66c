"""Concept figures of module A04, the memory hierarchy and the roofline.

Every capacity drawn comes from ``models/hierarchy.py`` (which reads the one hardware table where it can),
and every roof and ridge point from ``models/roofline.py`` and ``models/hardware.py``; each shape's tooltip
names the number it stands for, so the tests can read the figures back and compare them with the models.
"""

from __future__ import annotations

import math

from ..models import hardware, hierarchy, roofline
from ..render.svg import Canvas, Scale, tick_label, wrap

W = 560
X0 = 16


def _bytes(n: float) -> str:
    """Decimal units for datasheet sizes (50 MB, 141 GB), binary for the on-chip arrays (256 KiB)."""
    if n >= 1e9:
        return f"{n / 1e9:,.0f} GB"
    if n >= 1e6:
        return f"{n / 1e6:,.0f} MB" if n % 1e6 == 0 else f"{n / 1e6:.1f} MB"
    return f"{n / 1024:,.0f} KiB"


def _decade(t: float) -> str:
    """A power of ten of bytes in decimal units, one format along the whole axis: 10 kB, 100 kB, 1 MB ..."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if t >= scale:
            return f"{t / scale:,.0f} {unit}"
    return f"{t:,.0f} B"


def _reach(lv: hierarchy.Level) -> float:
    """The capacity one SM (or CU) can draw on at that level: its own copy of a per-SM level, all of a shared one."""
    return lv.capacity if lv.per in ("SM", "CU") else lv.total


# ------------------------------------------------------------------ 1. the analogy: hand, desk, shelf, library

PLACES = {  # level key -> (place in the analogy, where it is)
    "registers": ("in your hands", "the page you are reading"),
    "l1": ("on your desk", "a few books within reach"),
    "l2": ("the shelf down the hall", "shared by the whole office"),
    "hbm": ("the library across town", "everything, but a trip away"),
}


def places(device: str = "h200") -> Canvas:
    """One row per place, its capacity as a bar on a log scale (bytes one SM can draw on), nearest first;
    the warehouse (host memory over PCIe) closes the list without a bar."""
    lvs = [lv for lv in hierarchy.levels(device) if lv.key in PLACES]
    s = Scale(1e4, 1e12, X0 + 22, W - 30, log=True)  # inset: the end ticks' labels stay inside the canvas
    c = Canvas(W, 10)
    y = 24.0
    c.text(X0, y, f"What one worker can reach ({hardware.DEVICES[device]['name']})", bold=True, size=16)
    y += 22
    c.text(X0, y, "bar: bytes within reach, log scale; each row is farther away, so slower", fill="muted")
    y += 16
    colours = ("s3", "s1", "s2", "s4")
    for lv, colour in zip(lvs, colours):
        place, what = PLACES[lv.key]
        reach = _reach(lv)
        y += 28
        c.text(X0, y, f"{place.capitalize()}: {lv.name}", bold=True)
        y += 19
        per = f"{_bytes(lv.capacity)} per {lv.per}" if lv.per in ("SM", "CU") else f"{_bytes(lv.total)} for all SMs"
        c.text(X0, y, f"{what}; {per}", fill="muted")
        y += 8
        c.rect(s.a, y, s(reach) - s.a, 16, fill=colour, rx=2, title=f"{lv.key}: {reach:.0f} bytes within reach")
        y += 16
    y += 28
    c.text(X0, y, "In a warehouse in another city: host memory", bold=True)
    y += 19
    pcie = hardware.value(device, "pcie_bw") if "pcie_bw" in hardware.DEVICES[device] else None
    tail = f"over PCIe, {pcie / 1e9:.0f} GB/s each way" if pcie else "over PCIe"
    c.text(X0, y, f"off the GPU altogether, {tail}", fill="muted")
    y += 22
    for t in s.ticks(8):
        c.line(s(t), y, s(t), y + 5, stroke="fg")
        c.text(s(t), y + 20, _decade(t), anchor="middle", fill="muted")
    c.line(s.a, y, s.b, y, stroke="fg")
    c.text((s.a + s.b) / 2, y + 40, "bytes within reach (log scale)", anchor="middle")
    c.height = y + 50
    return c


# ------------------------------------------------------------------ 2. the ladder, both vendors side by side

ROWS = ("registers", "l1", "lds", "l2", "infinity", "hbm")
ABSENT = {  # what a vendor has instead of a rung the other has
    ("h200", "lds"): "shared memory: part of the L1 array above",
    ("h200", "infinity"): "no memory-side cache: L2 misses go to HBM",
}


def ladder(nvidia: str = "h200", amd: str = "mi300x") -> Canvas:
    """The levels of both GPUs, nearest first, one rung per row: per-copy capacity, copies and the total,
    with a bar on one log scale shared by both columns."""
    col_w = (W - 2 * X0 - 12) / 2
    xs = (X0, X0 + col_w + 12)
    s_for = [Scale(1e4, 1e12, x + 4, x + col_w - 4, log=True) for x in xs]
    c = Canvas(W, 10)
    y = 24.0
    for x, dev in zip(xs, (nvidia, amd)):
        c.text(x, y, hardware.DEVICES[dev]["name"].replace(" SXM", ""), bold=True, size=16)
    y += 20
    c.text(X0, y, "nearest and fastest at the top; bar: total bytes, log scale", fill="muted")
    levels = {dev: {lv.key: lv for lv in hierarchy.levels(dev)} for dev in (nvidia, amd)}
    chars = int(col_w / (0.6 * 14))
    for key in ROWS:
        if not any(key in levels[d] for d in (nvidia, amd)):
            continue
        y += 16
        heights = []
        for x, s, dev in zip(xs, s_for, (nvidia, amd)):
            lv = levels[dev].get(key)
            yy = y
            if lv is None:
                for line in wrap(ABSENT.get((dev, key), "none"), chars):
                    yy += 18
                    c.text(x, yy, line, fill="muted")
                heights.append(yy - y)
                continue
            yy += 18
            c.text(x, yy, lv.name, bold=True)
            yy += 18
            if lv.copies > 1:
                c.text(x, yy, f"{_bytes(lv.capacity)} x {lv.copies} {lv.per}s", fill="muted")
                yy += 18
            c.text(x, yy, f"= {_bytes(lv.total)}" if lv.copies > 1 else _bytes(lv.total), fill="muted")
            yy += 7
            c.rect(s.a, yy, max(s(lv.total) - s.a, 2), 12, fill="s1" if dev == nvidia else "s4", rx=2,
                   title=f"{dev} {lv.key}: {lv.total:.0f} bytes in all")
            yy += 12
            heights.append(yy - y)
        y += max(heights)
    y += 16
    c.line(X0, y, W - X0, y, stroke="grid")
    y += 22
    c.text(X0, y, "farther down: more bytes, longer trips; the lab times each rung", fill="muted")
    c.height = y + 12
    return c


# ------------------------------------------------------------------ 3. the roofline of both GPUs, three precisions

PRECISION_STYLE = (("fp32", "s3", "3 4"), ("bf16", "s2", None), ("fp8", "s6", "9 4 2 4"))


def roofs(devices: tuple = ("h200", "mi300x"), precisions: tuple = ("fp32", "bf16", "fp8")) -> Canvas:
    """One log-log panel per GPU: min(P, I x B) for each precision, the ridge point I* = P / B marked."""
    c = Canvas(W, 10)
    y = 8.0
    px0, px1 = 84.0, W - 24.0
    for dev in devices:
        bw = hardware.value(dev, "hbm_bw")
        sx = Scale(0.1, 1e4, px0, px1, log=True)
        top, h = y + 40, 260
        sy = Scale(1e12, 3e15, top + h, top, log=True)
        c.text(X0, y + 20, f"{hardware.DEVICES[dev]['name']}: {bw / 1e12:.1f} TB/s HBM", bold=True, size=16)
        for t in sy.ticks(6):
            c.line(px0, sy(t), px1, sy(t), stroke="grid")
            c.text(px0 - 8, sy(t), tick_label(t / 1e12), anchor="end", fill="muted", middle=True)
        for t in sx.ticks(6):
            c.line(sx(t), top, sx(t), top + h, stroke="grid")
            c.text(sx(t), top + h + 20, tick_label(t), anchor="middle", fill="muted")
        c.text(16, top + h / 2, "TFLOP/s", anchor="middle", rotate=-90)
        labels = []  # a legend in the empty top left, highest roof first: the shared slant is far right of it there
        for prec, colour, dash in PRECISION_STYLE[::-1]:
            if prec not in precisions:
                continue
            r = roofline.compute({"device": dev, "precision": prec, "intensity": 1.0})
            peak, ridge = r["peak_flops"], r["ridge"]
            x_start = max(sx.lo, sy.lo / bw)
            pts = [(sx(x_start), sy(x_start * bw)), (sx(ridge), sy(peak)), (sx(sx.hi), sy(peak))]
            c.polyline(pts, stroke=colour, width=2.5, dash=dash)
            c.circle(sx(ridge), sy(peak), 5, fill=colour, stroke="bg",
                     title=f"{dev} {prec}: ridge {ridge:.1f} FLOP/byte at {peak / 1e12:.1f} TFLOP/s")
            labels.append((f"{prec.upper()} {peak / 1e12:,.0f} TFLOP/s, ridge {ridge:.0f}", colour, dash))
        for i, (text, colour, dash) in enumerate(labels):
            yl = top + 18 + 19 * i
            c.polyline([(px0 + 8, yl - 5), (px0 + 30, yl - 5)], stroke=colour, width=2.5, dash=dash)
            c.text(px0 + 36, yl, text, fill="fg")
        c.text((px0 + px1) / 2, top + h + 40, "arithmetic intensity, FLOP per byte of HBM traffic (log)", anchor="middle")
        y = top + h + 56
    c.height = math.ceil(y + 4)
    return c
