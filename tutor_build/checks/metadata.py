"""module.yml: required keys, types, no unknown keys, ids that match their folders."""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, error
from ..load import MODULE_DIR
from ..model import LAB_PATHS, Course, Module

REQUIRED = ("id", "title", "track", "summary", "hours", "prerequisites", "concepts", "headline", "labs")
OPTIONAL = ("vendor_scope", "counterpart", "player")
MODULE_ID = re.compile(r"^[A-D]0[1-9]$")
SCOPES = ("both", "nvidia-only", "amd-only")


def _check_module(course: Course, m: Module) -> list[Diagnostic]:
    raw, path = m.raw, m.ref.path
    out: list[Diagnostic] = []
    if getattr(raw, "broken", False):
        return out
    line = getattr(raw, "line_of", lambda key: 1)
    for key in REQUIRED:
        if key not in raw:
            out.append(error(path, 1, "E101", f"missing required key '{key}'"))
    for key in raw:
        if key not in REQUIRED + OPTIONAL:
            out.append(error(path, line(key), "E102", f"unknown key '{key}' (allowed: {', '.join(REQUIRED + OPTIONAL)})"))
    folder = MODULE_DIR.match(m.name)
    if not folder:
        out.append(error(path, 1, "E105", f"module folder '{m.name}' must be named <ID>-<slug>, e.g. A02-memory-coalescing"))
    if "id" in raw:
        if not MODULE_ID.match(m.id):
            out.append(error(path, line("id"), "E103", f"id '{m.id}' must be a track letter A-D and two digits"))
        elif folder and folder.group("id") != m.id:
            out.append(error(path, line("id"), "E106", f"id '{m.id}' does not match its folder '{m.name}'"))
    for key in ("title", "summary", "headline"):
        if key in raw and not isinstance(raw[key], str) or (key in raw and not str(raw[key]).strip()):
            out.append(error(path, line(key), "E103", f"'{key}' must be non-empty text"))
    if "track" in raw:
        if m.track not in course.tracks:
            out.append(error(path, line("track"), "E103", f"track '{m.track}' is not one of {', '.join(course.tracks)}"))
        elif m.id[:1] != m.track:
            out.append(error(path, line("track"), "E103", f"track '{m.track}' does not match id '{m.id}'"))
    if "hours" in raw:
        hours = raw["hours"]
        if not isinstance(hours, dict) or set(hours) != {"read", "lab", "drill"}:
            out.append(error(path, line("hours"), "E103", "hours must be {read, lab, drill}"))
        else:
            for key in ("read", "lab", "drill"):
                value = hours[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    out.append(error(path, hours.line_of(key), "E103", f"hours.{key} must be a number > 0"))
    for key in ("prerequisites", "concepts", "labs"):
        if key in raw and not isinstance(raw[key], list):
            out.append(error(path, line(key), "E103", f"'{key}' must be a list"))
    if isinstance(raw.get("concepts"), list) and not raw["concepts"]:
        out.append(error(path, line("concepts"), "E103", "'concepts' must name at least one concept"))
    if isinstance(raw.get("prerequisites"), list):
        known = {mod.id for mod in course.modules}
        for i, prereq in enumerate(raw["prerequisites"]):
            if str(prereq) not in known:
                out.append(error(path, raw["prerequisites"].line_of(i), "E104", f"prerequisite '{prereq}' is not a module"))
    if isinstance(raw.get("labs"), list):
        if not raw["labs"]:
            out.append(error(path, line("labs"), "E103", "'labs' must name at least one lab"))
        for lab in m.labs:
            if not re.match(r"^[a-z][a-z0-9_]*$", lab.name):
                out.append(error(path, lab.ref.line, "E103", f"lab name '{lab.name}' must be lower_snake_case"))
            for p in lab.paths:
                if p not in LAB_PATHS:
                    out.append(error(path, lab.ref.line, "E404", f"lab '{lab.name}' has unknown path '{p}' (allowed: {', '.join(LAB_PATHS)})"))
        for i, item in enumerate(raw["labs"]):
            if not isinstance(item, (str, dict)) or (isinstance(item, dict) and not item.get("name")):
                out.append(error(path, raw["labs"].line_of(i), "E103", "a lab is a name or {name, paths}"))
    if m.vendor_scope not in SCOPES:
        out.append(error(path, line("vendor_scope"), "E103", f"vendor_scope must be one of {', '.join(SCOPES)}"))
    elif m.vendor_scope != "both" and not m.counterpart:
        out.append(error(path, line("vendor_scope"), "E108", f"vendor_scope '{m.vendor_scope}' needs 'counterpart:' naming the other vendor's equivalent"))
    if m.player and not (course.root / "docs" / "players" / f"{m.player}.md").is_file():
        out.append(error(path, line("player"), "E109", f"player '{m.player}' has no page docs/players/{m.player}.md"))
    return out


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: dict[str, str] = {}
    for m in course.modules:
        out += _check_module(course, m)
        if m.id in seen:
            out.append(error(m.ref.path, 1, "E107", f"module id '{m.id}' is also used by {seen[m.id]}"))
        seen.setdefault(m.id, m.ref.path)
    return out
