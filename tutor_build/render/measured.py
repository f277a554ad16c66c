"""Fill measurement placeholders and draw plots from the records (never from typed numbers)."""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass, field

from ..mdscan import PLACEHOLDER, split_args
from ..measurements import measured_with, roofline_points
from ..model import Course, Measurement


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
    return f"**{fmt_value(m.value, m.unit)}**{share} (measured on {m.gpu}, {m.toolkit}, {m.date}{with_kit})"


@dataclass
class Filler:
    """Replaces placeholders in one page; collects the plots it asked for."""

    course: Course
    plots: dict[str, str] = field(default_factory=dict)  # asset path -> SVG

    def _get(self, key: str) -> Measurement:
        rec = self.course.measured(key)
        if rec is None:  # the checks report unknown keys; the page shows the problem plainly
            raise KeyError(key)
        return rec

    def _local_note(self, key: str) -> str:
        mine = self.course.measured(key, local=True)
        return f" · your GPU: {fmt_value(mine.value, mine.unit)} on {mine.gpu}" if mine else ""

    def call(self, func: str, args: tuple[str, ...], asset_prefix: str) -> str:
        if func == "measured":
            rec = self._get(args[0])
            kit = measured_with(self.course.root, rec.source, rec.source_sha256) or ""
            return describe(rec, kit) + self._local_note(args[0])
        if func == "value":
            rec = self._get(args[0])
            return fmt_value(rec.value, rec.unit)
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
            name = re.sub(r"[^A-Za-z0-9]+", "-", args[0]).strip("-").lower()
            asset = f"assets/generated/plots/roofline-{name}.svg"
            self.plots[asset] = roofline_chart(self.course, args[0])
            return f"![Roofline of {args[0]}: measured points under the ceilings]({asset_prefix}{asset}){{ .tutor-plot }}"
        if func == "plot":
            name = re.sub(r"[^A-Za-z0-9]+", "-", args[0]).strip("-").lower()
            asset = f"assets/generated/plots/{name}.svg"
            self.plots[asset] = bar_chart(self.course, args[0])
            return f"![Measured {args[0]} against its ceiling]({asset_prefix}{asset}){{ .tutor-plot }}"
        return "{{ " + func + "(" + ", ".join(args) + ") }}"

    def fill(self, text: str, asset_prefix: str) -> str:
        def replace(m: re.Match) -> str:
            try:
                return self.call(m.group("func"), split_args(m.group("args")), asset_prefix)
            except (KeyError, IndexError, ZeroDivisionError):
                return f"`[no measurement: {m.group('args')}]`"

        return _outside_code(text, lambda chunk: PLACEHOLDER.sub(replace, chunk))


def _outside_code(text: str, func) -> str:
    """Apply func to the text outside fenced code blocks."""
    parts = re.split(r"(^\s*(?:```|~~~)[^\n]*\n.*?^\s*(?:```|~~~)\s*$)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if i % 2 else func(part) for i, part in enumerate(parts))


def bar_chart(course: Course, prefix: str) -> str:
    """Horizontal bars of every course record under a key prefix, each beside its own ceiling."""
    recs = tuple(sorted((m for m in course.measurements if not m.local and m.key.startswith(prefix)), key=lambda m: m.key))
    return _bar_chart(prefix, recs)


@functools.lru_cache(maxsize=256)
def _bar_chart(prefix: str, recs: tuple[Measurement, ...]) -> str:
    """Memoized on the records themselves: `mkdocs serve` redraws a plot only when its data changed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [m.key[len(prefix):].strip("/") or m.key for m in recs]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(recs) + 1.4))
    values = [m.value for m in recs]
    bars = ax.barh(range(len(recs)), values, color="#4f7cba")
    ceilings = {(m.ceiling_name, m.ceiling_unit): m.ceiling_value for m in recs if m.unit == m.ceiling_unit and m.ceiling_value}
    for (name, unit), value in ceilings.items():
        ax.axvline(value, color="#c0392b", linestyle="--", linewidth=1.2)
        ax.text(value, len(recs) - 0.4, f" {name}: {fmt_value(value, unit)}", color="#c0392b", fontsize=8, va="bottom")
    for bar, m in zip(bars, recs):
        pct = m.percent_of_ceiling
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f" {fmt_value(m.value, m.unit)}" + (f" ({pct:.0f}%)" if pct is not None else ""), va="center", fontsize=8)
    ax.set_yticks(range(len(recs)), labels, fontsize=8)
    ax.invert_yaxis()
    units = sorted({m.unit for m in recs})
    ax.set_xlabel(", ".join(units))
    gpus = sorted({m.gpu for m in recs})
    ax.set_title(f"{prefix} — {', '.join(gpus)}", fontsize=9)
    ax.set_xlim(0, max(values + list(ceilings.values()) + [1e-9]) * 1.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    buf = io.StringIO()
    plt.rcParams["svg.hashsalt"] = "tutor"  # stable ids: the same records give the same SVG
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def _device_key(gpu: str) -> str | None:
    for marker, key in (("H200", "h200"), ("H100", "h100"), ("MI300X", "mi300x")):
        if marker in gpu:
            return key
    return None


def roofline_chart(course: Course, prefix: str) -> str:
    """Measured points against the roofs: the datasheet's HBM bandwidth and peak rates (cited in
    tutor_build/models/hardware.py), and the device-to-device copy measured on the same GPU, if any."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..models import hardware

    points = roofline_points(course, prefix)
    gpu = points[0][3].gpu if points else ""
    device = _device_key(gpu)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    xs = [p[1] for p in points] or [1.0]
    lo, hi = min(xs) / 4, max(max(xs) * 4, 2e3)
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    if device:
        bw = hardware.value(device, "hbm_bw")
        for precision, style in (("bf16", "-"), ("fp8", "-.")):
            peak = hardware.peak(device, precision)
            ax.plot(grid, [min(peak, bw * x) / 1e12 for x in grid], style, color="#c0392b", linewidth=1.3,
                    label=f"datasheet: {bw / 1e12:.1f} TB/s, {precision} {peak / 1e12:,.0f} TFLOP/s (ridge {peak / bw:.0f})")
    copies = sorted(m.ceiling_value for m in course.measurements
                    if not m.local and m.gpu == gpu and m.ceiling_name == "device-to-device copy" and m.ceiling_unit == "GB/s")
    if copies:
        copy_bw = copies[len(copies) // 2] * 1e9
        ax.plot(grid, [copy_bw * x / 1e12 for x in grid], ":", color="#7f8c8d",
                label=f"measured device-to-device copy: {copy_bw / 1e12:.2f} TB/s")
    for label, x, y, _ in points:
        ax.plot([x], [y / 1e12], "o", color="#4f7cba")
        ax.annotate(label, (x, y / 1e12), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{prefix} on {gpu or 'no GPU'}: measured points and roofs", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buf = io.StringIO()
    plt.rcParams["svg.hashsalt"] = "tutor"
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()
