"""Mentions of other modules in prose: a written module becomes a link, one that is only planned is marked
"planned" (never a dead link)."""

from __future__ import annotations

import posixpath
import re

from ..model import Course

MENTION = re.compile(r"(?<![\w/#.\-])([A-D]0[1-9])(?![\w\-])")
# Spans left alone: code, links and images, citations, placeholders, tags, math, attribute lists.
_PROTECTED = re.compile(r"`[^`\n]*`|!?\[[^\]\n]*\]\([^)\n]*\)|\[[^\]\n]*\]|\{\{.*?\}\}|<[^>\n]*>|\$[^$\n]*\$|\{[:#.][^}\n]*\}")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def mentions(text: str) -> list[tuple[int, str]]:
    """(line, module id) of every mention in prose, outside code, links, headings and math."""
    found = []
    for lineno, line in _prose_lines(text):
        for chunk in _PROTECTED.split(line):
            found += [(lineno, m.group(1)) for m in MENTION.finditer(chunk)]
    return found


def _prose_lines(text: str):
    fence = None
    for lineno, line in enumerate(text.split("\n"), 1):
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1) if fence is None else (None if line.strip().startswith(fence) else fence)
            continue
        if fence is None and not line.lstrip().startswith(("#", "--8<--", "$$", "<")) and not line.startswith("---"):
            yield lineno, line


def link_modules(markdown: str, course: Course, page_src: str, own_id: str = "") -> str:
    """Rewrite mentions in one page's Markdown; links are relative to the page's source file."""
    written = {m.id: m for m in course.modules}
    here = posixpath.dirname(page_src)

    def one(m: re.Match) -> str:
        mid = m.group(1)
        if mid == own_id:
            return mid
        if mid in written:
            target = posixpath.relpath(written[mid].page_path, here or ".")
            return f"[{mid}]({target})"
        if mid in course.planned:
            return f'<span class="tutor-planned" title="{mid} {course.planned[mid]}: planned, not written yet">{mid} (planned)</span>'
        return mid

    out, fence = [], None
    lines = markdown.split("\n")
    front = 0
    if lines and lines[0] == "---":  # front matter: leave it as it is
        front = next((i + 1 for i, line in enumerate(lines[1:], 1) if line == "---"), 0)
        out, lines = lines[:front], lines[front:]
    for line in lines:
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1) if fence is None else (None if line.strip().startswith(fence) else fence)
            out.append(line)
            continue
        # Headings, raw HTML blocks (a drawing's text is not prose) and snippet lines stay as written.
        if fence is not None or line.lstrip().startswith(("#", "--8<--", "$$", "<")) or line.startswith("---"):
            out.append(line)
            continue
        pieces, last = [], 0
        for p in _PROTECTED.finditer(line):
            pieces.append(MENTION.sub(one, line[last:p.start()]))
            pieces.append(p.group(0))
            last = p.end()
        pieces.append(MENTION.sub(one, line[last:]))
        out.append("".join(pieces))
    return "\n".join(out)
