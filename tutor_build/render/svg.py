"""A small SVG builder for figures and plots drawn at build time.

Colours are CSS classes (docs/assets/css/figures.css), not literal colours, so one SVG inlined in the page
follows the reader's light or dark scheme. The canvas is at most MAX_WIDTH units wide and text at least
MIN_FONT units high, so that a figure scaled to a 390 px phone still has text of about 9 px or more.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

MAX_WIDTH = 560
MIN_FONT = 14
# Fill/stroke classes: fg (text, axes), muted (secondary text, guides), grid, bg (page background),
# s1..s6 (series, distinguishable in both schemes), good, bad (correct/incorrect), warn.
COLOURS = ("fg", "muted", "grid", "bg", "s1", "s2", "s3", "s4", "s5", "s6", "good", "bad", "warn")


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if isinstance(x, float) else str(x)


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Canvas:
    width: float
    height: float
    parts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.width > MAX_WIDTH:
            raise ValueError(f"a figure is at most {MAX_WIDTH} units wide (got {self.width}): make it taller instead")

    # ---- primitives (fill/stroke name a colour class; "none" leaves it out)
    def rect(self, x, y, w, h, fill="s1", stroke="none", rx=0, title: str | None = None, width=1.0) -> None:
        cls = self._cls(fill, stroke)
        attrs = f' rx="{_num(rx)}"' if rx else ""
        if stroke != "none" and width != 1:  # 1 is SVG's default; most rects are fills: keep them short
            attrs += f' stroke-width="{_num(width)}"'
        body = f"<title>{esc(title)}</title></rect>" if title else "/>"
        self.parts.append(f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(max(w, 0))}" height="{_num(max(h, 0))}"'
                          f'{attrs} class="{cls}"' + (">" + body if title else body))

    def line(self, x1, y1, x2, y2, stroke="fg", width=1.0, dash: str | None = None, arrow=False) -> None:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += ' marker-end="url(#tf-arrow)"' if arrow else ""
        if width != 1:
            extra += f' stroke-width="{_num(width)}"'
        self.parts.append(f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" class="st-{stroke}"{extra}/>')

    def polyline(self, points, stroke="s1", width=2.0, dash: str | None = None) -> None:
        pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<polyline points="{pts}" class="st-{stroke} fi-none" stroke-width="{_num(width)}"{extra}/>')

    def polygon(self, points, fill="s1", stroke="none") -> None:
        pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self.parts.append(f'<polygon points="{pts}" class="{self._cls(fill, stroke)}"/>')

    def circle(self, cx, cy, r, fill="s1", stroke="none", title: str | None = None) -> None:
        tip = f"<title>{esc(title)}</title>" if title else ""
        self.parts.append(f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="{_num(r)}" class="{self._cls(fill, stroke)}">{tip}</circle>')

    def text(self, x, y, s, size=MIN_FONT, fill="fg", anchor="start", bold=False, middle=False, rotate=0,
             mono=False) -> None:
        if size < MIN_FONT:
            raise ValueError(f"text below {MIN_FONT} units is unreadable on a phone: {s!r} at {size}")
        attrs = f'x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" class="fi-{fill}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if bold:
            attrs += ' font-weight="700"'
        if middle:
            attrs += ' dominant-baseline="central"'
        if mono:
            attrs += ' font-family="var(--md-code-font-family, monospace)"'
        if rotate:
            attrs += f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"'
        self.parts.append(f"<text {attrs}>{esc(s)}</text>")

    def raw(self, markup: str) -> None:
        self.parts.append(markup)

    @staticmethod
    def _cls(fill: str, stroke: str) -> str:
        for name in (fill, stroke):
            if name != "none" and name not in COLOURS:
                raise ValueError(f"unknown colour class {name!r}; use one of {', '.join(COLOURS)}")
        return " ".join(c for c in (f"fi-{fill}", f"st-{stroke}" if stroke != "none" else "") if c)

    def render(self, alt: str) -> str:
        """The SVG as one line (so Markdown never splits it): role=img, its alt text as title and label."""
        if not alt.strip():
            raise ValueError("a figure needs alt text")
        defs = ('<defs><marker id="tf-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="fi-fg"/></marker></defs>')
        body = "".join(self.parts)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="tutor-svg" viewBox="0 0 {_num(self.width)} {_num(self.height)}" '
                f'role="img" aria-label="{esc(alt)}"><title>{esc(alt)}</title>{defs}{body}</svg>')


# ---------------------------------------------------------------- scales and axes for plots

@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    a: float  # pixel of lo
    b: float  # pixel of hi
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / ((self.hi - self.lo) or 1.0)
        return self.a + t * (self.b - self.a)

    def ticks(self, target: int = 5) -> list[float]:
        if self.log:
            lo, hi = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
            step = max(1, math.ceil((hi - lo) / target))
            return [10.0 ** e for e in range(lo, hi + 1, step) if self.lo <= 10.0 ** e <= self.hi * 1.0001]
        return nice_ticks(self.lo, self.hi, target)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    span = (hi - lo) or 1.0
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    return out


def tick_label(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e4 and math.log10(a).is_integer():
        return f"10^{int(math.log10(a))}" if a >= 1e6 else f"{v:,.0f}"
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:g}"
    return f"{v:.3g}"


def axis_x(c: Canvas, s: Scale, y: float, title: str, ticks: list[float] | None = None, fmt=tick_label) -> None:
    c.line(s.a, y, s.b, y, stroke="fg")
    for v in ticks if ticks is not None else s.ticks():
        x = s(v)
        c.line(x, y, x, y + 5, stroke="fg")
        c.text(x, y + 20, fmt(v), anchor="middle", fill="muted")
    c.text((s.a + s.b) / 2, y + 40, title, anchor="middle")


def axis_y(c: Canvas, s: Scale, x: float, title: str, ticks: list[float] | None = None, fmt=tick_label,
           grid_to: float | None = None) -> None:
    c.line(x, s.a, x, s.b, stroke="fg")
    for v in ticks if ticks is not None else s.ticks():
        y = s(v)
        c.line(x - 5, y, x, y, stroke="fg")
        if grid_to is not None:
            c.line(x, y, grid_to, y, stroke="grid")
        c.text(x - 8, y, fmt(v), anchor="end", fill="muted", middle=True)
    mid = (s.a + s.b) / 2
    c.text(16, mid, title, anchor="middle", rotate=-90)


def wrap(text: str, chars: int) -> list[str]:
    """Greedy word wrap for labels (SVG text does not wrap by itself)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])
