"""Fill measurement placeholders and draw plots from the records (never from typed numbers)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..mdscan import PLACEHOLDER, split_args
from ..measurements import measured_with
from ..model import Course, Measurement, Module

# An inline SVG goes through Markdown as one line, `@@TUTOR-SVG:key@@ caption @@END-SVG@@`, so its caption is
# Markdown like any other (citations, math); the plugin swaps it for <figure>svg<figcaption>caption</figcaption>
# in the HTML. Raw SVG in Markdown would break inside lists, tabs and admonitions.
SVG_TOKEN = "@@TUTOR-SVG:{key}@@ {caption} @@END-SVG@@"


def fmt_value(value: float, unit: str) -> str:
    if abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    elif abs(value) >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


# Nsight Compute's units as a reader says them of a count other than one ("count" needs no word).
COUNTER_UNITS = {"request": "requests", "sector": "sectors", "inst": "instructions", "count": "", "%": "%", "hz": "Hz"}


def counter_unit(unit: str, value: float) -> str:
    """A counter's unit in words: 268,435,456 requests, 18 registers/thread, 1 distinct sum, 97.7 %."""
    if unit in COUNTER_UNITS:
        return COUNTER_UNITS[unit] if value != 1 or unit in ("%", "hz") else unit
    if value == 1:
        return unit
    head, slash, rest = unit.partition("/")  # the counted thing is the part before a slash
    return (head if head.endswith("s") else head + "s") + slash + rest


def unit_of(m: Measurement) -> str:
    """A profiler counter's unit as a reader says it: Nsight Compute's "request" counts 268,435,456 requests."""
    if m.raw.get("kind") == "counter":
        return counter_unit(m.unit, m.value)
    return m.unit


def fmt_measured(m: Measurement) -> str:
    """A record's value and unit; a whole-number counter as the integer it is (11 distinct sums, not 11.0)."""
    if m.raw.get("kind") == "counter" and float(m.value).is_integer():
        return f"{int(m.value):,} {unit_of(m)}".strip()
    return fmt_value(m.value, unit_of(m))


def fmt_ratio(r: float) -> str:
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×"


def fmt_percent(pct: float) -> str:
    """One decimal from 1% up; below that, two significant figures (0.0028%, never 0.00%)."""
    return f"{pct:.1f}%" if pct >= 1 else f"{pct:.2g}%"


def describe(m: Measurement, kit: str = "") -> str:
    """value, % of the ceiling measured in the same run, GPU, toolkit and date; `kit` names the earlier
    lab-kit version the lab was measured with, when the kit has changed since (measurements/previous-kits/)."""
    pct = m.percent_of_ceiling
    share = f", {pct:.0f}% of the {fmt_value(m.ceiling_value, m.ceiling_unit)} {m.ceiling_name}" if pct is not None else ""
    with_kit = f", with the lab kit of {kit}" if kit else ""
    return f"**{fmt_measured(m)}**{share} (measured on {m.gpu}, {m.toolkit}, {m.date}{with_kit})"


@dataclass
class Filler:
    """Replaces placeholders in one page; collects the plots it asked for."""

    course: Course
    module: Module | None = None  # the module page being filled (its figures.yml names the figures)
    plots: dict[str, str] = field(default_factory=dict)  # asset path -> SVG
    inline: dict[str, str] = field(default_factory=dict)  # token key -> SVG to inline in the page
    figures_used: list[str] = field(default_factory=list)

    def _get(self, key: str) -> Measurement:
        rec = self.course.measured(key)
        if rec is None:  # the checks report unknown keys; the page shows the problem plainly
            raise KeyError(key)
        return rec

    def _local_note(self, key: str) -> str:
        mine = self.course.measured(key, local=True)
        return f" · your GPU: {fmt_value(mine.value, mine.unit)} on {mine.gpu}" if mine else ""

    def inline_svg(self, key: str, svg: str, caption: str, asset: str = "") -> str:
        """The token and caption paragraphs for an SVG the plugin inlines; also kept as a file to download."""
        self.inline[key] = svg
        if asset:
            self.plots[asset] = svg
        return SVG_TOKEN.format(key=key, caption=" ".join(caption.split()))

    def figure(self, fig_id: str) -> str:
        from ..figures import svg as figure_svg

        spec = next((f for f in (self.module.figures if self.module else ()) if f.id == fig_id), None)
        if spec is None:
            raise KeyError(fig_id)
        self.figures_used.append(fig_id)
        key = f"{self.module.id}-{fig_id}"
        number = f"{self.module.id}.{len(self.figures_used)}"
        return self.inline_svg(key, figure_svg(spec), f"**Figure {number}.** {spec.caption}",
                               asset=f"assets/generated/figures/{key}.svg")

    def plot(self, func: str, prefix: str, *more: str) -> str:
        """A measurement plot inlined in the page (render/plots.py), with a downloadable copy of it. A roofline
        may take several prefixes: the points of all of them on one chart."""
        from . import plots

        name = re.sub(r"[^A-Za-z0-9]+", "-", "-".join((prefix, *more))).strip("-").lower()
        if func == "roofline":
            svg, caption = plots.roofline_chart(self.course, prefix, *more)
            key, asset = f"roofline-{name}", f"assets/generated/plots/roofline-{name}.svg"
        else:
            svg, caption = plots.bar_chart(self.course, prefix)
            key, asset = f"plot-{name}", f"assets/generated/plots/{name}.svg"
        token = self.inline_svg(key, svg, caption, asset=asset)
        self.plots[asset] = plots.standalone(svg, self.course.root)
        return token

    def call(self, func: str, args: tuple[str, ...], asset_prefix: str) -> str:
        if func == "figure":
            return self.figure(args[0])
        if func == "measured":
            rec = self._get(args[0])
            kit = measured_with(self.course.root, rec.source, rec.source_sha256) or ""
            return describe(rec, kit) + self._local_note(args[0])
        if func == "value":
            rec = self._get(args[0])
            return fmt_measured(rec)
        if func == "ceiling":
            rec = self._get(args[0])
            return f"{fmt_value(rec.ceiling_value, rec.ceiling_unit)} ({rec.ceiling_name})"
        if func == "ratio":
            a, b = self._get(args[0]), self._get(args[1])
            return fmt_ratio(a.value / b.value)
        if func == "share":
            a, b = self._get(args[0]), self._get(args[1])
            return fmt_percent(100 * a.value / b.value)
        if func == "roofline":
            return self.plot(func, *args)
        if func == "plot":
            return self.plot(func, args[0])
        return "{{ " + func + "(" + ", ".join(args) + ") }}"

    def fill(self, text: str, asset_prefix: str) -> str:
        def replace(m: re.Match) -> str:
            try:  # every replacement is one line (figures and plots are tokens), so lists and tabs hold
                return self.call(m.group("func"), split_args(m.group("args")), asset_prefix)
            except (KeyError, IndexError, ZeroDivisionError):
                return f"`[no {'figure' if m.group('func') == 'figure' else 'measurement'}: {m.group('args')}]`"
            except Exception as exc:  # noqa: BLE001 - a figure that cannot be drawn: the check names it
                return f"`[figure not drawn: {exc}]`"

        return _outside_code(text, lambda chunk: PLACEHOLDER.sub(replace, chunk))


def _outside_code(text: str, func) -> str:
    """Apply func to the text outside fenced code blocks and inline code (a page may show a placeholder)."""
    parts = re.split(r"(^\s*(?:```|~~~)[^\n]*\n.*?^\s*(?:```|~~~)\s*$|`[^`\n]+`)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if i % 2 else func(part) for i, part in enumerate(parts))
