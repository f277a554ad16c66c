"""Concept figures of module B01, fusion and memory-bound operators.

Every count drawn comes from ``models/fusion.py``: the trips of the kitchen analogy, the bytes per
element of an unfused and a fused chain, and the passes over a row of three softmax variants. Each
bar's tooltip states what it is, so the tests can check that what is drawn is what the model computes.
"""

from __future__ import annotations

from ..models import fusion
from ..render.svg import Canvas

W = 560


# ------------------------------------------------------------------ 1. the analogy: trips to the pantry
def pantry_trips(steps: int = 4) -> Canvas:
    """Top: a cook who carries the bowl back to the pantry after every step of a recipe. Bottom: a cook
    who keeps the bowl on the counter until the dish is done."""
    unfused = fusion.chain_bytes(steps, fused=False) // (2 * fusion.FLOAT)
    fused = fusion.chain_bytes(steps, fused=True) // (2 * fusion.FLOAT)
    c = Canvas(W, 330)
    x0, pantry_x, counter_x = 20, 60, 330
    for row, (label, trips, fill) in enumerate(
            [("Back to the pantry after every step", unfused, "bad"),
             ("Bowl stays on the counter", fused, "good")]):
        y = 30 + row * 150
        c.text(x0, y, f"{label}: {trips} round trip{'s' if trips > 1 else ''} for {steps} steps", bold=True, size=15)
        c.rect(pantry_x - 40, y + 20, 80, 90, fill="s3", rx=4, title="the pantry: far, large, slow to reach")
        c.text(pantry_x, y + 70, "pantry", anchor="middle", size=14)
        c.rect(counter_x, y + 40, 200, 50, fill="s2", rx=4, title="the counter: near, small, fast")
        c.text(counter_x + 100, y + 70, "counter", anchor="middle", size=14)
        for t in range(trips):
            yy = y + 30 + t * (70 / max(trips, 1))
            c.line(pantry_x + 42, yy, counter_x - 4, yy, stroke=fill, width=2, arrow=True)
            c.rect(pantry_x + 42, yy - 3, counter_x - pantry_x - 46, 6, fill="none",
                   title=f"{label.lower()}: trip {t + 1} of {trips}")
        for s in range(steps):
            c.circle(counter_x + 25 + s * 50, y + 100, 7, fill="s1", title=f"step {s + 1} of the recipe")
    return c


# ------------------------------------------------------------------ 2. bytes of a chain, unfused and fused
def chain_bytes(lengths: list[int] | None = None) -> Canvas:
    """Bytes per element moved by a chain of k elementwise operations, one bar per variant and k."""
    lengths = lengths or [1, 2, 4, 8]
    top = max(fusion.chain_bytes(k, fused=False) for k in lengths)
    x0, label_w = 20, 120
    width = W - x0 - label_w - 60
    c = Canvas(W, 50 + len(lengths) * 62)
    c.text(x0, 22, "Bytes moved per element (float32)", bold=True, size=15)
    y = 44
    for k in lengths:
        for fused in (False, True):
            b = fusion.chain_bytes(k, fused=fused)
            name = f"k = {k}, " + ("fused" if fused else "unfused")
            c.text(x0, y + 15, name, size=14, fill="fg" if fused else "muted")
            c.rect(x0 + label_w, y + 2, width * b / top, 18, fill="good" if fused else "bad",
                   title=f"{name}: {b} bytes per element")
            c.text(x0 + label_w + width * b / top + 6, y + 16, f"{b} B", size=14)
            y += 26
        y += 10
    return c


# ------------------------------------------------------------------ 3. passes over a row of softmax
def softmax_passes() -> Canvas:
    """Three ways to compute a row's softmax, drawn as the passes each makes over the row in memory."""
    variants = [("three_pass", "three passes: max, sum, write"),
                ("online", "online: max and sum together, then write"),
                ("one_pass", "one pass: row held on chip")]
    c = Canvas(W, 60 + len(variants) * 80)
    x0 = 20
    c.text(x0, 22, "Passes over one row: reads (blue) and writes (orange)", bold=True, size=15)
    y = 46
    cell = 60
    for key, label in variants:
        reads, writes = fusion.SOFTMAX_PASSES[key]
        b = fusion.softmax_bytes(key)
        c.text(x0, y + 14, f"{label}: {b} bytes an element", size=14)
        for i in range(reads):
            c.rect(x0 + i * (cell + 6), y + 24, cell, 24, fill="s1", title=f"{key}: read pass {i + 1} of {reads}")
            c.text(x0 + i * (cell + 6) + cell / 2, y + 41, "read", anchor="middle", size=14)
        for j in range(writes):
            xx = x0 + (reads + j) * (cell + 6)
            c.rect(xx, y + 24, cell, 24, fill="s2", title=f"{key}: write pass {j + 1} of {writes}")
            c.text(xx + cell / 2, y + 41, "write", anchor="middle", size=14)
        y += 80
    return c
