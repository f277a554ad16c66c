"""Checks: pure functions Course -> list[Diagnostic]. They never raise and never stop at the first problem."""

from __future__ import annotations

from ..diagnostics import Diagnostic, sort_unique
from ..model import Course
from . import cards, figures, glossary, graph, labs, measurements, metadata, references, sections

ALL_CHECKS = (metadata.check, graph.check, sections.check, labs.check, cards.check, references.check,
              measurements.check, figures.check, glossary.check)


def run_all(course: Course, load_diags: list[Diagnostic] | None = None) -> list[Diagnostic]:
    found = list(load_diags or [])
    for check in ALL_CHECKS:
        found += check(course)
    return sort_unique(found)
