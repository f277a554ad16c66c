"""Graded hints, one YAML file per lab beside its exercises: labs/<ID>/hints/<lab>.yml.
Level 1 is a question that points at the idea, level 2 the idea in words, level 3 the line of code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import Diagnostic, error
from ..yamlio import load_yaml

LEVELS = ("question", "idea", "line")
TODO = re.compile(r"\bTODO (\d+):")


@dataclass(frozen=True)
class Hint:
    todo: int
    title: str
    question: str
    idea: str
    line: dict[str, str]


def hints_file(module: str, lab: str) -> str:
    return f"labs/{module}/hints/{lab}.yml"


def todo_numbers(text: str) -> set[int]:
    return {int(n) for n in TODO.findall(text)}


def load_hints(root: Path, module: str, lab: str, vendors: tuple[str, ...]) -> tuple[list[Hint], list[Diagnostic]]:
    """The hints of one lab and every problem with its file (E406 missing, E407 malformed)."""
    rel = hints_file(module, lab)
    if not (root / rel).is_file():
        return [], [error(rel, 1, "E406", f"lab '{lab}' has no hints file {rel}")]
    data, diags = load_yaml(root / rel, rel)
    if data is None:
        return [], diags
    if not isinstance(data, dict) or not isinstance(data.get("hints"), list):
        return [], diags + [error(rel, 1, "E407", "expected a mapping with a list `hints`")]
    out = []
    for i, h in enumerate(data["hints"]):
        at = data["hints"].line_of(i)
        if not isinstance(h, dict):
            diags.append(error(rel, at, "E407", f"hint {i + 1} is not a mapping"))
            continue
        missing = [k for k in ("todo", "title", *LEVELS) if not h.get(k)]
        line = h.get("line") if isinstance(h.get("line"), dict) else {}
        absent = [v for v in vendors if not str(line.get(v, "")).strip()]
        if missing or absent or not str(h.get("todo", "")).isdigit():
            what = [f"lacks {', '.join(missing)}"] if missing else []
            what += [f"has no line for {', '.join(absent)}"] if absent and "line" not in missing else []
            what += [] if str(h.get("todo", "")).isdigit() else ["`todo` must be the TODO's number"]
            diags.append(error(rel, at, "E407", f"hint {i + 1}: {'; '.join(what)}"))
            continue
        out.append(Hint(int(h["todo"]), str(h["title"]), str(h["question"]).strip(), str(h["idea"]).strip(),
                        {k: str(v).rstrip() for k, v in line.items()}))
    return out, diags
