"""Concept figures of module A06, matrix multiply from scratch.

What they show is computed by ``models/sgemm_ladder.py`` (the ladder of the lab, counted) and
``models/gemm_tiling.py`` (the "GEMM tiling" player); every bar and label carries a tooltip with the
number it stands for, so the tests can check the drawing against the models.
"""

from __future__ import annotations

from ..models import gemm_tiling, sgemm_ladder
from ..render.svg import Canvas, Scale

W = 560


def fetches_per_element(tile: int, n: int) -> int:
    """How many times one element of A is fetched from global memory when C (n wide) is cut into tiles
    `tile` wide: once per tile column, n / tile times (a naive kernel has tile 1)."""
    return -(-n // tile)


# ------------------------------------------------------------------ 1. the analogy: a bigger workbench

def workbench(n: int = 4096, tiles: tuple = (1, 32, 128)) -> Canvas:
    """The product C = A B drawn as a 8 x 8 grid of tiles: one tile of C needs a strip of rows of A and a
    strip of columns of B. Beside it, how often each number of A is fetched for tile widths 1, 32, 128."""
    c = Canvas(W, 400)
    g, cell = 8, 14  # each matrix drawn as 8 x 8 blocks
    ax, x0, by, y0 = 24, 150, 50, 178  # A's left edge, C's left edge, B's top, C's (and A's) top
    c.text(24, 26, "One tile of C needs a strip of A and a strip of B", bold=True, size=16)
    for i in range(g):
        for j in range(g):
            hot = i == 2 and j == 5
            # a tooltip only where it says something: the tile and its strips (keeps the page light)
            c.rect(x0 + j * cell, y0 + i * cell, cell - 1, cell - 1, fill="s1" if hot else "grid",
                   title=f"C tile ({i}, {j}): the tile being built" if hot else None)
    for i in range(g):
        for k in range(g):
            c.rect(ax + k * cell, y0 + i * cell, cell - 1, cell - 1, fill="s2" if i == 2 else "bg", stroke="muted",
                   title=f"A block ({i}, {k}): in the strip" if i == 2 else None)
    for k in range(g):
        for j in range(g):
            c.rect(x0 + j * cell, by + k * cell, cell - 1, cell - 1, fill="s3" if j == 5 else "bg", stroke="muted",
                   title=f"B block ({k}, {j}): in the strip" if j == 5 else None)
    c.text(ax + g * cell / 2, y0 + g * cell + 22, "A", anchor="middle", bold=True)
    c.text(x0 + g * cell + 10, by + g * cell / 2, "B", middle=True, bold=True)
    c.text(x0 + g * cell / 2, y0 + g * cell + 22, "C", anchor="middle", bold=True)
    c.text(24, 350, "The strip of A is reused for every column of C in the tile,", fill="muted")
    c.text(24, 372, "the strip of B for every row: wider tiles, fewer trips.", fill="muted")
    # right: trips per number of A, log bars
    px, pw, py = 300, 170, 62
    c.text(px, py, "Trips per number of A", bold=True)
    c.text(px, py + 20, f"(C is {n:,} columns wide)", fill="muted")
    counts = [fetches_per_element(t, n) for t in tiles]
    s = Scale(1, max(counts), 0, pw, log=True)
    for r, (t, f) in enumerate(zip(tiles, counts)):
        y = py + 48 + r * 58
        label = "no tile (naive)" if t == 1 else f"tile {t} wide"
        c.text(px, y, label)
        c.rect(px, y + 10, max(s(f), 4), 20, fill="warn" if t == 1 else "s1", rx=2, title=f"{label}: {f:,} trips")
        c.text(px + max(s(f), 4) + 6, y + 20, f"{f:,}", middle=True)
    return c


# ------------------------------------------------------------------ 2. intensity of each step

def intensity_ladder(devices: tuple = ("h200", "mi300x")) -> Canvas:
    """Each step's FLOP per byte requested from global memory (log scale), with the FP32 ridge points."""
    steps = sgemm_ladder.STEPS
    x0, x1, y0, row = 196, 520, 96, 34
    c = Canvas(W, y0 + row * len(steps) + 106)
    c.text(24, 26, "FLOP per byte of global traffic, each step", bold=True, size=16)
    s = Scale(0.1, 100, x0, x1, log=True)
    for v in (0.1, 1, 10, 100):
        c.line(s(v), y0 - 8, s(v), y0 + row * len(steps), stroke="grid")
        c.text(s(v), y0 + row * len(steps) + 20, f"{v:g}", anchor="middle", fill="muted")
    c.text((x0 + x1) / 2, y0 + row * len(steps) + 42, "FLOP per byte (log scale)", anchor="middle")
    for i, st in enumerate(steps):
        y = y0 + i * row
        val = sgemm_ladder.global_intensity(st)
        c.text(x0 - 10, y + 12, st.name, anchor="end", middle=True, mono=True)
        c.rect(x0, y + 2, s(val) - x0, 20, fill="s1", rx=2, title=f"{st.name}: {val:g} FLOP/byte")
        c.text(s(val) + 6, y + 12, f"{val:g}", middle=True)
    yb = y0 + row * len(steps)
    for d, style in zip(devices, ("bad", "warn")):
        r = sgemm_ladder.ridge(d)
        c.line(s(r), y0 - (52 if d == devices[0] else 32), s(r), yb, stroke=style, width=2, dash="6 4")
        name = "H200" if d == "h200" else "MI300X"
        c.text(s(r) - 6, y0 - (38 if d == devices[0] else 18), f"{name} ridge {r:.1f}", anchor="end", fill=style)
    c.text(24, yb + 70, "Right of a ridge, a kernel can be compute-bound", fill="muted")
    c.text(24, yb + 92, "even if every byte it requests came from HBM.", fill="muted")
    return c


# ------------------------------------------------------------------ 3. register blocking: an outer product

def outer_product(shapes: tuple = ((1, 1), (8, 1), (8, 8))) -> Canvas:
    """A thread's TM x TN block: per k it reads TM values of A and TN of B and does TM TN multiply-adds,
    the outer product; below, the model's multiply-adds per shared-memory load instruction."""
    c = Canvas(W, 500)
    c.text(24, 26, "Per k, one thread: TM + TN reads, TM x TN multiply-adds", bold=True, size=16)
    cell = 13
    x = 24
    for tm, tn in shapes:
        y = 70
        # B row on top, A column on the left, products in the grid
        for j in range(tn):
            c.rect(x + 16 + j * cell, y, cell - 2, cell - 2, fill="s3", title=f"{tm} x {tn}: B value {j}")
        for i in range(tm):
            c.rect(x, y + 16 + i * cell, cell - 2, cell - 2, fill="s2", title=f"{tm} x {tn}: A value {i}")
            for j in range(tn):
                c.rect(x + 16 + j * cell, y + 16 + i * cell, cell - 2, cell - 2, fill="s1",
                       title=f"{tm} x {tn}: product ({i}, {j})")
        c.text(x, y + 16 + 8 * cell + 26, f"{tm} x {tn}", bold=True)
        c.text(x, y + 16 + 8 * cell + 48, f"{tm + tn} reads", fill="muted")
        c.text(x, y + 16 + 8 * cell + 70, f"{tm * tn} FMA", fill="muted")
        x += 16 + max(tn, 1) * cell + 70
    # the table: FMA per shared-load instruction, from the model
    y = 330
    c.text(24, y, "FMA per shared-memory load instruction", bold=True)
    rows = [("smem_tiled", "1 x 1"), ("reg_1d", "8 x 1"), ("reg_2d", "8 x 8"), ("vectorized", "8 x 8, float4")]
    for r, (name, what) in enumerate(rows):
        st = sgemm_ladder.step(name)
        f = sgemm_ladder.fma_per_shared_load(st)
        label = f"{f:.2f}".rstrip("0").rstrip(".")
        yy = y + 30 + r * 36
        c.text(24, yy, name, mono=True)
        c.text(150, yy, what, fill="muted")
        bar = 6 + 12 * f
        c.rect(300, yy - 11, bar, 20, fill="s1", rx=2, title=f"{name}: {label} FMA per load instruction")
        c.text(300 + bar + 6, yy, label, middle=True)
    return c


# ------------------------------------------------------------------ 4. double buffering

def pipeline(steps: int = 4, load: float = 1.0, compute: float = 1.5) -> Canvas:
    """One block's K-steps in time: with one buffer the loads and the FMAs take turns; with two, the load
    of step k + 1 runs under the FMAs of step k."""
    c = Canvas(W, 330)
    c.text(24, 26, f"One block, K-steps in time: load {load:g}, then FMAs {compute:g}", bold=True, size=16)
    single = steps * (load + compute)
    double = load + steps * max(load, compute)
    x0, x1 = 120, 536
    s = Scale(0, single, x0, x1)
    for r, (title, stages) in enumerate([("one buffer", 1), ("two buffers", 2)]):
        y = 70 + r * 120
        c.text(24, y + 14, title, bold=True)
        c.text(x0 - 8, y + 42, "memory", anchor="end", fill="muted", middle=True)
        c.text(x0 - 8, y + 72, "FMA units", anchor="end", fill="muted", middle=True)
        t = 0.0
        for k in range(steps):
            if stages == 1:
                ls, cs = t, t + load
                t = cs + compute
            else:
                ls = 0.0 if k == 0 else load + (k - 1) * max(load, compute)
                cs = load + k * max(load, compute)
            c.rect(s(ls), y + 32, s(ls + load) - s(ls) - 2, 20, fill="s3", rx=2,
                   title=f"{title}: load of K-step {k}, {ls:g} to {ls + load:g}")
            c.rect(s(cs), y + 62, s(cs + compute) - s(cs) - 2, 20, fill="s1", rx=2,
                   title=f"{title}: FMAs of K-step {k}, {cs:g} to {cs + compute:g}")
        end = single if stages == 1 else double
        c.line(s(end), y + 26, s(end), y + 90, stroke="fg", width=2)
        c.text(s(end) - 4, y + 104, f"done at {end:g}", anchor="end", fill="muted")
    c.text(24, 318, f"{steps} steps: {single:g} time units with one buffer, {double:g} with two.", fill="muted")
    return c


def tile_intensity_check(bm: int, bn: int) -> float:
    """The player's model of the same tile (fp32), for the tests: it must agree with sgemm_ladder."""
    return gemm_tiling.compute({"bm": bm, "bn": bn, "bytes_per_element": 4})["tile_intensity"]

