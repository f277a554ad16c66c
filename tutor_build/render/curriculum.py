"""Learning paths in dependency order, CURRICULUM.md, and the dependency graph as SVG."""

from __future__ import annotations

from html import escape

from ..model import Course, LearningPath, Module


def closure(course: Course, goals: tuple[str, ...]) -> list[Module]:
    """The goal modules and every prerequisite they need, in dependency order (ties by id)."""
    by_id = {m.id: m for m in course.modules}
    needed: set[str] = set()
    stack = [g for g in goals if g in by_id]
    while stack:
        mid = stack.pop()
        if mid not in needed:
            needed.add(mid)
            stack += [p for p in by_id[mid].prerequisites if p in by_id]
    ordered: list[Module] = []
    placed: set[str] = set()
    while len(placed) < len(needed):
        ready = sorted(mid for mid in needed - placed if all(p in placed or p not in needed for p in by_id[mid].prerequisites))
        if not ready:  # a cycle: the checks report it; keep the rest in id order
            ready = sorted(needed - placed)
        placed.add(ready[0])
        ordered.append(by_id[ready[0]])
    return ordered


def all_paths(course: Course) -> list[tuple[LearningPath, list[Module]]]:
    paths = [(p, closure(course, p.goals)) for p in course.paths]
    full = LearningPath("full-course", "Full course", tuple(m.id for m in course.modules), paths[0][0].ref if paths else None)
    return paths + [(full, closure(course, full.goals))]


def hours(modules: list[Module]) -> float:
    return sum(m.hours.total for m in modules)


def fmt_hours(h: float) -> str:
    return f"{h:.1f}".rstrip("0").rstrip(".")


def curriculum_markdown(course: Course) -> str:
    total = hours(list(course.modules))
    lines = [
        "# Curriculum",
        "",
        "<!-- Generated from modules/*/module.yml and curriculum.yml by `tutor curriculum`; do not edit by hand. -->",
        "",
        f"{len(course.modules)} modules, {fmt_hours(total)} learner-hours (reading, labs and drills).",
        "",
    ]
    for track, title in course.tracks.items():
        mods = [m for m in course.modules if m.track == track]
        if not mods:
            continue
        lines += [f"## Track {track}: {title}", "", "| id | module | read | lab | drill | total | prerequisites |",
                  "|---|---|---|---|---|---|---|"]
        for m in mods:
            lines.append(f"| {m.id} | [{m.title}]({m.folder}/) | {fmt_hours(m.hours.read)} | {fmt_hours(m.hours.lab)} | "
                         f"{fmt_hours(m.hours.drill)} | {fmt_hours(m.hours.total)} | {', '.join(m.prerequisites) or '-'} |")
        lines.append("")
    lines += ["## Prerequisite graph", "", "```mermaid", "graph LR"]
    for m in course.modules:
        lines.append(f'  {m.id}["{m.id} {m.title}"]')
    for m in course.modules:
        for p in m.prerequisites:
            lines.append(f"  {p} --> {m.id}")
    lines += ["```", "", "## Learning paths", ""]
    for path, mods in all_paths(course):
        lines.append(f"### {path.title} ({fmt_hours(hours(mods))} h)")
        lines.append("")
        lines.append(" -> ".join(f"{m.id} {m.title}" for m in mods) if mods else "No module of this path is written yet.")
        lines.append("")
    return "\n".join(lines)


def graph_svg(course: Course, link_prefix: str = "../") -> str:
    """Tracks as horizontal lanes, modules as linked boxes placed by dependency depth, edges as curves."""
    depth: dict[str, int] = {}
    by_id = {m.id: m for m in course.modules}

    def level(mid: str, seen: frozenset = frozenset()) -> int:
        if mid in depth:
            return depth[mid]
        if mid in seen:
            return 0
        prereqs = [p for p in by_id[mid].prerequisites if p in by_id]
        depth[mid] = 1 + max((level(p, seen | {mid}) for p in prereqs), default=-1)
        return depth[mid]

    for m in course.modules:
        level(m.id)
    tracks = [t for t in course.tracks if any(m.track == t for m in course.modules)]
    box_w, box_h, col_w, lane_h, left = 170, 44, 210, 90, 150
    slots: dict[tuple[str, int], int] = {}
    pos: dict[str, tuple[int, int]] = {}
    for m in course.modules:
        if m.track not in tracks:
            continue
        lane = tracks.index(m.track)
        k = slots.get((m.track, depth[m.id]), 0)
        slots[(m.track, depth[m.id])] = k + 1
        pos[m.id] = (left + depth[m.id] * col_w + k * 24, 20 + lane * lane_h + k * 8)
    width = left + (max(depth.values(), default=0) + 1) * col_w + 40
    height = 20 + len(tracks) * lane_h + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="tutor-graph" viewBox="0 0 {width} {height}" '
           f'role="group" aria-labelledby="graph-title"><title id="graph-title">Module prerequisite graph</title>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor"/></marker></defs>']
    for i, t in enumerate(tracks):
        y = 10 + i * lane_h
        out.append(f'<rect class="lane" x="0" y="{y}" width="{width}" height="{lane_h - 6}" rx="6"/>')
        out.append(f'<text class="lane-label" x="10" y="{y + lane_h / 2}">Track {t}: {escape(course.tracks[t][:18])}</text>')
    for m in course.modules:
        for p in m.prerequisites:
            if p in pos and m.id in pos:
                (x1, y1), (x2, y2) = pos[p], pos[m.id]
                sx, sy, ex, ey = x1 + box_w, y1 + box_h / 2, x2, y2 + box_h / 2
                mx = (sx + ex) / 2
                out.append(f'<path class="edge" d="M {sx} {sy} C {mx} {sy}, {mx} {ey}, {ex} {ey}" marker-end="url(#arrow)"/>')
    for m in course.modules:
        if m.id not in pos:
            continue
        x, y = pos[m.id]
        out.append(f'<a href="{link_prefix}{m.url}"><rect class="node track-{m.track}" x="{x}" y="{y}" width="{box_w}" '
                   f'height="{box_h}" rx="8"/><text class="node-id" x="{x + 10}" y="{y + 18}">{m.id} · '
                   f'{fmt_hours(m.hours.total)} h</text><text class="node-title" x="{x + 10}" y="{y + 35}">'
                   f'{escape(m.title[:24])}</text></a>')
    out.append("</svg>")
    return "\n".join(out)
