"""The per-module summary behind `tutor check --format json`."""

from __future__ import annotations

from typing import Any

from .diagnostics import Diagnostic
from .mdscan import scan
from .model import SECTION_SPECS, Course

RULES = {
    "metadata": ("E10",), "sections-present": ("E20",), "analogy": ("E31",), "first-principles": ("E32",),
    "silicon": ("E33",), "labs-page": ("E34",), "performance": ("E35",), "tradeoffs": ("E36",),
    "production": ("E37",), "sources": ("E38",), "self-assessment": ("E39",), "labs": ("E40",),
    "cards": ("E50",), "citations": ("E60",), "measurements": ("E70", "W70"),
}


def summary(course: Course, diags: list[Diagnostic]) -> dict[str, Any]:
    modules = []
    for m in course.modules:
        mine = [d for d in diags if d.path.startswith(m.folder + "/") or d.path in (f"cards/{m.id}.yml",)
                or d.path.startswith(f"labs/{m.id}/")]
        rules = {name: not any(d.code.startswith(prefixes) for d in mine) for name, prefixes in RULES.items()}
        words = {spec.key: 0 for spec in SECTION_SPECS}
        for section in m.sections:
            words[section.spec.key] = scan(section.text).words()
        modules.append({
            "id": m.id,
            "title": m.title,
            "rules": rules,
            "words": words,
            "words_total": sum(words.values()),
            "labs": [{"name": lab.name, "paths": list(lab.paths)} for lab in m.labs],
            "cards": sum(1 for c in course.cards if c.module == m.id),
            "hours": {"read": m.hours.read, "lab": m.hours.lab, "drill": m.hours.drill},
        })
    return {
        "errors": sum(1 for d in diags if d.severity == "error"),
        "warnings": sum(1 for d in diags if d.severity == "warning"),
        "diagnostics": [{"path": d.path, "line": d.line, "code": d.code, "severity": d.severity, "message": d.message}
                        for d in diags],
        "modules": modules,
    }
