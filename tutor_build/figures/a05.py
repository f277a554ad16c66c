"""Concept figures of module A05, reductions, scans and atomics.

Every count drawn comes from ``models/reduction.py``: the serial additions of one address against the
rounds of a tree, the offsets of the shuffle-down loop for 32 and 64 lanes, and the toy-clock look-back
whose tile states the third figure shows. Each shape's tooltip says what it is, so the tests can check
that what is drawn is what the model computes.
"""

from __future__ import annotations

from ..models import reduction
from ..render.svg import Canvas

W = 560


# ------------------------------------------------------------------ 1. the analogy: one teacher, or pairs
def classroom(students: int = 16) -> Canvas:
    """Left: every student calls a score to one teacher, who adds them one at a time. Right: neighbours
    add in pairs, round after round, until one student holds the total."""
    serial = reduction.one_address_serial(students)
    rounds = reduction.tree_rounds(students)
    c = Canvas(W, 430)
    x0 = 20
    slot = (W - x0 - 96) / students  # the right margin holds the round labels
    # top: one teacher
    c.text(x0, 24, f"Everyone calls one teacher: {serial} additions, one after another", bold=True, size=15)
    ty = 64
    mid = x0 + students * slot / 2
    c.rect(mid - 40, ty - 18, 80, 30, fill="warn", rx=4, title="the teacher: one adder, one total")
    c.text(mid, ty + 2, "teacher", anchor="middle", size=14)
    sy = 150
    for i in range(students):
        x = x0 + (i + 0.5) * slot
        c.line(x, sy - 8, mid, ty + 14, stroke="muted", width=1)
        c.circle(x, sy, 7, fill="s3", title=f"student {i}: waits for a turn")
    c.text(x0, sy + 34, "the calls queue up: the last one waits for all the others", fill="muted", size=14)
    # bottom: pairwise rounds
    by = 220
    c.text(x0, by, f"Pairs add in rounds: {rounds} rounds for {students} scores", bold=True, size=15)
    y = by + 30
    step = (430 - 24 - y) / rounds
    alive = list(range(students))
    for r in range(rounds + 1):
        yy = y + r * step
        for i in alive:
            c.circle(x0 + (i + 0.5) * slot, yy, 7, fill="s1" if r == rounds else "s3",
                     title=f"round {r}: student {i} holds a partial sum" if r else f"student {i}: one score")
        if r < rounds:
            c.text(W - x0, yy + step / 2 + 5, f"round {r + 1}", anchor="end", fill="muted", size=14)
            nxt = alive[0::2]
            for a, b in zip(alive[0::2], alive[1::2]):
                xa, xb = x0 + (a + 0.5) * slot, x0 + (b + 0.5) * slot
                c.line(xb, yy + 7, xa + 3, yy + step - 8, stroke="s2", width=1.5)
                c.line(xa, yy + 7, xa, yy + step - 8, stroke="s2", width=1.5)
            alive = nxt
    return c


# ------------------------------------------------------------------ 2. shuffle trees: 32 lanes, 64 lanes
def shuffle_trees(lanes: list[int] | None = None) -> Canvas:
    """One row per step of the shuffle-down loop. In the row of offset d, lanes below d (filled) add the
    value of lane + d; the other lanes compute sums nobody reads (outlined)."""
    lanes = lanes or [32, 64]
    x0, lab = 16, 92
    width = W - x0 - lab - 8
    rows = sum(reduction.tree_steps(n) for n in lanes)
    c = Canvas(W, 40 + rows * 30 + len(lanes) * 54)
    y = 22
    for n in lanes:
        offsets = reduction.shuffle_offsets(n)
        c.text(x0, y, f"{n} lanes: {len(offsets)} steps (log2 {n} = {len(offsets)})", bold=True, size=15)
        y += 18
        cell = width / n
        for d, pairs in zip(offsets, reduction.shuffle_tree(n)):
            c.text(x0, y + 15, f"offset {d}", size=14, fill="muted")
            for lane in range(n):
                useful = lane < d
                c.rect(lab + lane * cell, y + 2, max(cell - 1, 1), 18, fill="s1" if useful else "none",
                       stroke="none" if useful else "grid",
                       title=f"{n} lanes, offset {d}, lane {lane}: " + (
                           f"adds lane {lane + d}" if useful else "adds a value nobody reads"))
            y += 26
            assert len(pairs) == d
        c.text(x0, y + 12, f"lane 0 holds the sum after {len(offsets)} steps", size=14, fill="muted")
        y += 36
    return c


# ------------------------------------------------------------------ 3. decoupled look-back: tile states
def lookback_states(tiles: int = 16, time: float = 12.0, focus: int = 12, stagger: float = 0.5,
                    work: float = 6.0, read: float = 1.5) -> Canvas:
    """A snapshot of the tile words of a single-pass scan at one instant of the toy clock, and the walk of
    one tile: the predecessors it reads, nearest first, until one holds an inclusive prefix."""
    sim = reduction.lookback(tiles, stagger=stagger, work=work, read=read)
    states = [reduction.status_at(t, time) for t in sim]
    x0 = 16
    cell = (W - 2 * x0) / tiles
    c = Canvas(W, 320)
    c.text(x0, 22, f"The tile words at one instant ({tiles} tiles)", bold=True, size=15)
    fills = {None: "grid", reduction.INVALID: "bg", reduction.AGGREGATE: "s2", reduction.PREFIX: "s1"}
    names = {None: "not started", reduction.INVALID: "running, nothing published",
             reduction.AGGREGATE: "aggregate: its own total", reduction.PREFIX: "inclusive prefix: tiles 0 to t"}
    y = 44
    for t, st in enumerate(states):
        c.rect(x0 + t * cell + 1, y, cell - 2, 40, fill=fills[st], stroke="fg" if st == reduction.INVALID else "none",
               rx=3, title=f"tile {t}: {names[st]}")
        c.text(x0 + (t + 0.5) * cell, y + 26, str(t), anchor="middle", size=14)
    # the walk of `focus`: predecessors focus-1, focus-2, ... as many as it read
    reads = sim[focus].reads
    walk = list(range(focus - 1, focus - 1 - reads, -1))
    yw = y + 64
    fx = x0 + (focus + 0.5) * cell
    c.text(x0, yw + 20, f"tile {focus} reads {reads} words back, nearest first:", size=14)
    prev = fx
    for k, j in enumerate(walk):
        jx = x0 + (j + 0.5) * cell
        c.line(prev, y + 44 + 6 * (k + 1), jx, y + 44 + 6 * (k + 1), stroke="s4", width=2, arrow=True)
        prev = jx
    # the reads come after the instant drawn: the last word read may hold its prefix only by then
    last = walk[-1] if walk else None
    if last is not None and states[last] != reduction.PREFIX:
        notes = [f"the reads come after this instant: tile {last}, drawn as it is now,",
                 "holds its inclusive prefix by the time it is read, which ends the walk"]
    else:
        notes = ["adding aggregates until an inclusive prefix ends the walk"]
    for k, note in enumerate(notes):
        c.text(x0, yw + 44 + 20 * k, note, size=14, fill="muted")
    # legend
    ly = yw + 78 + 20 * (len(notes) - 1)
    for k, st in enumerate((reduction.PREFIX, reduction.AGGREGATE, reduction.INVALID, None)):
        lx = x0 + (k % 2) * 270
        yy = ly + (k // 2) * 28
        c.rect(lx, yy, 18, 18, fill=fills[st], stroke="fg" if st == reduction.INVALID else "none", rx=3,
               title=names[st])
        c.text(lx + 26, yy + 14, names[st], size=14)
    return c
