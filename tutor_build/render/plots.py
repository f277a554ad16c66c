"""Measurement plots, drawn as inline SVG with the course's builder (render/svg.py) from the records alone.

Two kinds: horizontal bars (`{{ plot("A02/transpose") }}`), one panel per vendor, each bar labelled above
it with the reader's name of its variant (labs/<MODULE>/plots.yml, in the lab's own order) and its value,
and marked with its own ceiling or prediction; and a log-log roofline (`{{ roofline("C07/calibration") }}`)
of the measured points under the datasheet roofs (models/hardware.py) and the copy bandwidth measured on the
same GPU, the points numbered and listed below it. Layout is computed from estimated text boxes
(`text_box`), the same estimate the tests use, so that no two labels overlap at any width the page shows.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..measurements import plotted_records, roofline_points, variant_label, vendor_label
from ..model import Course, Measurement
from .measured import fmt_percent, fmt_value
from .svg import MAX_WIDTH, MIN_FONT, Canvas, Scale, axis_x, axis_y, esc, nice_ticks, tick_label, wrap

FONT = MIN_FONT
CHAR = 0.6  # estimated width of one character, in font sizes (the tests use the same estimate)
LINE = 19  # baseline to baseline of wrapped text
LEFT, RIGHT = 16, MAX_WIDTH - 28  # room on the right for the last tick label, centred on its tick
BAR_H = 16
VENDOR_COLOUR = {"cuda": "s1", "hip": "s4", "triton": "s2", "python": "s3"}


class PlotError(ValueError):
    """A plot that cannot be drawn from its records (the checks report it, E512)."""


# ---------------------------------------------------------------- text boxes

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def text_width(s: str, size: float = FONT) -> float:
    return len(s) * CHAR * size


def chars_for(width: float, size: float = FONT) -> int:
    return max(1, int(width / (CHAR * size)))


def text_box(x: float, y: float, s: str, size: float = FONT, anchor: str = "start", middle: bool = False,
             rotate: float = 0) -> Box:
    """The box a text is estimated to cover: len(text) * 0.6 * size wide, size high, placed by its anchor
    (start/middle/end) and baseline (alphabetic: 0.8 size above, 0.2 below; central: half each side)."""
    w = text_width(s, size)
    x0 = x - {"start": 0.0, "middle": 0.5, "end": 1.0}[anchor] * w
    y0, y1 = (y - size / 2, y + size / 2) if middle else (y - 0.8 * size, y + 0.2 * size)
    if rotate % 180:  # a quarter turn about (x, y): the box turns with it
        dx0, dx1, dy0, dy1 = x0 - x, x0 + w - x, y0 - y, y1 - y
        return (x + min(dy0, dy1), y - max(dx0, dx1), x + max(dy0, dy1), y - min(dx0, dx1)) if rotate % 360 == 270 \
            else (x - max(dy0, dy1), y + min(dx0, dx1), x - min(dy0, dy1), y + max(dx0, dx1))
    return (x0, y0, x0 + w, y1)


def overlap(a: Box, b: Box, pad: float = 0.0) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def svg_texts(svg: str) -> list[tuple[str, Box, float]]:
    """(text, estimated box, font size) of every <text> of an SVG; for the tests and the self-check."""
    ns = "{http://www.w3.org/2000/svg}"
    out = []
    for el in ET.fromstring(svg).iter(f"{ns}text"):
        s = "".join(el.itertext())
        rot = 0.0
        m = re.match(r"rotate\(([-\d.]+)", el.get("transform", ""))
        if m:
            rot = float(m.group(1)) % 360
        size = float(el.get("font-size", FONT))
        box = text_box(float(el.get("x", 0)), float(el.get("y", 0)), s, size, el.get("text-anchor", "start"),
                       el.get("dominant-baseline") == "central", rot)
        out.append((s, box, size))
    return out


def overlapping_texts(svg: str) -> list[tuple[str, str]]:
    texts = [t for t in svg_texts(svg) if t[0].strip()]
    return [(a[0], b[0]) for i, a in enumerate(texts) for b in texts[i + 1:] if overlap(a[1], b[1])]


def _checked(svg: str, what: str) -> str:
    clashes = overlapping_texts(svg)
    if clashes:
        raise PlotError(f"labels of {what} overlap: {clashes[0][0]!r} and {clashes[0][1]!r}")
    return svg


# ---------------------------------------------------------------- what a record's ceiling is

@dataclass(frozen=True)
class Ceiling:
    kind: str  # copy | total | prediction | none
    noun: str  # "copy", "total", "predicted", "derived"


def ceiling_of(m: Measurement) -> Ceiling:
    name = m.ceiling_name.strip()
    if not m.ceiling_value or m.unit != m.ceiling_unit:
        return Ceiling("none", "")
    low = name.lower()
    if "device-to-device copy" in low:  # the copy ceiling itself, not a ceiling derived from it
        return Ceiling("copy", "copy")
    if "total" in low:
        return Ceiling("total", "total")
    # The ceiling's first word names the tick ("predicted", "torch.mm"); a formula or a count does not read as a
    # noun ("max(bytes", "16"), so those say "bound".
    first = name.split()[0].rstrip(",;:") if name else "prediction"
    return Ceiling("prediction", "bound" if "(" in first or first[0].isdigit() else first)


def md_escape(text: str) -> str:
    """Text from records and declarations, safe inside a Markdown caption."""
    return re.sub(r"([\\`*_\[\]<>$])", r"\\\1", text)


def _value_label(m: Measurement, short: bool = False) -> str:
    c = ceiling_of(m)
    v = fmt_value(m.value, m.unit)
    if c.kind in ("copy", "total"):  # the short form leans on the panel's header, which names the ceiling
        pct = fmt_percent(100 * m.value / m.ceiling_value)
        return f"{v}, {pct}" if short else f"{v}, {pct} of {c.noun}"
    if c.kind == "prediction":
        ratio = m.value / m.ceiling_value
        pred = fmt_value(m.ceiling_value, m.unit)
        if abs(ratio - 1) < 0.005:
            return f"{v} = {c.noun}"
        times = f"{ratio:.2f}×" if ratio < 10 else f"{ratio:,.0f}×"
        return f"{v}, {times} {c.noun}" if short else f"{v}, {times} {c.noun} {pred}"
    return v


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return fmt_value(lo, "") if hi - lo <= 0.005 * hi else f"{fmt_value(lo, '')} to {fmt_value(hi, '')}"


# ---------------------------------------------------------------- bar charts

@dataclass
class Panel:
    module: str
    lab: str
    vendor: str
    recs: list[Measurement]

    @property
    def kind(self) -> str:
        kinds = {ceiling_of(m).kind for m in self.recs}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    @property
    def unit(self) -> str:
        return self.recs[0].unit


def _panels(recs: list[Measurement]) -> list[Panel]:
    panels: list[Panel] = []
    for m in recs:
        ident = (str(m.raw.get("module", "")), str(m.raw.get("lab", "")), str(m.raw.get("vendor", "")))
        if panels and (panels[-1].module, panels[-1].lab, panels[-1].vendor) == ident and panels[-1].unit == m.unit:
            panels[-1].recs.append(m)
        else:
            panels.append(Panel(*ident, [m]))
    return panels


def _mark_text(course: Course, p: Panel) -> str:
    """What the tick on each bar of a panel is (or, for a total, what the bars are measured against)."""
    from ..measurements import plot_declaration

    decl = plot_declaration(course.root, p.module, p.lab)
    ceilings = [m.ceiling_value for m in p.recs]
    unit = p.recs[0].ceiling_unit
    if p.kind == "copy":
        return f"tick: the {_span(ceilings)} {unit} device-to-device copy measured in the same run"
    if p.kind == "total":
        return f"each phase as a share of this program's own total, {fmt_value(max(ceilings), unit)}"
    if p.kind == "prediction":
        if decl and decl.mark:
            return f"tick: {decl.mark}"
        names = sorted({m.ceiling_name for m in p.recs})
        return f"tick: that bar's {names[0]}" if len(names) == 1 else f"tick: that bar's {' / '.join(names)}"
    return "no ceiling recorded"


def _axis_title(course: Course, panels: list[Panel], own: Panel | None = None) -> str:
    from ..measurements import plot_declaration

    p = own or panels[0]
    decl = plot_declaration(course.root, p.module, p.lab)
    quantity = (decl.axis if decl and decl.axis else p.recs[0].metric.replace("_", " ")) + f", {p.unit}"
    kinds = {q.kind for q in panels}
    if own is not None and own.kind == "total":
        return f"{quantity}; % of the {vendor_label(own.vendor)} program total, {fmt_value(own.recs[0].ceiling_value, own.unit)}"
    if kinds == {"copy"}:
        return f"{quantity}; % of the device-to-device copy measured in the same run"
    if kinds == {"prediction"}:
        mark = decl.mark if decl and decl.mark else "the record's " + p.recs[0].ceiling_name
        return f"{quantity}; tick: {mark}"
    return quantity


def bar_chart(course: Course, prefix: str) -> tuple[str, str]:
    """(svg, caption) of the horizontal bars of every course record under a key prefix."""
    recs = plotted_records(course, prefix)
    if not recs:
        raise KeyError(prefix)
    panels = _panels(recs)
    shared = len({p.unit for p in panels}) == 1 and not any(p.kind == "total" for p in panels)
    width = RIGHT - LEFT

    def scale_for(ps: list[Panel]) -> tuple[Scale, list[float]]:
        top = max(max(m.value, m.ceiling_value if m.unit == m.ceiling_unit else 0) for p in ps for m in p.recs)
        if all(p.kind == "total" for p in ps):  # the axis ends at the program's own total
            hi = max(top, 1e-12)
            return Scale(0, hi, LEFT, RIGHT), [t for t in nice_ticks(0, hi, 5) if t <= hi * 1.0001]
        ticks = nice_ticks(0, max(top, 1e-12), 5)
        hi = max(ticks[-1], top * 1.03)  # room past every bar and every ceiling, even past the last tick
        return Scale(0, hi, LEFT, RIGHT), ticks

    c = Canvas(MAX_WIDTH, 10)  # height set below, once the rows are laid out
    grid_parts: list[str] = []
    y = 8.0
    alt_parts: list[str] = []
    shared_scale = scale_for(panels) if shared else None
    first_y = y

    def draw_axis(s: Scale, ticks: list[float], y_axis: float, title: str, top_y: float) -> float:
        for t in ticks:  # grid behind the bars, from the panel top to the axis
            grid_parts.append(f'<line x1="{s(t):.2f}" y1="{top_y:.2f}" x2="{s(t):.2f}" y2="{y_axis:.2f}" class="st-grid" stroke-width="1"/>')
        lines = wrap(title, chars_for(width))
        axis_x(c, s, y_axis, lines[0], ticks=ticks, fmt=tick_label)
        for i, line in enumerate(lines[1:], start=1):
            c.text((s.a + s.b) / 2, y_axis + 40 + i * LINE, line, anchor="middle")
        return y_axis + 40 + (len(lines) - 1) * LINE + 14

    for p in panels:
        s, ticks = shared_scale if shared_scale else scale_for([p])
        panel_top = y
        y += FONT
        c.text(LEFT, y, vendor_label(p.vendor), bold=True)
        for line in wrap(_mark_text(course, p), chars_for(width)):
            y += LINE
            c.text(LEFT, y, line, fill="muted")
        y += 6
        bars_top = y
        items = []
        colour = VENDOR_COLOUR.get(p.vendor, "s1")
        for m in p.recs:
            label = variant_label(course, m)
            x_end = max(s(m.value), s(m.ceiling_value) if ceiling_of(m).kind in ("copy", "prediction") else 0)
            # The value goes to the right of its bar if it fits there, else on the label's line, else below it;
            # a shorter form (without the predicted number, which the tick shows) is tried before a line of its own.
            place, value = "own line", _value_label(m)
            for candidate in dict.fromkeys((_value_label(m), _value_label(m, short=True))):
                if x_end + 8 + text_width(candidate) <= MAX_WIDTH - 4:
                    place, value = "beside bar", candidate
                    break
                if text_width(label) + text_width(candidate) + 2 * CHAR * FONT <= width:
                    place, value = "label line", candidate
                    break
            y += LINE
            lines = [label] if place == "label line" else wrap(label, chars_for(width))
            for i, line in enumerate(lines):
                c.text(LEFT, y + i * LINE, line)
            y += (len(lines) - 1) * LINE
            if place == "label line":
                c.text(RIGHT, y, value, anchor="end")
            elif place == "own line":
                y += LINE
                c.text(RIGHT, y, value, anchor="end")
            beside_bar = place == "beside bar"
            bar_y = y + 7
            x1 = max(s(m.value), s(0) + 2)
            if ceiling_of(m).kind in ("copy", "prediction") and s(m.ceiling_value) > x1:
                c.rect(s(0), bar_y, s(m.ceiling_value) - s(0), BAR_H, fill="grid")  # the track up to the tick
            c.rect(s(0), bar_y, x1 - s(0), BAR_H, fill=colour, title=f"{label}: {value}")
            kind = ceiling_of(m).kind
            if kind in ("copy", "prediction"):
                xc = s(m.ceiling_value)
                c.line(xc, bar_y - 3, xc, bar_y + BAR_H + 3, stroke="fg", width=3)
            if beside_bar:
                c.text(x_end + 8, bar_y + BAR_H / 2, value, middle=True)
            y = bar_y + BAR_H + 4
            items.append(f"{label} {value}")
        alt_parts.append(f"{vendor_label(p.vendor)} ({_mark_text(course, p)}): " + "; ".join(items))
        y += 6
        if not shared:
            y = draw_axis(s, ticks, y, _axis_title(course, panels, own=p), bars_top) + 10
        else:
            y += 4
        del panel_top
    if shared_scale:
        y = draw_axis(*shared_scale, y, _axis_title(course, panels), first_y)
    c.height = math.ceil(y + 6)
    c.parts[:0] = grid_parts
    what = _what(course, panels)
    gpu = ", ".join(sorted({m.gpu for m in recs}))
    alt = f"Horizontal bar chart of {what}, measured on {gpu}. " + ". ".join(alt_parts) + "."
    svg = _checked(c.render(alt), prefix)
    return svg, _bar_caption(course, panels, what)


def _what(course: Course, panels: list[Panel]) -> str:
    from ..measurements import plot_declaration

    p = panels[0]
    decl = plot_declaration(course.root, p.module, p.lab)
    return decl.what if decl and decl.what else f"{p.module} {p.lab}, {p.recs[0].metric.replace('_', ' ')} of each variant"


def _runs(panels: list[Panel]) -> str:
    """GPU, toolkit and date of each vendor's run, for a caption."""
    parts = []
    for p in panels:
        kits = sorted({m.toolkit for m in p.recs})
        dates = sorted({m.date for m in p.recs})
        parts.append(f"{vendor_label(p.vendor)}: {', '.join(kits)}, {dates[0] if len(dates) == 1 else dates[0] + ' to ' + dates[-1]}")
    seen: list[str] = []
    for part in parts:
        if part not in seen:
            seen.append(part)
    return "; ".join(seen)


def _bar_caption(course: Course, panels: list[Panel], what: str) -> str:
    gpu = ", ".join(sorted({m.gpu for p in panels for m in p.recs}))
    head = f"**Measured: {md_escape(what)}**, on an {md_escape(gpu)} ({md_escape(_runs(panels))}), by `tutor labs bench`."
    kinds = {p.kind for p in panels}
    if kinds == {"copy"}:
        per = ", ".join(f"{_span([m.ceiling_value for m in p.recs])} {p.recs[0].ceiling_unit} for {vendor_label(p.vendor)}"
                        for p in panels)
        tail = (f"The tick on each bar is the ceiling: the device-to-device copy measured in the same run ({per}); "
                "each percentage is of that copy.")
    elif kinds == {"total"}:
        per = ", ".join(f"{fmt_value(p.recs[0].ceiling_value, p.unit)} for {vendor_label(p.vendor)}" for p in panels)
        tail = (f"Each vendor's bars are drawn against that program's own total ({per}); "
                "each percentage is of that total.")
    elif kinds == {"prediction"}:
        names = sorted({m.ceiling_name for p in panels for m in p.recs})
        tail = (f"The tick on each bar is that configuration's own ceiling from the record "
                f"({md_escape('; '.join(names))}); each ratio is measured over that value.")
    else:
        tail = "Each bar is marked with the ceiling its record names."
    return f"{head} {tail}"


# ---------------------------------------------------------------- roofline

def _device_key(gpu: str) -> str | None:
    for marker, key in (("H200", "h200"), ("H100", "h100-sxm"), ("MI300X", "mi300x")):
        if marker in gpu:
            return key
    return None


def _copy_bandwidth(course: Course, gpu: str) -> float | None:
    """The median device-to-device copy of every course record on this GPU, in bytes/s."""
    copies = sorted(m.ceiling_value for m in course.measurements
                    if not m.local and m.gpu == gpu and m.ceiling_name == "device-to-device copy" and m.ceiling_unit == "GB/s")
    return copies[len(copies) // 2] * 1e9 if copies else None


def _decade_range(lo: float, hi: float) -> tuple[float, float]:
    a = math.floor(math.log10(lo))
    if lo / 10 ** a < 2:  # a point near the bottom of a decade gets one more decade of room
        a -= 1
    return 10.0 ** a, 10.0 ** math.ceil(math.log10(hi))


def roofline_chart(course: Course, prefix: str, *more: str) -> tuple[str, str]:
    """(svg, caption): measured points against the roofs: the datasheet's HBM bandwidth and peak rates (cited
    in tutor_build/models/hardware.py), and the device-to-device copy measured on the same GPU, if any. With
    several prefixes, the points of all of them, in the order the prefixes are given, each named by its module."""
    from ..models import hardware

    prefixes = (prefix, *more)
    order: dict[str, int] = {}
    for p in prefixes:
        for m in plotted_records(course, p):
            order.setdefault(m.key, len(order))
    found = {pt[3].key: pt for p in prefixes for pt in roofline_points(course, p)}
    points = sorted(found.values(), key=lambda p: order.get(p[3].key, len(order)))
    if not points:
        raise KeyError(prefix)
    gpu = points[0][3].gpu
    device = _device_key(gpu)
    vendors = {str(p[3].raw.get("vendor", "")) for p in points}
    modules = {str(p[3].raw.get("module", "")) for p in points}

    def name(m: Measurement) -> str:
        label = variant_label(course, m)
        if len(modules) > 1:
            label = f"{m.raw.get('module', '')}: {label}"
        return f"{label} ({vendor_label(str(m.raw.get('vendor', '')))})" if len(vendors) > 1 else label

    roofs: list[tuple[str, float, float, str, str | None]] = []  # (legend, bandwidth, peak, colour, dash)
    cites: list[str] = []
    if device:
        bw = hardware.value(device, "hbm_bw")
        cites.append(hardware.DEVICES[device]["hbm_bw"].cite)
        for precision, colour, dash in (("fp32", "s4", "2 3"), ("bf16", "s2", None), ("fp8", "s6", "9 4 2 4")):
            peak = hardware.peak(device, precision)
            roofs.append((f"datasheet: {bw / 1e12:.1f} TB/s, {precision} {peak / 1e12:,.0f} TFLOP/s (ridge {peak / bw:.0f})",
                          bw, peak, colour, dash))
            cites.append(hardware.DEVICES[device]["peak"][precision].cite)
    copy_bw = _copy_bandwidth(course, gpu)
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    top_peak = max([r[2] for r in roofs] + [max(ys) * 2])
    ridge = max([r[2] / r[1] for r in roofs] + [max(xs)])
    xlo, xhi = _decade_range(min(xs) / 2, max(max(xs) * 2, ridge * 2))
    ylo, yhi = _decade_range(min(ys), top_peak * 1.5)

    px0, px1, py0, py1 = 84.0, float(RIGHT), 16.0, 336.0  # the plot area
    sx, sy = Scale(xlo, xhi, px0, px1, log=True), Scale(ylo, yhi, py1, py0, log=True)
    c = Canvas(MAX_WIDTH, 10)
    for t in sy.ticks(8):
        c.line(px0, sy(t), px1, sy(t), stroke="grid")
    for t in sx.ticks(8):
        c.line(sx(t), py0, sx(t), py1, stroke="grid")

    def clip_line(bw_: float, cap: float) -> list[tuple[float, float]]:
        """min(cap, bw * x) over the x range, clipped to the y range, as plot points."""
        x_start = max(xlo, ylo / bw_)
        x_ridge = min(max(cap / bw_, x_start), xhi)
        pts = [(x_start, bw_ * x_start), (x_ridge, min(cap, bw_ * x_ridge))]
        if x_ridge < xhi:
            pts.append((xhi, cap))
        return [(sx(a), sy(min(b, yhi))) for a, b in pts]

    occupied: list[Box] = []
    for legend, bw_, peak, colour, dash in roofs:
        c.polyline(clip_line(bw_, peak), stroke=colour, width=2.5, dash=dash)
    if copy_bw:
        c.polyline(clip_line(copy_bw, min(r[2] for r in roofs) if roofs else yhi), stroke="s3", width=2.5, dash="3 4")
    # Roof names on the flat parts, right-aligned just above each, where they fit.
    for legend, bw_, peak, colour, dash in roofs:
        label = f"{legend.split(', ')[1].split(' (')[0]} peak"
        box = text_box(px1 - 4, sy(peak) - 5, label, anchor="end")
        if box[1] > py0 and not any(overlap(box, o, 2) for o in occupied):
            c.text(px1 - 4, sy(peak) - 5, label, anchor="end", fill="muted")
            occupied.append(box)

    # Points, numbered; each number goes in the first free spot around its point.
    marks = [(sx(x), sy(y)) for _, x, y, _ in points]
    for (mx, my), (_, x, y, m) in zip(marks, points):
        c.circle(mx, my, 5.5, fill=VENDOR_COLOUR.get(str(m.raw.get("vendor", "")), "s1"), stroke="bg",
                 title=f"{name(m)}: {x:.3g} FLOP/byte, {y / 1e12:.3g} TFLOP/s")
        occupied.append((mx - 6, my - 6, mx + 6, my + 6))
    area = (px0 + 2, py0, px1, py1 - 2)
    unplaced = []
    for i, (mx, my) in enumerate(marks, start=1):
        label = str(i)
        w = text_width(label)
        placed = False
        for r in (9, 16, 24, 34):
            for dx, dy in ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1)):
                cx, cy = mx + dx * (r + w / 2), my + dy * (r + FONT / 2 - 2)
                box = (cx - w / 2, cy - FONT / 2, cx + w / 2, cy + FONT / 2)
                inside = area[0] <= box[0] and box[2] <= area[2] and area[1] <= box[1] and box[3] <= area[3]
                if inside and not any(overlap(box, o, 1) for o in occupied):
                    if r > 16:  # far from its point: a leader line says whose number it is
                        c.line(mx + dx * 6, my + dy * 6, cx - dx * w / 2, cy - dy * FONT / 2, stroke="muted", width=1)
                    c.text(cx, cy, label, anchor="middle", middle=True, bold=True)
                    occupied.append(box)
                    placed = True
                    break
            if placed:
                break
        if not placed:
            unplaced.append(i)
    c.line(px0, py0, px1, py0, stroke="grid")
    c.line(px1, py0, px1, py1, stroke="grid")
    axis_x(c, sx, py1, "arithmetic intensity, FLOP per byte (log scale)", ticks=sx.ticks(8))
    axis_y(c, sy, px0, "TFLOP/s (log scale)", ticks=sy.ticks(8), fmt=lambda v: tick_label(v / 1e12))

    # Legend: the roofs, then every point by number.
    y = py1 + 76
    for legend, _, _, colour, dash in roofs:
        c.line(LEFT, y - 5, LEFT + 30, y - 5, stroke=colour, width=2.5, dash=dash)
        c.text(LEFT + 38, y, legend)
        y += LINE + 2
    if copy_bw:
        c.line(LEFT, y - 5, LEFT + 30, y - 5, stroke="s3", width=2.5, dash="3 4")
        c.text(LEFT + 38, y, f"measured device-to-device copy: {copy_bw / 1e12:.2f} TB/s")
        y += LINE + 2
    y += 8
    num_w = text_width(str(len(points))) + 12
    alt_points = []
    for i, (_, x, fl, m) in enumerate(points, start=1):
        text = f"{name(m)}: {x:.3g} FLOP/B, {fl / 1e12:.3g} TFLOP/s"
        c.text(LEFT + num_w - 12, y, str(i), anchor="end", bold=True)
        lines = wrap(text + (" (not numbered on the plot)" if i in unplaced else ""), chars_for(RIGHT - LEFT - num_w))
        for j, line in enumerate(lines):
            c.text(LEFT + num_w, y + j * LINE, line)
        y += len(lines) * LINE
        alt_points.append(f"{i}, {text}")
    c.height = math.ceil(y + 4)
    roof_words = "; ".join(r[0] for r in roofs) + (f"; measured device-to-device copy {copy_bw / 1e12:.2f} TB/s" if copy_bw else "")
    alt = (f"Log-log roofline on {gpu}: attainable TFLOP/s against FLOP per byte. Roofs: {roof_words or 'none'}. "
           f"Measured points: " + "; ".join(alt_points) + ".")
    svg = _checked(c.render(alt), f"roofline {', '.join(prefixes)}")
    what = "; ".join(dict.fromkeys(_what(course, [panel]) for panel in _panels([p[3] for p in points])))
    cite = " ".join(f"[@{k}]" for k in dict.fromkeys(cites))
    copy_part = (f", and the device-to-device copy measured on the same GPU ({copy_bw / 1e12:.2f} TB/s, the median of the "
                 "course's runs)") if copy_bw else ""
    caption = (f"**Roofline: {md_escape(what)}**, each point one measured record (the FLOPs and bytes the lab counted, "
               f"over its measured time), on an {md_escape(gpu)} ({md_escape(_runs(_panels([p[3] for p in points])))}). "
               f"Roofs: the datasheet's HBM bandwidth and dense bf16 and fp8 peaks {cite}{copy_part}.")
    return svg, caption


def standalone(svg: str, root: Path) -> str:
    """The downloadable copy of an inlined plot: an XML file that carries the page's figure colours (light)."""
    css_path = Path(root) / "docs/assets/css/figures.css"
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    css = re.sub(r"\[data-md-color-scheme=\"slate\"\]\s*\{[^}]*\}", "", css)
    style = f"<style>{esc(css) if '<' in css else css}</style>" if css else ""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg.replace("<defs>", f"{style}<defs>", 1)
