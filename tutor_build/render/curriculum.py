"""Learning paths in dependency order, CURRICULUM.md, and the dependency graph as SVG."""

from __future__ import annotations

from html import escape
from math import ceil
from textwrap import wrap

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


# Graph geometry, in SVG user units (rendered 1:1 as CSS pixels, so text keeps its size on a phone and the
# wrapper scrolls). Titles wrap at WRAP characters; boxes are as wide as the widest line.
FONT_PX, LINE_H, WRAP = 13, 16, 22
PAD, GAP_X, LABEL_H, ARC_H, LANE_GAP = 10, 44, 34, 24, 8


def text_width(text: str, bold: bool = False) -> float:
    """Pixels a line takes at FONT_PX, rounded up from DejaVu Sans (the widest common sans-serif), so a
    box sized from it holds its text whatever sans-serif the reader's machine has."""
    em = 0.0
    for ch in text:
        if ch in " ilj.,:;'|!()-\u00b7I":
            em += 0.34
        elif ch in "ftr":
            em += 0.42
        elif ch in "mwMW":
            em += 1.0
        elif ch.isupper():
            em += 0.75
        else:
            em += 0.63
    return em * FONT_PX * (1.1 if bold else 1.0)


def _svg_text(text: str) -> str:
    """Escaped text for the SVG. The page's Markdown pass turns module ids in text (A01) into links, which
    would break the SVG; a character reference for 0 hides the id from that pass and reads the same."""
    return escape(text).replace("0", "&#48;")


def _id_key(mid: str) -> tuple:
    digits = "".join(ch for ch in mid if ch.isdigit())
    return (int(digits) if digits else 0, mid)


def graph_columns(tracks: dict[str, list[str]], prereqs: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """A column per module, placed in dependency order (ties by id): right of every prerequisite, so arrows
    point rightwards, and right of the module placed before it in its track, so a lane holds one box per
    column and no two boxes meet."""
    lane = {mid: track for track, mids in tracks.items() for mid in mids}
    last = {track: -1 for track in tracks}
    col: dict[str, int] = {}
    left = set(lane)
    while left:
        ready = [mid for mid in left if all(p in col or p not in lane for p in prereqs.get(mid, ()))]
        mid = min(ready or left, key=_id_key)  # none ready: a cycle, which the checks report
        col[mid] = max([last[lane[mid]] + 1] + [col[p] + 1 for p in prereqs.get(mid, ()) if p in col])
        last[lane[mid]] = col[mid]
        left.remove(mid)
    return col


def graph_svg(course: Course, link_prefix: str = "../") -> str:
    """Tracks as horizontal lanes; every module of the plan as a box (a link once it is written, dashed while
    planned), placed by :func:`graph_columns`; prerequisites as arrows. Titles wrap, never truncated."""
    written = {m.id: m for m in course.modules}
    titles = {**dict(getattr(course, "planned", {})), **{m.id: m.title for m in course.modules}}
    tracks: dict[str, list[str]] = {}
    for t in course.tracks:
        mids = [mid for mid in titles if (written[mid].track if mid in written else mid[:1]) == t]
        if mids:
            tracks[t] = sorted(mids, key=_id_key)
    prereqs = {m.id: m.prerequisites for m in course.modules}
    col = graph_columns(tracks, prereqs)
    lines = {mid: wrap(titles[mid], WRAP, break_long_words=False, break_on_hyphens=False) or [""] for mid in col}
    heads = {mid: f"{mid} · {fmt_hours(written[mid].hours.total)} h" if mid in written else f"{mid} · planned"
             for mid in col}
    longest = max([text_width(s) for ls in lines.values() for s in ls] + [text_width(h, True) for h in heads.values()] + [0])
    box_w = max(150, ceil(longest) + 2 * PAD)
    box_h = 2 * PAD + LINE_H * (1 + max((len(ls) for ls in lines.values()), default=1))
    lane_h = LABEL_H + box_h + ARC_H
    pos: dict[str, tuple[float, float]] = {}
    track_of: dict[str, str] = {}
    for lane, (t, mids) in enumerate(tracks.items()):
        for mid in mids:
            pos[mid] = (PAD + col[mid] * (box_w + GAP_X), lane * (lane_h + LANE_GAP) + LABEL_H)
            track_of[mid] = t
    width = PAD + (max(col.values(), default=0) + 1) * (box_w + GAP_X) - GAP_X + PAD
    height = max(0, len(tracks) * (lane_h + LANE_GAP) - LANE_GAP)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="tutor-graph" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="group" aria-labelledby="graph-title">'
           '<title id="graph-title">Module prerequisite graph</title>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor"/></marker></defs>']
    for lane, t in enumerate(tracks):
        y = lane * (lane_h + LANE_GAP)
        out.append(f'<rect class="lane" x="0" y="{y}" width="{width}" height="{lane_h}" rx="6"/>')
        out.append(f'<text class="lane-label" x="{PAD}" y="{y + 18}">Track {t}: {_svg_text(course.tracks[t])}</text>')
    for m in course.modules:
        for p in m.prerequisites:
            if p not in pos or m.id not in pos:
                continue
            (x1, y1), (x2, y2) = pos[p], pos[m.id]
            # Edges run in the gaps between columns and in the bands between rows, never across a box.
            sx, sy, ex, ey = x1 + box_w, y1 + box_h / 2, x2, y2 + box_h / 2
            gx, hx = sx + GAP_X / 2, ex - GAP_X / 2
            if y1 == y2 and col[m.id] - col[p] > 1:  # same lane, boxes between: under them
                band = y1 + box_h + ARC_H / 2
                d = f"M {x1 + box_w / 2} {y1 + box_h} V {band} H {x2 + box_w / 2} V {y2 + box_h}"
            elif col[m.id] - col[p] > 1:  # another lane, further on: along the band above the target
                d = f"M {sx} {sy} H {gx} V {y2 - 5} H {hx} V {ey} H {ex}"
            else:
                d = f"M {sx} {sy} H {gx} V {ey} H {ex}"
            out.append(f'<path class="edge" d="{d}" marker-end="url(#arrow)"/>')
    for mid, (x, y) in pos.items():
        m = written.get(mid)
        # Each line but the last ends in a space, and so does the id line, so that the text of the box (the
        # link's accessible name) reads as the title, not "hThe GPUmental model".
        last = len(lines[mid]) - 1
        title = "".join(f'<tspan x="{x + PAD}" dy="{LINE_H if i else 0}">{_svg_text(s + (" " if i < last else ""))}</tspan>'
                        for i, s in enumerate(lines[mid]))
        head = heads[mid]
        body = (f'<rect class="{"node" if m else "planned-node"} track-{escape(track_of[mid])}" x="{x}" y="{y}" '
                f'width="{box_w}" height="{box_h}" rx="8"/>'
                f'<text class="node-id" x="{x + PAD}" y="{y + PAD + FONT_PX}">{_svg_text(head + " ")}</text>'
                f'<text class="node-title" x="{x + PAD}" y="{y + PAD + FONT_PX + LINE_H}">{title}</text>')
        if m:
            out.append(f'<a href="{link_prefix}{m.url}" data-module="{mid}">{body}</a>')
        else:
            out.append(f'<g class="planned" data-module="{mid}">{body}</g>')
    out.append("</svg>")
    return "\n".join(out)
