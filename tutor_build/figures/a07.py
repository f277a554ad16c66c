"""Concept figures of module A07, tensor cores and matrix cores.

Every lane-to-element assignment drawn here comes from ``models/mma_layout.py``, the same functions the
lab's emulation test (tests/test_model_mma_layout.py) checks against the PTX fragment definitions; the
tooltips name the lane and register of each cell so the figure tests can read them back.
"""

from __future__ import annotations

from ..models import mma_layout as L
from ..render.svg import Canvas

W = 560
COLOURS = ["s1", "s2", "s3", "s4", "s5", "s6"]


# ------------------------------------------------------------------ 1. the analogy
def tile_machine(m: int = 16, n: int = 8, k: int = 16) -> Canvas:
    """A person doing one multiply-add per tick against a machine that takes a whole m x k and k x n tile
    per step: the counts are the multiply-adds of one instruction."""
    macs = L.macs_per_instruction(m, n, k)
    c = Canvas(W, 330)
    c.text(20, 26, "One person: one multiply-add per tick", bold=True, size=16)
    c.rect(20, 44, 34, 34, fill="s3", rx=4, title="one lane: one fused multiply-add per instruction")
    c.text(64, 66, "a × b + c   (1 multiply-add)", fill="muted")
    c.text(20, 116, f"The machine: a {m} × {k} tile times a {k} × {n} tile per step", bold=True, size=16)
    cell = 6.0
    x0, y0 = 20, 134
    for r in range(m):
        for q in range(k):
            c.rect(x0 + q * cell, y0 + r * cell, cell - 1, cell - 1, fill="s1", title=f"A[{r}][{q}]")
    c.text(x0 + k * cell + 8, y0 + m * cell / 2 + 5, "×", size=18)
    xb = x0 + k * cell + 26
    for r in range(k):
        for q in range(n):
            c.rect(xb + q * cell, y0 + r * cell, cell - 1, cell - 1, fill="s2", title=f"B[{r}][{q}]")
    c.text(xb + n * cell + 8, y0 + m * cell / 2 + 5, "=", size=18)
    xc = xb + n * cell + 26
    for r in range(m):
        for q in range(n):
            c.rect(xc + q * cell, y0 + r * cell, cell - 1, cell - 1, fill="s4", title=f"C[{r}][{q}]")
    c.text(xc + n * cell + 16, y0 + 30, f"{m * n} results,", fill="fg")
    c.text(xc + n * cell + 16, y0 + 50, f"{macs:,} multiply-adds", fill="fg", bold=True)
    c.text(xc + n * cell + 16, y0 + 70, "in one instruction", fill="muted")
    c.text(20, 300, f"Same arithmetic, {macs:,} times more of it per instruction issued.", fill="muted")
    return c


# ------------------------------------------------------------------ 2-3. fragment layouts
def _grid(c: Canvas, x0: float, y0: float, rows: int, cols: int, cell: float, layout, lanes: int, per_lane: int,
          label: str, name: str, colour_of) -> None:
    own = L.owners(layout, lanes, per_lane)
    c.text(x0, y0 - 8, label, bold=True)
    for (r, q), (lane, i) in own.items():
        c.rect(x0 + q * cell, y0 + r * cell, cell - 1, cell - 1, fill=colour_of(lane),
               title=f"{name}[{r}][{q}]: lane {lane}, element {i}" if cell >= 12 else None)
        if cell >= 16:
            c.text(x0 + q * cell + cell / 2, y0 + r * cell + cell / 2 + 5, str(lane), size=14 if cell >= 22 else 14,
                   anchor="middle", fill="bg")


def m16n8k16_layout(highlight: int = 0) -> Canvas:
    """Which of the 32 lanes holds each element of A (16 x 16), B (16 x 8) and C (16 x 8) of mma.m16n8k16;
    colour = lane // 4 (the group g), the lanes of `highlight`'s group outlined by number."""
    c = Canvas(W, 430)
    cell = 14.0

    def colour(lane: int) -> str:
        return COLOURS[(lane // 4) % len(COLOURS)] if lane // 4 != highlight else "warn"

    _grid(c, 20, 40, 16, 16, cell, L.m16n8k16_a, 32, 8, "A, 16 × 16 (8 per lane)", "A", colour)
    _grid(c, 270, 40, 16, 8, cell, L.m16n8k16_b, 32, 4, "B, 16 × 8 (4)", "B", colour)
    _grid(c, 410, 40, 16, 8, cell, L.m16n8k16_c, 32, 4, "C, 16 × 8 (4)", "C", colour)
    lanes = [lane for lane in range(32) if lane // 4 == highlight]
    a_cells = sorted(L.m16n8k16_a(lanes[0], i) for i in range(8))
    c.text(20, 300, f"Lanes {lanes[0]}-{lanes[-1]} (group g = {highlight}, orange) hold rows {highlight} and "
                    f"{highlight + 8} of A and C", fill="fg")
    c.text(20, 322, f"and column {highlight} of B. Lane {lanes[0]} holds A at {a_cells[0]}, {a_cells[1]}, "
                    f"{a_cells[2]}, {a_cells[3]}, ...", fill="muted")
    c.text(20, 352, "Two neighbouring bf16 along k share one 32-bit register:", fill="muted")
    c.text(20, 374, "4 registers of A, 2 of B, 4 fp32 accumulators per lane.", fill="muted")
    c.text(20, 404, "Colour: lane // 4. Computed from the PTX fragment definition.", fill="muted")
    return c


def mfma32_layout() -> Canvas:
    """Which of the 64 lanes holds each element of A (32 x 8), B (8 x 32) and C (32 x 32) of
    v_mfma_f32_32x32x8_bf16; colour = lane // 32 (the half-wavefront) and, in C, the block of 8 rows."""
    c = Canvas(W, 470)
    cell = 9.0

    def half(lane: int) -> str:
        return "s1" if lane < 32 else "s2"

    _grid(c, 20, 40, 32, 8, cell, L.mfma32_a, 64, 4, "A, 32 × 8", "A", half)
    _grid(c, 120, 40, 8, 32, cell, L.mfma32_b, 64, 4, "B, 8 × 32", "B", half)
    _grid(c, 120, 140, 32, 32, cell, L.mfma32_c, 64, 16, "C, 32 × 32 (16 per lane)", "C", half)
    c.text(430, 60, "lanes 0-31", fill="s1", bold=True)
    c.text(430, 82, "lanes 32-63", fill="s2", bold=True)
    c.text(20, 450, "Lane x + 32y: row x of A, column x of B and C; k = 4y..4y+3.", fill="muted")
    return c
