"""The prerequisite graph is acyclic; learning paths name modules that exist."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error
from ..model import Course


def find_cycle(edges: dict[str, tuple[str, ...]]) -> list[str]:
    """Return one cycle as a list of ids (first == last), or [] if the graph is acyclic."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    edges = {m.id: m.prerequisites for m in course.modules}
    cycle = find_cycle(edges)
    if cycle:
        first = course.module(cycle[0])
        line = first.raw.line_of("prerequisites") if hasattr(first.raw, "line_of") else 1
        out.append(error(first.ref.path, line, "E801", "prerequisite cycle: " + " -> ".join(cycle)))
    known = set(edges)
    for path in course.paths:
        for goal in path.goals:
            if goal not in known:
                out.append(error(path.ref.path, path.ref.line, "E802", f"path '{path.id}' names unknown module '{goal}'"))
        if not path.id or not path.title:
            out.append(error(path.ref.path, path.ref.line, "E802", "a learning path needs an id and a title"))
    return out
