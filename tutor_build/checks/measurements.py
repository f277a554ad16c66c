"""Measured numbers: every placeholder names a record; records still match the sources they measured."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error, warning
from ..mdscan import scan
from ..measurements import measured_with, roofline_points
from ..model import Course

HIGHER_IS_BETTER = ("GB/s", "TB/s", "TFLOP/s", "GFLOP/s", "elements/s", "tokens/s")
KEY_FUNCS = ("measured", "value", "ceiling")
PAIR_FUNCS = ("ratio", "share")


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    keys = {m.key for m in course.measurements if not m.local}
    texts = [(s.path, s.text) for m in course.modules for s in m.sections] + [(s.path, s.text) for s in course.sheets]
    for path, text in texts:
        for p in scan(text).placeholders:
            if p.func in KEY_FUNCS + PAIR_FUNCS:
                wanted = 1 if p.func in KEY_FUNCS else 2
                if len(p.args) != wanted:
                    out.append(error(path, p.line, "E706", f"{p.func}() takes {wanted} key(s): {p.raw}"))
                for key in p.args:
                    if key not in keys:
                        out.append(error(path, p.line, "E703", f"no measurement record for '{key}'"))
            elif p.func in ("plot", "roofline"):
                if len(p.args) != 1 or not any(k.startswith(p.args[0]) for k in keys):
                    out.append(error(path, p.line, "E703", f"no measurement records to plot for {p.raw}"))
                elif p.func == "roofline" and not roofline_points(course, p.args[0]):
                    out.append(error(path, p.line, "E707", f"no record under {p.args[0]} counted its bytes and FLOPs: {p.raw}"))
    for rec in course.measurements:
        if rec.local:
            continue
        if measured_with(course.root, rec.source, rec.source_sha256) is None:
            out.append(warning(rec.ref.path, rec.ref.line, "W705",
                               f"stale record {rec.key}: {', '.join(rec.source)} changed since it was measured on {rec.date}"))
        if rec.unit in HIGHER_IS_BETTER and rec.unit == rec.ceiling_unit and rec.value > 1.05 * rec.ceiling_value > 0:
            out.append(warning(rec.ref.path, rec.ref.line, "W706",
                               f"suspect record {rec.key}: {rec.value:.4g} {rec.unit} beats its ceiling {rec.ceiling_value:.4g}"))
    return out
