"""Abbreviations: every one a module uses is in the glossary, or defined on the page before its first use
("high-bandwidth memory (HBM)")."""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, error
from ..model import Course
from ..render.modlinks import _PROTECTED, _prose_lines

ABBREVIATION = re.compile(r"(?<![\w\-/.])([A-Z][A-Z0-9]{1,7})s?(?![\w\-])")
MODULE_ID = re.compile(r"[A-D]0[1-9]")


def check(course: Course) -> list[Diagnostic]:
    known = {e.term for e in course.glossary}
    out: list[Diagnostic] = []
    for m in course.modules:
        defined: set[str] = set()
        reported: set[str] = set()
        for section in m.sections:
            for line, text in _prose_lines(section.text):
                for chunk in _PROTECTED.split(text):
                    for hit in ABBREVIATION.finditer(chunk):
                        word = hit.group(1)
                        if word in known or MODULE_ID.fullmatch(word) or not re.search(r"[A-Z]{2}|[A-Z]\d", word):
                            continue
                        if chunk[max(0, hit.start() - 1):hit.start()] == "(" and chunk[hit.end():hit.end() + 1] == ")":
                            defined.add(word)  # "... memory (HBM)": the page defines it here
                            continue
                        if word not in defined and word not in reported:
                            reported.add(word)
                            out.append(error(section.path, line, "E112",
                                             f"{word} is used before the page defines it and is not in glossary.yml"))
    return out
