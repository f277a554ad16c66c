"""Diagnostics: what every check returns. They read like compiler output: `path:line: CODE message`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

ERROR = "error"
WARNING = "warning"
# Warnings that describe the course's growth, not a problem: shown by `tutor check`, never failing --strict
# or the strict site build (a mention of a module that is planned but not written yet).
NOT_STRICT = {"W110"}


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    code: str
    message: str
    severity: str = ERROR

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


def error(path: str, line: int, code: str, message: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), code, message, ERROR)


def warning(path: str, line: int, code: str, message: str) -> Diagnostic:
    return Diagnostic(path, max(line, 1), code, message, WARNING)


def sort_unique(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    return sorted(set(diags), key=lambda d: (d.path, d.line, d.code, d.message))


def errors(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diags if d.severity == ERROR]
