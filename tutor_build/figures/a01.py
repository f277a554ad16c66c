"""Concept figures of module A01, the GPU mental model.

Every number drawn here comes from the course's models: the program's phases from
``models/where_time_goes.py`` (the "Where the time goes" player), bandwidths, SM counts and lane
widths from ``models/hardware.py``. Shapes that stand for a quantity are drawn to scale.
"""

from __future__ import annotations

import math

from ..models import hardware, where_time_goes
from ..render.svg import Canvas, Scale, axis_x, axis_y, wrap

W = 560


def _tw(s: str, size: float = 14) -> float:
    """Approximate width of a label (sans-serif, average glyph)."""
    return len(s) * size * 0.56


def _ms(seconds: float) -> str:
    """A duration with a unit that keeps 2-3 significant digits."""
    if seconds >= 1e-3:
        v, unit = seconds * 1e3, "ms"
    else:
        v, unit = seconds * 1e6, "µs"
    return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"


def _pct(share: float) -> str:
    p = share * 100
    return f"{p:.2g}%" if p < 1 else f"{p:.1f}%"


_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _pow2(e: int) -> str:
    """2^e written with a superscript exponent."""
    return "2" + str(e).translate(_SUP)


def _bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


# ------------------------------------------------------------------ 1. the analogy made visible

def stadium(device: str = "h200", sections_drawn: int = 4, rows_drawn: int = 3) -> Canvas:
    """Host (professor's office), the narrow gate (host link), the warehouse (HBM), the wide corridor
    (HBM bandwidth) and the stadium of sections (SMs) with rows of students (warps). The gate and the
    corridor are drawn to scale: their widths are the two bandwidths."""
    wt = where_time_goes.INPUTS
    link = wt["link_gbps"]["default"] * 1e9  # pinned copies over PCIe Gen5 x16, each way
    hbm = hardware.value(device, "hbm_bw")
    lanes = int(hardware.value(device, "lanes"))
    units = int(hardware.value(device, "units"))
    warps = int(hardware.value(device, "max_warps_per_unit"))

    c = Canvas(W, 640)
    x0, x1 = 20, W - 20
    full = x1 - x0
    # the professor's office: the host
    c.rect(x0, 10, full, 78, fill="grid", rx=8)
    c.circle(x0 + 40, 49, 22, fill="s4", title="the professor: one fast CPU core")
    c.text(x0 + 78, 38, "Professor's office = host", bold=True, size=15)
    c.text(x0 + 78, 60, "one fast worker (CPU), main memory", fill="muted")

    # passage widths to scale: the corridor spans the full width, the gate its share of it
    corridor_w = full - 40
    gate_w = corridor_w * link / hbm

    def passage(y: float, w: float, label: str, sub: str, colour: str) -> None:
        cx = W / 2
        c.line(x0, y, cx - w / 2, y, stroke="muted", width=8)
        c.line(cx + w / 2, y, x1, y, stroke="muted", width=8)
        c.rect(cx - w / 2, y - 14, w, 28, fill=colour, title=f"{label}: {sub}")
        c.text(x0, y + 32, label, bold=True)
        c.text(x1, y + 32, sub, anchor="end", fill="muted")

    passage(112, gate_w, "narrow gate: host link (PCIe)", f"{link / 1e9:.0f} GB/s each way", "s2")

    c.rect(x0, 166, full, 56, fill="grid", rx=8)
    c.text(x0 + 16, 190, "Warehouse = HBM, the GPU's memory", bold=True, size=15)
    c.text(x0 + 16, 211, "on the board, next to the chip", fill="muted")

    passage(250, corridor_w, "wide corridor: HBM bandwidth", f"{hbm / 1e12:.3g} TB/s, {hbm / link:.0f}× the gate",
            "s1")

    # the stadium: sections (SMs), each with rows (warps) of students (lanes)
    top = 304
    cols = 2
    sec_w = (full - 16 * (cols + 1)) / cols
    sec_h = 14 + rows_drawn * 14 + 16
    dot_gap = (sec_w - 16) / lanes
    grid_rows = math.ceil(sections_drawn / cols)
    note_y = top + 44 + grid_rows * (sec_h + 10) + 12
    box_h = note_y + 30 - top
    c.rect(x0, top, full, box_h, fill="none", stroke="fg", rx=8, width=1.5)
    c.text(x0 + 16, top + 26, f"Stadium = GPU: {units} sections (SMs)", bold=True, size=15)
    for k in range(sections_drawn):
        sx = x0 + 16 + (k % cols) * (sec_w + 16)
        sy = top + 42 + (k // cols) * (sec_h + 10)
        c.rect(sx, sy, sec_w, sec_h, fill="grid", rx=5, title=f"section (SM) {k}")
        for r in range(rows_drawn):
            for i in range(lanes):
                c.circle(sx + 8 + dot_gap * (i + 0.5), sy + 12 + r * 14, min(2.6, dot_gap * 0.38), fill="s3",
                         title=f"student (thread) {i} of row (warp) {r}")
        c.text(sx + sec_w / 2, sy + sec_h - 4, "⋮", anchor="middle", fill="muted")
    c.text(x0 + 16, note_y, f"a row = {lanes} students (a warp);", fill="muted")
    c.text(x0 + 16, note_y + 20, f"up to {warps} rows per section", fill="muted")
    c.text(x1 - 16, note_y + 20, f"… {units - sections_drawn} more", anchor="end", fill="muted")
    # the announcer: launches go from the office to the stadium
    ya = top + box_h + 26
    c.text(x0, ya, "Announcer = kernel launch:", bold=True)
    c.text(x0, ya + 20, "the office calls, every row starts", fill="muted")
    c.height = ya + 30
    return c


# ------------------------------------------------------------------ 2. Little's law

def littles_law(device: str = "h200", latencies_ns: tuple = (300, 500, 700), assumed_ns: int = 500,
                bytes_per_lane: int = 4, loads_per_thread: int = 2, stores_per_thread: int = 1) -> Canvas:
    """Bytes in flight = bandwidth x latency, as the area of a rectangle drawn to scale, and what it means
    per warp at full occupancy: 128-byte requests (one 4-byte float per lane), split as a vector add's
    traffic is, into the loads a warp waits for and the stores it does not."""
    hbm = hardware.value(device, "hbm_bw")
    lanes = int(hardware.value(device, "lanes"))
    warps = int(hardware.value(device, "units") * hardware.value(device, "max_warps_per_unit"))
    warp_load = lanes * bytes_per_lane
    lats = sorted(latencies_ns)

    c = Canvas(W, 600)
    # top: the rectangle B x L
    left, right, ytop, ybot = 70, W - 24, 60, 250
    sx = Scale(0, max(lats) * 1.1, left, right)
    sy = Scale(0, hbm / 1e12 * 1.15, ybot, ytop)
    c.text(20, 26, "bytes in flight = bandwidth × latency", bold=True, size=16)
    top_y = sy(hbm / 1e12)
    for lat in sorted(lats, key=lambda v: v != assumed_ns):  # the assumed latency first, filled
        inflight = hbm * lat * 1e-9
        x = sx(lat)
        tip = f"{lat} ns × {hbm / 1e12:.3g} TB/s = {_bytes(inflight)}"
        if lat == assumed_ns:
            c.rect(left, top_y, x - left, ybot - top_y, fill="s1", title=tip)
            lx = (left + sx(min(lats))) / 2
            c.text(lx, (ybot + top_y) / 2 - 10, _bytes(inflight), anchor="middle",
                   fill="bg", bold=True, size=20, middle=True)
            c.text(lx, (ybot + top_y) / 2 + 16, "in flight", anchor="middle",
                   fill="bg", middle=True, size=15)
        else:
            inside = lat < assumed_ns
            c.rect(left, top_y, x - left, ybot - top_y, fill="none", stroke="bg" if inside else "s1",
                   width=2, title=tip)
            c.text(x - 4, top_y - 8, _bytes(inflight), anchor="end", fill="muted")
    axis_x(c, sx, ybot, "latency L (ns)", ticks=[0] + lats)
    axis_y(c, sy, left, "B (TB/s)", ticks=[0, hbm / 1e12], fmt=lambda v: f"{v:.3g}")

    # bottom: the 128-byte requests each warp must keep outstanding, loads and stores in a vector add's ratio
    top2 = 350
    c.text(20, top2, f"{warp_load}-byte requests in flight per warp", bold=True, size=15)
    c.text(20, top2 + 20, f"{warps:,} warps resident; a vector add: {loads_per_thread} loads, "
           f"{stores_per_thread} store", fill="muted")
    read_share = loads_per_thread / (loads_per_thread + stores_per_thread)
    per_warp = {lat: hbm * lat * 1e-9 / warp_load / warps for lat in lats}
    bx0, bx1 = 110, W - 60
    hi = math.ceil(max(max(per_warp.values()), loads_per_thread) + 0.5)
    sb = Scale(0, hi, bx0, bx1)
    xv = sb(loads_per_thread)
    c.text(xv, top2 + 48, f"{loads_per_thread} loads issued", anchor="middle", fill="bad", bold=True)
    y = top2 + 62
    bar_h = 26
    for lat in lats:
        total = per_warp[lat]
        loads, stores = total * read_share, total * (1 - read_share)
        main = lat == assumed_ns
        col, edge = ("s1", "s1") if main else ("grid", "muted")
        c.text(bx0 - 8, y + bar_h / 2, f"{lat} ns", anchor="end", middle=True, bold=main)
        c.rect(bx0, y, sb(loads) - bx0, bar_h, fill=col, title=f"{lat} ns: {loads:.2f} loads per warp")
        c.rect(sb(loads), y + 1, sb(total) - sb(loads), bar_h - 2, fill="bg", stroke=edge, width=2,
               title=f"{lat} ns: {stores:.2f} stores per warp")
        c.text(bx0 + 6, y + bar_h / 2, f"{loads:.1f}", middle=True, fill="bg" if main else "fg", bold=True)
        c.text(sb(total) + 6, y + bar_h / 2, f"{total:.1f}", middle=True, bold=main)
        y += bar_h + 10
    axis_x(c, sb, y + 4, "requests in flight per warp", ticks=list(range(0, hi + 1)), fmt=lambda v: f"{v:g}")
    c.line(xv, top2 + 54, xv, y + 4, stroke="bad", width=2, dash="5 4")
    # legend: what the two parts of a bar are
    ly = y + 70
    c.rect(20, ly - 8, 16, 16, fill="s1")
    c.text(44, ly, "loads: the warp waits", middle=True)
    c.rect(280, ly - 7, 16, 14, fill="bg", stroke="s1", width=2)
    c.text(304, ly, "stores: no one waits", middle=True)
    c.height = ly + 18
    return c


# ------------------------------------------------------------------ 3. the program's timeline, to scale

_PHASES = (  # (key, label, colour)
    ("context", "context", "s4"),
    ("alloc", "allocate", "s5"),
    ("h2d", "copy in", "s1"),
    ("kernel", "kernel", "fg"),  # dark (light in dark mode): far from both copies' colours
    ("d2h", "copy out", "s2"),
)


# section 2's bound: no context to create, no allocation, pinned copies at the link's peak, no launch cost
BEST_CASE = {"log2_n": 24, "context": "reuse", "host_memory": "pinned", "alloc_us": 0, "launch_us": 0}


def phases(inputs: dict) -> list[tuple[str, float]]:
    """The model's terms in program order; the copies split as the bytes do (two vectors in, one out)."""
    r = where_time_goes.compute(inputs)
    return [("context", r["context_s"]), ("alloc", r["alloc_s"]), ("h2d", r["copies_s"] * 2 / 3),
            ("kernel", r["kernel_s"]), ("d2h", r["copies_s"] / 3)]


def _scenario_text(inputs: dict) -> str:
    v = where_time_goes.compute(inputs)["inputs"]
    parts = [f"n = {_pow2(v['log2_n'])}", "new context" if v["context"] == "create" else "warm context",
             f"{v['host_memory']} copies"]
    if v["alloc_us"] == 0:
        parts.append("no allocation")
    if v["launch_us"] == 0:
        parts.append("no launch cost")
    return ", ".join(parts)


def _bar(c: Canvas, y: float, segs: list[tuple[str, float]], x0: float, x1: float, h: float,
         name: str) -> dict[str, tuple[float, float]]:
    """One to-scale bar; returns each phase's (x start, x end)."""
    total = sum(t for _, t in segs)
    colour = {k: col for k, _, col in _PHASES}
    label = {k: lab for k, lab, _ in _PHASES}
    pos, x = {}, x0
    for key, t in segs:
        w = (x1 - x0) * t / total if total else 0
        pos[key] = (x, x + w)
        if t > 0:
            c.rect(x, y, w, h, fill=colour[key], title=f"{name}: {label[key]} {_ms(t)}")
        x += w
    c.rect(x0, y, x1 - x0, h, fill="none", stroke="fg", width=1)
    return pos


def timeline(first: dict | None = None, best: dict | None = None) -> Canvas:
    """Two runs of the vector-add program, each drawn to scale from where_time_goes.compute: the player's
    first run (with a zoom into the part after context creation) and section 2's best case."""
    first = dict(first if first is not None else {})
    best = dict(best if best is not None else BEST_CASE)
    x0, x1 = 20, W - 20
    c = Canvas(W, 800)
    label = {k: lab for k, lab, _ in _PHASES}

    def caption_block(y: float, title: str, inputs: dict, total: float) -> float:
        c.text(x0, y, f"{title}: {_ms(total)}", bold=True, size=16)
        for i, ln in enumerate(wrap(_scenario_text(inputs), 62)):
            c.text(x0, y + 20 + 18 * i, ln, fill="muted")
        return y + 20 + 18 * len(wrap(_scenario_text(inputs), 62)) + 6

    def kernel_callout(pos, y_bar, h, share, t):
        kx = (pos["kernel"][0] + pos["kernel"][1]) / 2
        c.line(kx, y_bar + h + 34, kx, y_bar + h + 3, stroke="fg", width=2, arrow=True)
        s = f"kernel {_ms(t)}: {_pct(share)} of the run"
        anchor = "middle"
        tx = kx
        if kx + _tw(s) / 2 > x1:
            anchor, tx = "end", min(kx + 20, x1)
        elif kx - _tw(s) / 2 < x0:
            anchor, tx = "start", max(kx - 20, x0)
        c.text(tx, y_bar + h + 52, s, anchor=anchor, fill="fg", bold=True)

    def seg_labels(pos, segs, y, h, skip=("kernel",)):
        for key, t in segs:
            a, b = pos[key]
            if key in skip or t <= 0:
                continue
            lab1, lab2 = label[key], _ms(t)
            if b - a >= max(_tw(lab1), _tw(lab2)) + 8:
                c.text((a + b) / 2, y + h / 2 - 9, lab1, anchor="middle", middle=True, fill="bg", bold=True)
                c.text((a + b) / 2, y + h / 2 + 10, lab2, anchor="middle", middle=True, fill="bg")

    # ---- the first run, whole
    segs = phases(first)
    r1 = where_time_goes.compute(first)
    y = caption_block(26, "First run", first, r1["total_s"])
    h = 46
    pos = _bar(c, y, segs, x0, x1, h, "first run")
    seg_labels(pos, segs, y, h)
    # zoom: everything after context creation
    z0 = pos["alloc"][0]
    zy = y + h + 70
    rest = [(k, t) for k, t in segs if k != "context"]
    c.polygon([(z0, y + h), (x1, y + h), (x1, zy), (x0, zy)], fill="grid")
    c.text(x0, y + h + 40, f"after the context, zoomed {r1['total_s'] / sum(t for _, t in rest):.0f}×:",
           fill="muted")
    zpos = _bar(c, zy, rest, x0, x1, h, "first run, zoomed")
    seg_labels(zpos, rest, zy, h)
    kernel_callout(zpos, zy, h, r1["kernel_share"], r1["kernel_s"])

    # ---- section 2's best case
    segs_b = phases(best)
    r2 = where_time_goes.compute(best)
    yb = caption_block(zy + h + 104, "Best case", best, r2["total_s"])
    pos_b = _bar(c, yb, segs_b, x0, x1, h, "best case")
    seg_labels(pos_b, segs_b, yb, h)
    kernel_callout(pos_b, yb, h, r2["kernel_share"], r2["kernel_s"])

    # legend
    ly = yb + h + 90
    lx = x0
    for key, lab, col in _PHASES:
        wdt = 22 + _tw(lab) + 18
        if lx + wdt > x1:
            lx, ly = x0, ly + 24
        c.rect(lx, ly - 7, 14, 14, fill=col)
        c.text(lx + 20, ly, lab, middle=True)
        lx += wdt
    c.height = ly + 22
    return c


# ------------------------------------------------------------------ 4. grid, block, warp, wavefront

def hierarchy(n_log2: int = 24, block: int = 256, nvidia: str = "h200", amd: str = "mi300x",
              blocks_drawn: int = 12) -> Canvas:
    """A grid of ceil(n/block) blocks; one block of `block` threads, grouped into warps of 32 lanes on
    Hopper and wavefronts of 64 lanes on CDNA 3 (lane widths from hardware.py)."""
    n = 2 ** n_log2
    blocks = -(-n // block)
    warp = int(hardware.value(nvidia, "lanes"))
    wave = int(hardware.value(amd, "lanes"))
    x0, x1 = 20, W - 20
    c = Canvas(W, 700)

    c.text(x0, 24, f"Grid: {blocks:,} blocks (n = {_pow2(n_log2)})", bold=True, size=16)
    c.text(x0, 44, "run in any order, as many at once as fit", fill="muted")
    bw = (x1 - x0 - 40) / blocks_drawn
    for k in range(blocks_drawn):
        c.rect(x0 + k * bw, 58, bw - 4, 26, fill="s1" if k == 0 else "grid", rx=3,
               title=f"block {k}")
    c.text(x1 - 18, 76, "…", anchor="middle", bold=True, size=18)
    top = 130
    c.polygon([(x0, 84), (x0 + bw - 4, 84), (x1, top - 8), (x0, top - 8)], fill="grid")

    def group_panel(y: float, title: str, sub: str, width_lanes: int, word: str, colour: str) -> float:
        c.text(x0, y, title, bold=True, size=16)
        c.text(x0, y + 20, sub, fill="muted")
        rows = block // width_lanes
        gx0 = x0 + 110
        cell = (x1 - gx0) / width_lanes
        ry = y + 34
        rh = 18
        for r in range(rows):
            for i in range(width_lanes):
                c.rect(gx0 + i * cell, ry + r * (rh + 4), max(cell - 1, 1), rh, fill=colour,
                       title=f"{word} {r}, lane {i}: thread {r * width_lanes + i}")
            if r in (0, rows - 1):
                c.text(gx0 - 8, ry + r * (rh + 4) + rh / 2, f"{word} {r}", anchor="end", middle=True)
        c.text(gx0 - 8, ry + (rows // 2) * (rh + 4) - 2, "⋮", anchor="end", middle=True, fill="muted")
        yl = ry + rows * (rh + 4) + 16
        c.text(gx0, yl, "lane 0", fill="muted")
        c.text(x1, yl, f"lane {width_lanes - 1}", anchor="end", fill="muted")
        return yl + 40

    c.text(x0, top + 6, f"One block: {block} threads on one SM (one CU)", bold=True, size=16)
    y = group_panel(top + 46, f"NVIDIA Hopper: {block // warp} warps of {warp}",
                    "each warp runs one instruction at a time", warp, "warp", "s1")
    y = group_panel(y, f"AMD CDNA 3: {block // wave} wavefronts of {wave}",
                    "the same 256 threads, in wider groups", wave, "wave", "s2")
    c.height = y - 14
    return c
