"""Figures of module B07 (sharding): pipeline schedules, activations in flight, tensor parallelism.

Every schedule drawn here is the one tutor_build.models.pipeline simulates (the same code the
pipeline-schedules player and the claims test use): the bars are its timeline, the memory strips its
in-flight count over time, the peaks its ``peak_in_flight``.
"""

from __future__ import annotations

from fractions import Fraction

from ..models import pipeline as pp
from ..render.svg import Canvas, Scale, axis_x, axis_y, wrap

NAMES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved 1F1B"}


def _frac(q: Fraction) -> str:
    """A fraction for a label: 1, 3/4, 11/8."""
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def in_flight_steps(device: tuple[pp.Slot, ...]) -> list[tuple[float, int]]:
    """(time, chunk activations alive from then on) for one device: a forward's activations exist from its
    start, a backward frees them at its end. The maximum is the model's peak_in_flight for the device."""
    events = sorted([(s.start, 1) for s in device if s.kind == "F"] + [(s.end, -1) for s in device if s.kind == "B"],
                    key=lambda e: (e[0], -e[1]))
    steps, alive = [(0.0, 0)], 0
    for t, d in events:
        alive += d
        if steps[-1][0] == t:
            steps[-1] = (t, alive)
        else:
            steps.append((t, alive))
    return steps


def _legend(c: Canvas, y: float, interleaved: bool) -> float:
    x = 8
    items = [("s1", "forward"), ("s2", "backward"), ("s4", "activations held")]
    for fill, label in items:
        c.rect(x, y - 11, 16, 16, fill=fill, rx=2)
        c.text(x + 22, y + 2, label)
        x += 22 + len(label) * 7.6 + 18
    c.line(x, y - 3, x + 22, y - 3, stroke="fg", width=1.5, dash="5 3")
    c.text(x + 28, y + 2, "L·a")
    y += 24
    if interleaved:
        # the second chunk: an outline in the series colour on the page background (no opacity, so it reads
        # the same in light and dark, and never looks like the grey idle track)
        c.rect(9, y - 10, 14, 14, fill="bg", stroke="s1", width=2, rx=2)
        c.rect(31, y - 10, 14, 14, fill="bg", stroke="s2", width=2, rx=2)
        c.text(52, y + 2, "outlined: the device's second chunk of layers")
        y += 24
    return y


def _panel(c: Canvas, r: pp.Result, y: float, tx: Scale, mem_px: float, mem_top: float, note: str = "") -> float:
    """One schedule: a bar row and a memory strip per stage. Returns the y below it."""
    S, v = r.stages, r.virtual
    c.text(8, y, NAMES[r.schedule], bold=True, size=16)
    c.text(552, y, f"step {r.makespan:g}{note} · idle {r.bubble_fraction:.0%}", anchor="end", fill="muted")
    y += 12
    row_h, head, strip_h = 22, 18, mem_top * mem_px
    for s, device in enumerate(r.timeline):
        c.text(6, y + row_h / 2, f"s{s}", bold=True, middle=True)
        c.rect(tx.a, y, tx.b - tx.a, row_h, fill="grid")  # the empty track: the bubble shows as grey
        for slot in device:
            x0, x1 = tx(slot.start), tx(slot.end)
            fill = "s1" if slot.kind == "F" else "s2"
            kind = "forward" if slot.kind == "F" else "backward"
            chunk = f", chunk {slot.chunk}" if v > 1 else ""
            tip = f"stage {s}: {kind} of micro-batch {slot.micro}{chunk}, {slot.start:g} to {slot.end:g}"
            outlined = v > 1 and slot.chunk % 2 == 1
            if outlined:  # a 2-unit outline drawn inside the slot, so neighbouring slots stay apart
                c.rect(x0 + 1.5, y + 1, x1 - x0 - 3, row_h - 2, fill="bg", stroke=fill, width=2, title=tip)
            else:
                c.rect(x0, y, x1 - x0, row_h, fill=fill, stroke="bg", title=tip)
            c.text((x0 + x1) / 2, y + row_h / 2 + 1, str(slot.micro), anchor="middle", middle=True,
                   fill="fg" if outlined else "bg", bold=x1 - x0 >= 18)
        # memory strip: chunk activations alive, in units of one micro-batch through L/S layers
        top = y + row_h + 2
        base = top + head + strip_h
        steps = in_flight_steps(device)
        pts = [(tx(0), base)]
        for t, alive in steps:
            pts.append((tx(t), pts[-1][1]))
            pts.append((tx(t), base - alive / v * mem_px))
        pts.append((tx(r.makespan), pts[-1][1]))
        pts.append((tx(r.makespan), base))
        c.raw('<polygon class="fi-s4" data-stage="{}" points="{}"/>'.format(
            s, " ".join(f"{x:.2f},{yy:.2f}" for x, yy in pts)))
        c.line(tx.a, base, tx.b, base, stroke="muted")
        ref = base - S * mem_px
        c.line(tx.a, ref, tx.b, ref, stroke="fg", width=1.5, dash="5 3")
        # the peak, written over the middle of its first plateau
        peak_chunks = r.peak_in_flight[s]
        i = next(k for k, (_, a) in enumerate(steps) if a == peak_chunks)
        t0 = steps[i][0]
        t1 = steps[i + 1][0] if i + 1 < len(steps) else r.makespan
        peak = Fraction(peak_chunks, S * v)
        label = "L·a" if peak == 1 else f"{_frac(peak)} L·a"
        xm = min(max((tx(t0) + tx(t1)) / 2, tx.a + 40), tx.b - 40)
        c.text(xm, min(ref, base - peak_chunks / v * mem_px) - 5, label, anchor="middle", bold=peak >= 1,
               fill="fg")
        y = base + 10
    return y


def schedules(schedules: list[str], stages: int = 4, micro_batches: int = 8, virtual: int = 2,
              t_f: float = 1.0, t_b: float = 1.0) -> Canvas:
    """Gantt charts of the given schedules on one time scale, each stage with its activation strip below."""
    results = [pp.simulate(name, stages, micro_batches, virtual if name == "interleaved" else 1, t_f, t_b)
               for name in schedules]
    span = max(r.makespan for r in results)
    tx = Scale(0, span, 34, 552)
    mem_top = max(max(max(r.peak_in_flight) / r.virtual for r in results), stages)
    mem_px = min(6.0, 40 / mem_top)
    per_panel = 12 + stages * (22 + 2 + 18 + mem_top * mem_px + 10) + 56
    interleaved = "interleaved" in schedules
    c = Canvas(560, 30 + 24 * interleaved + len(results) * per_panel)
    y = _legend(c, 18, interleaved) + 12
    for r in results:
        note = ""
        if r.schedule == "interleaved" and len(results) == 1:
            plain = pp.simulate("1f1b", stages, micro_batches, 1, t_f, t_b)
            note = f" (1F1B: {plain.makespan:g})"
        y = _panel(c, r, y, tx, mem_px, mem_top, note)
        axis_x(c, tx, y - 4, "time, in forward slots of a whole stage", ticks=list(range(0, int(span) + 1, 2)))
        y += 56
    c.height = y - 6
    return c


# ----------------------------------------------------------------------------- the analogy


def benches(stages: int = 4, micro_batches: int = 8) -> Canvas:
    """Section 1: notebook pages on each baker's bench. A page covers the stretch of the recipe its baker
    does (1/S of it); a bench holds as many pages as the schedule keeps micro-batches in flight."""
    one = pp.simulate("1f1b", 1, micro_batches)
    line = pp.simulate("1f1b", stages, micro_batches)
    gpipe = pp.simulate("gpipe", stages, micro_batches)
    full = 120.0  # width of a page covering the whole recipe
    x0 = 130
    groups = [
        ("One baker, whole recipe", [one.peak_in_flight[0]], 1),
        ("Line of bakers, 1F1B", list(line.peak_in_flight), stages),
        ("Line, all cakes first (GPipe)", list(gpipe.peak_in_flight), stages),
    ]
    row = 34
    height = 14 + sum(30 + row * len(p) + 16 for _, p, _ in groups) + 40
    c = Canvas(560, height)
    y = 24
    for title, pages, split in groups:
        c.text(8, y, title, bold=True, size=16)
        y += 14
        for b, n in enumerate(pages):
            label = "baker" if split == 1 else f"baker {b + 1}"
            c.text(8, y + row / 2 - 2, label, middle=True)
            c.rect(x0 - 4, y + row - 8, 430, 5, fill="muted")  # the bench
            w = full / split
            for k in range(n):
                px = x0 + k * w
                what = "whole recipe" if split == 1 else f"steps {b * (40 // split) + 1}-{(b + 1) * (40 // split)}"
                c.rect(px + 1, y + 2, w - 2, row - 12, fill="s4", stroke="fg", rx=2,
                       title=f"{label}: page for cake {k + 1} ({what})")
            if n * w > 430 - 8:
                raise ValueError("pages overflow the bench")
            c.text(480, y + row / 2 - 2, f"{n} page{'s' if n != 1 else ''}", middle=True, fill="muted")
            y += row
        y += 16
    c.line(x0 + full, 30, x0 + full, y - 20, stroke="fg", dash="5 3", width=1.5)
    for i, s in enumerate(wrap("dashed: one whole-recipe page of bench space", 60)):
        c.text(8, y + 4 + i * 18, s, fill="muted")
    return c


# ----------------------------------------------------------------------------- bubble versus M


def bubble(stages: list[int], micro_batches: list[int], virtual: int = 2, target: float = 0.10) -> Canvas:
    """Idle share of the step, simulated, against the number of micro-batches (log axis)."""
    c = Canvas(560, 420)
    tx = Scale(min(micro_batches), max(micro_batches), 72, 540, log=True)
    ty = Scale(0, 1.0, 340, 40)
    axis_y(c, ty, 72, "idle share of the step", ticks=[0, 0.25, 0.5, 0.75, 1.0],
           fmt=lambda v: f"{v:.0%}", grid_to=540)
    axis_x(c, tx, 340, "micro-batches per step M", ticks=[m for m in micro_batches if m in (1, 2, 4, 8, 16, 32, 64)],
           fmt=lambda v: f"{v:g}")
    series = []
    for i, S in enumerate(stages):
        series.append((f"1F1B, S = {S}", "s1" if i == 0 else "s2", [(m, pp.simulate("1f1b", S, m).bubble_fraction)
                                                             for m in micro_batches], None))
    S = max(stages)
    # interleaving needs M to be a multiple of S: its curve starts at M = S
    inter = [(m, pp.simulate("interleaved", S, m, virtual).bubble_fraction) for m in micro_batches if m % S == 0]
    series.append((f"interleaved, S = {S}, v = {virtual}", "s3", inter, "6 4"))
    c.line(72, ty(target), 540, ty(target), stroke="muted", dash="3 3")
    c.text(80, ty(target) - 6, f"{target:.0%}", fill="muted")
    for label, colour, pts, dash in series:
        c.polyline([(tx(m), ty(f)) for m, f in pts], stroke=colour, width=2.5, dash=dash)
        for m, f in pts:
            c.circle(tx(m), ty(f), 3.5, fill=colour, title=f"{label}, M = {m}: {f:.1%} idle")
    f88 = pp.simulate("1f1b", S, S).bubble_fraction
    c.text(tx(S) + 8, ty(f88) - 8, f"{f88:.0%}", bold=True)
    # legend
    ly = 60
    for label, colour, pts, dash in series:
        c.line(330, ly, 354, ly, stroke=colour, width=2.5, dash=dash)
        c.text(360, ly, label, middle=True)
        ly += 22
    return c


# ----------------------------------------------------------------------------- tensor parallel MLP


def tp_mlp(h: int = 36, bs: int = 36) -> Canvas:
    """Megatron's MLP on two GPUs: A split by columns, B by rows, one all-reduce. Boxes are to scale: h is
    drawn `h` units, the b*s rows `bs` units (their true number is free)."""
    tp = 2
    four = 4 * h
    c = Canvas(560, 100)
    y = 10
    z_rows = []

    def box(x, y, w, hh, fill, tip, label, sub=None):
        c.rect(x, y, w, hh, fill=fill, stroke="fg", title=tip)
        c.text(x + w / 2, y + hh + 18, label, anchor="middle", bold=True)
        if sub:
            c.text(x + w / 2, y + hh + 36, sub, anchor="middle", fill="muted")

    for t in range(tp):
        g = t + 1
        c.text(8, y + 16, f"GPU {g}", bold=True, size=16)
        y += 30
        # row 1: X times the GPU's columns of A, then GeLU
        box(20, y, h, bs, "s3", f"X on GPU {g}: bs x h, the same on every GPU", "X")
        c.text(20 + h + 14, y + bs / 2, "×", anchor="middle", middle=True, size=18)
        ax = 20 + h + 28
        c.rect(ax, y, four, h, fill="grid", stroke="muted", title="A: h x 4h")
        c.rect(ax + t * four / tp, y, four / tp, h, fill="s1", stroke="fg", title=f"A{g}: columns {g} of {tp} of A, h x 4h/{tp}")
        c.text(ax + t * four / tp + four / tp / 2, y + h + 18, f"A{g}", anchor="middle", bold=True)
        c.text(ax + four / 2, y + h + 36, "columns", anchor="middle", fill="muted")
        gx = ax + four + 10
        c.line(gx, y + bs / 2, gx + 70, y + bs / 2, arrow=True)
        c.text(gx + 35, y - 6, "GeLU", anchor="middle")
        box(gx + 80, y, four / tp, bs, "s4", f"Y{g} = GeLU(X A{g}) on GPU {g}: bs x 4h/{tp}", f"Y{g}")
        c.text(gx + 35, y + bs / 2 + 18, "no message", anchor="middle", fill="muted")
        y += max(h, bs) + 52
        # row 2: Y times the GPU's rows of B gives a partial Z
        box(20, y, four / tp, bs, "s4", f"Y{g} on GPU {g}", f"Y{g}")
        bx = 20 + four / tp + 28
        c.text(20 + four / tp + 14, y + bs / 2, "×", anchor="middle", middle=True, size=18)
        c.rect(bx, y, h, four, fill="grid", stroke="muted", title="B: 4h x h")
        c.rect(bx, y + t * four / tp, h, four / tp, fill="s1", stroke="fg", title=f"B{g}: rows {g} of {tp} of B, 4h/{tp} x h")
        c.text(bx + h + 8, y + t * four / tp + four / tp / 2, f"B{g}", bold=True, middle=True)
        c.text(bx + h / 2, y + four + 18, "rows", anchor="middle", fill="muted")
        c.text(bx + h + 62, y + bs / 2, "=", anchor="middle", middle=True, size=18)
        zx = bx + h + 80
        box(zx, y, h, bs, "s2", f"Z{g} = Y{g} B{g} on GPU {g}: bs x h, partial", f"Z{g}", "partial")
        z_rows.append((zx + h, y + bs / 2))
        y += four + 36
    # the one all-reduce: from both partial sums to the whole Z on each GPU
    top, bot = z_rows[0][1] - 20, z_rows[1][1] + 20
    rx, rw = 404, 148
    for x, zy in z_rows:
        c.line(x + 4, zy, rx - 4, zy, arrow=True)
    c.rect(rx, top, rw, bot - top, fill="warn", rx=6, title=f"all-reduce over {tp} GPUs: the only message")
    n_bytes = "2bsh"  # bf16: 2 bytes per element of the bs x h partial sum
    sent = Fraction(2 * (tp - 1), tp) * 2
    lines = ["all-reduce", "Z = Z1 + Z2", "", f"message {n_bytes}", "bytes (bf16)", "",
             "each GPU sends", "2(T−1)/T × msg", f"= {_frac(sent)}bsh bytes"]
    ly = (top + bot) / 2 - (len(lines) - 1) * 10
    for i, s_ in enumerate(lines):
        if s_:
            c.text(rx + rw / 2, ly + 20 * i, s_, anchor="middle", middle=True, fill="bg", bold=i < 2)
    y = max(y, bot + 20)
    c.line(rx + rw / 2, bot, rx + rw / 2, bot + 30, arrow=True)
    c.rect(rx + rw / 2 - h / 2, bot + 34, h, bs, fill="s2", stroke="fg", title="Z: bs x h, whole, on every GPU")
    c.text(rx + rw / 2 - h / 2 - 10, bot + 34 + bs / 2, "Z, whole, on both", anchor="end", middle=True, bold=True)
    c.height = max(y, bot + 34 + bs + 16)
    return c
