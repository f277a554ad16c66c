"""Drawings any module may use."""

from __future__ import annotations

from ..render.svg import Canvas, wrap


def flow(steps: list[str], notes: list[str] | None = None) -> Canvas:
    """A top-to-bottom chain of labelled boxes joined by arrows (tall, so it reads on a phone);
    `notes` puts a short line of muted text to the right of each arrow."""
    width, box_w, line_h, gap = 480, 300, 20, 34
    rows = [wrap(s, 30) for s in steps]
    heights = [16 + line_h * len(r) for r in rows]
    c = Canvas(width, sum(heights) + gap * (len(steps) - 1) + 8)
    y, x = 4, (width - box_w) / 2
    for i, (lines, h) in enumerate(zip(rows, heights)):
        c.rect(x, y, box_w, h, fill="bg", stroke="s1", rx=6, width=2)
        for j, text in enumerate(lines):
            c.text(width / 2, y + 8 + line_h * (j + 0.5), text, anchor="middle", middle=True)
        y += h
        if i + 1 < len(steps):
            c.line(width / 2, y + 2, width / 2, y + gap - 4, stroke="fg", width=1.5, arrow=True)
            if notes and i < len(notes) and notes[i]:
                c.text(width / 2 + 12, y + gap / 2, notes[i], fill="muted", middle=True)
            y += gap
    return c
