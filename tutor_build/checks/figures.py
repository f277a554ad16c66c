"""Concept figures: declared in figures.yml, drawable, placed where the contract asks.

Every module shows at least MIN_FIGURES figures drawn by code: one in section 1 (the analogy made visible)
and one in section 2 or 3 (the principle or the silicon), each with alt text and a caption.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, error, warning
from ..figures import FigureError, svg
from ..mdscan import scan
from ..model import Course, Module

MIN_FIGURES = 3


def placements(m: Module) -> list[tuple[str, int, str, int]]:
    """(figure id, line, section file, section number) for every figure placeholder on the module's pages."""
    found = []
    for section in m.sections:
        for ph in scan(section.text).placeholders:
            if ph.func == "figure":
                found.append((ph.args[0] if ph.args else "", ph.line, section.path, section.spec.number))
    return found


def check_module(m: Module) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    declared: dict[str, object] = {}
    for spec in m.figures:
        where = (spec.ref.path, spec.ref.line)
        missing = [k for k in ("id", "draw", "alt", "caption") if not getattr(spec, k).strip()]
        if missing:
            diags.append(error(*where, "E902", f"figure {spec.id or '(no id)'} lacks {', '.join(missing)}"))
        if spec.id in declared:
            diags.append(error(*where, "E903", f"figure id {spec.id} is declared twice"))
        declared[spec.id] = spec
        if spec.draw and spec.alt.strip():
            try:
                svg(spec)
            except FigureError as exc:
                diags.append(error(*where, "E904", f"figure {spec.id} cannot be drawn: {exc}"))
            except ValueError as exc:  # the canvas refused it (too wide, text too small, unknown colour)
                diags.append(error(*where, "E904", f"figure {spec.id} cannot be drawn: {exc}"))
    placed = placements(m)
    for fig_id, line, path, _ in placed:
        if fig_id not in declared:
            known = ", ".join(sorted(declared)) or "none"
            diags.append(error(path, line, "E905", f"figure {fig_id!r} is not in {m.folder}/figures.yml (declared: {known})"))
    used = {fig_id for fig_id, *_ in placed}
    for spec in m.figures:
        if spec.id and spec.id not in used:
            diags.append(warning(spec.ref.path, spec.ref.line, "W906", f"figure {spec.id} is declared but no page shows it"))
    shown = [p for p in placed if p[0] in declared]
    first = m.sections[0].path if m.sections else m.ref.path
    if len({p[0] for p in shown}) < MIN_FIGURES:
        diags.append(error(first, 1, "E907", f"{m.id} shows {len({p[0] for p in shown})} concept figure(s); every module "
                           f"shows at least {MIN_FIGURES} (declare them in figures.yml, place them with {{{{ figure(\"id\") }}}})"))
    if not any(p[3] == 1 for p in shown):
        diags.append(error(first, 1, "E908", f"{m.id} has no figure in section 1: the analogy needs a picture"))
    if not any(p[3] in (2, 3) for p in shown):
        diags.append(error(first, 1, "E909", f"{m.id} has no figure in section 2 or 3: show the principle or the silicon"))
    return diags


def check(course: Course) -> list[Diagnostic]:
    return [d for m in course.modules for d in check_module(m)]
