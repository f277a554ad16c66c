"""One bibliography: every citation resolves, every entry has a title, a year and a link."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error
from ..mdscan import scan
from ..model import Course


def citations(course: Course) -> list[tuple[str, int, str]]:
    """(path, line, key) for every citation in module sections, sheets and errata."""
    found = []
    texts = [(s.path, s.text) for m in course.modules for s in m.sections] + [(s.path, s.text) for s in course.sheets]
    for path, text in texts:
        for c in scan(text).citations:
            found += [(path, c.line, key) for key in c.keys]
    found += [(e.ref.path, e.ref.line, key) for m in course.modules for e in m.errata for key in e.cite]
    return found


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for path, line, key in citations(course):
        if key not in course.references:
            out.append(error(path, line, "E601", f"citation [@{key}] is not in references.yml"))
    for ref in course.references.values():
        if not ref.link:
            out.append(error(ref.ref.path, ref.ref.line, "E602", f"entry '{ref.key}' has no url, doi or arxiv"))
        if not ref.title or not ref.year:
            out.append(error(ref.ref.path, ref.ref.line, "E603", f"entry '{ref.key}' needs a title and a year"))
    return out
