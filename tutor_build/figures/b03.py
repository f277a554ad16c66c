"""Concept figures of module B03, attention kernels.

Every count drawn comes from ``models/attention_io.py``: the bytes of each step of naive attention against
the bytes a tiled kernel must move, their growth with the sequence length, and the blocks of the score
matrix the causal Triton kernel visits with and without a mask. Each bar and cell carries a tooltip stating
what it is, so the tests can check that what is drawn is what the model computes.
"""

from __future__ import annotations

from ..models import attention_io as io
from ..render.svg import Canvas

W = 560


def _mib(x: float) -> str:
    return f"{x / 2**20:,.0f} MiB" if x >= 2**20 else f"{x / 2**10:,.0f} KiB"


# ------------------------------------------------------------------ 1. the analogy: sheets to the archive
def archive_trips(n: int = 4096, d: int = 64, b: int = 4) -> Canvas:
    """Top: the naive path, four trips of the n x n sheet of scores to the archive and back (write S, read S,
    write P, read P) beside the trips of the questions, cards and answers. Bottom: the tiled path, which only
    fetches the questions, cards and answers once and hands back the results."""
    kernels = io.naive_kernel_bytes(n, d, b)
    naive = io.naive_bytes(n, d, b)
    tiled = io.compulsory_bytes(n, d, b)
    c = Canvas(W, 300)
    x0, w = 20, W - 40
    c.text(x0, 22, f"Bytes to and from memory, one head, n = {n:,}, d = {d}, {8 * b}-bit", bold=True, size=15)
    # Naive: one segment per read or write of each kernel, widths to scale.
    y = 60
    c.text(x0, y - 8, f"Naive, the scores written down and fetched back: {_mib(naive)} in all", size=14)
    x = x0
    parts = [("naive_scores", "read", "read Q and K", "s3"), ("naive_scores", "write", "write S", "bad"),
             ("naive_softmax", "read", "read S", "bad"), ("naive_softmax", "write", "write P", "bad"),
             ("naive_pv", "read", "read P and V", "bad"), ("naive_pv", "write", "write O", "s3")]
    for kernel, way, label, fill in parts:
        nbytes = kernels[kernel][way]
        width = w * nbytes / naive
        c.rect(x, y, max(width, 1.0), 40, fill=fill, stroke="bg",
               title=f"naive: {kernel} {way}s {nbytes} bytes ({label})")
        if width > 70:
            c.text(x + width / 2, y + 25, label, anchor="middle", size=14, fill="bg")
        x += width
    # Tiled: the compulsory bytes, to the same scale.
    y = 170
    c.text(x0, y - 8, f"Scores kept on the desk: {_mib(tiled)}", size=14)
    c.rect(x0, y, max(w * tiled / naive, 2.0), 40, fill="good", title=f"tiled: {tiled} bytes (read Q, K, V, write O)")
    c.text(x0 + w * tiled / naive + 8, y + 25, "read Q, K, V once; write O once", size=14)
    c.text(x0, 250, f"The naive path moves {naive / tiled:,.0f} times the bytes; each S or P trip is", size=14,
           fill="muted")
    c.text(x0, 270, f"n x n x {b} bytes = {_mib(b * n * n)}, and there are four of them.", size=14, fill="muted")
    return c


# ------------------------------------------------------------------ 2. bytes against the sequence length
def bytes_vs_length(lengths: list[int] | None = None, d: int = 128, b: int = 2, sram_kib: float = 227) -> Canvas:
    """HBM bytes of one head for naive attention, for the tiled count with no cache (K and V re-read once per
    query block of the largest block that fits `sram_kib`), and for the compulsory bytes, on a log scale."""
    import math
    lengths = lengths or [1024, 2048, 4096, 8192, 16384]
    block = io.block_rows(d, sram_kib * 1024, b)
    series = [("naive", "bad", lambda n: io.naive_bytes(n, d, b)),
              (f"tiled, B = {block} rows, no cache", "warn", lambda n: io.tiled_bytes(n, d, b, block)),
              ("compulsory (Q, K, V, O once)", "good", lambda n: io.compulsory_bytes(n, d, b))]
    top = max(f(n) for _, _, f in series for n in lengths)
    low = min(f(n) for _, _, f in series for n in lengths)
    lo_exp, hi_exp = math.floor(math.log2(low)) - 1, math.ceil(math.log2(top))
    x0, y0, pw, ph = 80, 40, W - 100, 230
    c = Canvas(W, 390)
    c.text(20, 22, f"HBM bytes of one head, d = {d}, {8 * b}-bit, log scale", bold=True, size=15)

    def yv(v: float) -> float:
        return y0 + ph - ph * (math.log2(v) - lo_exp) / (hi_exp - lo_exp)

    for e in range(lo_exp, hi_exp + 1, 2):
        c.line(x0, yv(2**e), x0 + pw, yv(2**e), stroke="grid")
        c.text(x0 - 6, yv(2**e) + 5, _mib(2**e), anchor="end", size=14, fill="muted")
    group = pw / len(lengths)
    bar = group / (len(series) + 1)
    for i, n in enumerate(lengths):
        for k, (name, fill, f) in enumerate(series):
            v = f(n)
            x = x0 + i * group + (k + 0.5) * bar
            c.rect(x, yv(v), bar - 2, y0 + ph - yv(v), fill=fill, title=f"{name}: n = {n}: {v} bytes")
        c.text(x0 + i * group + group / 2, y0 + ph + 20, f"{n // 1024}K", anchor="middle", size=14)
    c.text(x0 + pw / 2, y0 + ph + 42, "sequence length n", anchor="middle", size=14)
    for k, (name, fill, _) in enumerate(series):
        yy = 340 + 20 * (k // 2)
        xx = 20 + 270 * (k % 2)
        c.rect(xx, yy - 11, 14, 14, fill=fill)
        c.text(xx + 20, yy + 1, name, size=14)
    return c


# ------------------------------------------------------------------ 3. the blocks a causal program visits
def causal_tiles(n: int = 1000, block_m: int = 128, block_n: int = 64) -> Canvas:
    """The score matrix in blocks of block_m query rows x block_n keys: the causal kernel visits the blocks below
    the diagonal without a mask, the blocks that cross the diagonal or the end of the sequence with one, and
    never the blocks above."""
    counts = io.causal_blocks(n, block_m, block_n)
    rows, cols = -(-n // block_m), -(-n // block_n)
    cw, ch = 340 / cols, 340 / rows  # a square of 340 units: each block as wide as its share of keys
    x0, y0 = 20, 50
    c = Canvas(W, 420)
    c.text(x0, 22, f"Causal, n = {n:,}: blocks of {block_m} queries x {block_n} keys", bold=True, size=15)
    for r in range(rows):
        start = r * block_m
        end = min(n, start + block_m)
        whole = start // block_n
        last = -(-end // block_n)
        for j in range(cols):
            if j < whole:
                kind, fill = "whole", "good"
            elif j < last:
                kind, fill = "masked", "warn"
            else:
                kind, fill = "skipped", "grid"
            c.rect(x0 + j * cw, y0 + r * ch, cw - 1, ch - 1, fill=fill,
                   title=f"query block {r}, key block {j}: {kind}")
    c.text(x0 + 170, y0 + 340 + 22, "keys →", anchor="middle", size=14)
    lx = x0 + 360
    for k, (kind, fill, words) in enumerate([("whole", "good", "no mask"), ("masked", "warn", "masked"),
                                             ("skipped", "grid", "never loaded")]):
        y = y0 + 20 + 60 * k
        c.rect(lx, y - 12, 16, 16, fill=fill)
        c.text(lx + 24, y + 2, f"{counts[kind]} {words}", size=14)
    c.text(lx, y0 + 210, f"of {counts['total']} blocks:", size=14, fill="muted")
    c.text(lx, y0 + 230, f"{(counts['whole'] + counts['masked']) / counts['total']:.0%} visited", size=14,
           fill="muted")
    return c
