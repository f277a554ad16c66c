"""Measured numbers: every placeholder names a record; records still match the sources they measured; every
plotted record's variant is declared, in order and with its label, in labs/<MODULE>/plots.yml; plots draw."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error, warning
from ..mdscan import scan
from ..measurements import PLOTS_FILE, measured_with, plot_declarations, roofline_points
from ..model import Course
from ..yamlio import load_yaml

HIGHER_IS_BETTER = ("GB/s", "TB/s", "TFLOP/s", "GFLOP/s", "elements/s", "tokens/s")
KEY_FUNCS = ("measured", "value", "ceiling")
PAIR_FUNCS = ("ratio", "share")


def check(course: Course) -> list[Diagnostic]:
    from ..labs import profile

    out: list[Diagnostic] = []
    for m in course.modules:  # labs/<MODULE>/profile.yml: the counters `tutor labs profile` records (E513)
        out += profile.load(course.root, m.id, {lab.name for lab in m.labs})[1]
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
                prefixes = p.args if p.func == "roofline" else p.args[:1]  # a roofline may take several prefixes
                if (p.func == "plot" and len(p.args) != 1) or not p.args \
                        or not all(any(k.startswith(a) for k in keys) for a in prefixes):
                    out.append(error(path, p.line, "E703", f"no measurement records to plot for {p.raw}"))
                elif p.func == "roofline" and not all(roofline_points(course, a) for a in prefixes):
                    bare = next(a for a in prefixes if not roofline_points(course, a))
                    out.append(error(path, p.line, "E707", f"no record under {bare} counted its bytes and FLOPs: {p.raw}"))
                else:
                    out += _plot_problems(course, path, p.line, p.func, *prefixes)
    out += _declaration_problems(course)
    explained, problems = beyond_ceiling(course)
    out += problems
    for rec in course.measurements:
        if rec.local:
            continue
        if measured_with(course.root, rec.source, rec.source_sha256) is None:
            out.append(warning(rec.ref.path, rec.ref.line, "W705",
                               f"stale record {rec.key}: {', '.join(rec.source)} changed since it was measured on {rec.date}"))
        if rec.unit in HIGHER_IS_BETTER and rec.unit == rec.ceiling_unit and rec.value > 1.05 * rec.ceiling_value > 0 \
                and rec.key not in explained:
            out.append(warning(rec.ref.path, rec.ref.line, "W706",
                               f"suspect record {rec.key}: {rec.value:.4g} {rec.unit} beats its ceiling {rec.ceiling_value:.4g}"))
    return out


def _declaration_problems(course: Course) -> list[Diagnostic]:
    """labs/<MODULE>/plots.yml: well formed (E509), about the module's own labs (E510), and naming every variant
    that a record of a declared lab carries (E508), since the plots take their order and labels from it."""
    out: list[Diagnostic] = []
    for m in course.modules:
        decls, diags = plot_declarations(course.root, m.id)
        out += diags
        labs = {lab.name for lab in m.labs}
        for lab, decl in decls.items():
            if lab not in labs:
                out.append(error(decl.path, decl.line, "E510",
                                 f"{decl.path} declares the plot of lab '{lab}', which {m.id} does not have (labs: {', '.join(sorted(labs)) or 'none'})"))
        missing: dict[tuple[str, str], list[str]] = {}
        for rec in course.measurements:
            if rec.local or rec.raw.get("module") != m.id or rec.raw.get("lab") not in decls \
                    or rec.raw.get("kind") == "counter":  # profiler counters are quoted, never plotted
                continue
            decl = decls[rec.raw["lab"]]
            variant = str(rec.raw.get("variant", ""))
            if decl.label(variant) is None:
                missing.setdefault((decl.lab, variant), []).append(rec.key)
        for (lab, variant), keys in sorted(missing.items()):
            decl = decls[lab]
            out.append(error(decl.path, decl.line, "E508",
                             f"variant '{variant}' of {m.id}/{lab} (record {keys[0]}) is not in {decl.path}: add it under "
                             f"`{lab}: variants:` in the lab's order, with the label a reader sees"))
    return out


def _plot_problems(course: Course, path: str, line: int, func: str, prefix: str, *more: str) -> list[Diagnostic]:
    """A plot whose module declares its plots but not this lab (E511), or that cannot be drawn (E512)."""
    from ..render import plots

    out: list[Diagnostic] = []
    for each in (prefix, *more):
        module, _, rest = each.partition("/")
        lab = rest.split("/")[0]
        decl_file = course.root / PLOTS_FILE.format(module=module)
        if lab and decl_file.is_file() and lab not in plot_declarations(course.root, module)[0]:
            out.append(error(path, line, "E511", f"{func}(\"{each}\"): lab '{lab}' has no entry in {PLOTS_FILE.format(module=module)}, "
                                                 "which gives the plot its order and labels"))
    try:
        (plots.roofline_chart if func == "roofline" else plots.bar_chart)(course, prefix, *more)
    except KeyError:
        pass  # no records: E703 above
    except ValueError as exc:  # PlotError (labels that overlap) or a canvas refusal (text too small, too wide)
        out.append(error(path, line, "E512", f"{func}(\"{prefix}\") cannot be drawn: {exc}"))
    return out


BEYOND_CEILING = "measurements/beyond-ceiling.yml"


def beyond_ceiling(course: Course) -> tuple[set[str], list[Diagnostic]]:
    """measurements/beyond-ceiling.yml: record key -> why that record may beat its ceiling by more than 5%
    (a read-only stream against a read+write copy). Listed keys are exempt from W706; a key without a reason
    or without a record is E708, so the list cannot hide a record that no longer exists."""
    path = course.root / BEYOND_CEILING
    if not path.is_file():
        return set(), []
    raw, diags = load_yaml(path, BEYOND_CEILING)
    if raw is None:
        return set(), diags
    if not isinstance(raw, dict):
        return set(), diags + [error(BEYOND_CEILING, 1, "E708", "a mapping of record key -> the reason it may beat its ceiling")]
    keys = {m.key for m in course.measurements if not m.local}
    ok = set()
    for key, reason in raw.items():
        line = raw.line_of(key) if hasattr(raw, "line_of") else 1
        if key not in keys:
            diags.append(error(BEYOND_CEILING, line, "E708", f"no record {key}"))
        elif not isinstance(reason, str) or len(reason.split()) < 5:
            diags.append(error(BEYOND_CEILING, line, "E708", f"{key}: say in a sentence why it may beat its ceiling"))
        else:
            ok.add(key)
    return ok, diags
