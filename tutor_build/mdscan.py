"""A small line scanner for the Markdown the course writes: headings, fences, prose, citations, placeholders.

It is not a Markdown renderer. It answers the questions the contract asks (is there a heading, a code
block, a citation on this line?) and keeps every answer's line number.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*(\{[^}]*\})?\s*#*\s*$")
CITATION = re.compile(r"\[(@[\w:.\-/]+(?:\s*;\s*@[\w:.\-/]+)*)\]")
CITE_KEY = re.compile(r"@([\w:.\-/]+)")
PLACEHOLDER = re.compile(r"\{\{\s*(?P<func>[a-z_]+)\((?P<args>[^)]*)\)\s*\}\}")
SNIPPET = re.compile(r"^\s*-{1,}8<-{1,}\s+[\"'](?P<path>[^\"']+)[\"']\s*$")
INLINE_CODE = re.compile(r"`[^`\n]+`")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
MATH_BLOCK = re.compile(r"^\s*\$\$")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Fence:
    line: int
    indent: int
    info: str
    body_lines: tuple[str, ...]

    @property
    def snippet_paths(self) -> list[str]:
        return [m.group("path") for m in (SNIPPET.match(b) for b in self.body_lines) if m]

    @property
    def is_snippet_only(self) -> bool:
        meaningful = [b for b in self.body_lines if b.strip()]
        return bool(meaningful) and all(SNIPPET.match(b) for b in meaningful)


@dataclass(frozen=True)
class Citation:
    keys: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Placeholder:
    func: str
    args: tuple[str, ...]
    line: int
    raw: str


@dataclass
class Doc:
    headings: list[Heading] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    prose: list[tuple[int, str]] = field(default_factory=list)  # (line, text) outside fences
    citations: list[Citation] = field(default_factory=list)
    placeholders: list[Placeholder] = field(default_factory=list)
    snippets: list[tuple[int, str]] = field(default_factory=list)  # (line, path) anywhere

    def words(self) -> int:
        """Prose words: outside fences and display math, inline code and placeholders removed."""
        count = 0
        in_math = False
        for _, text in self.prose:
            if MATH_BLOCK.match(text):
                in_math = not in_math if text.strip().count("$$") == 1 else in_math
                continue
            if in_math:
                continue
            text = PLACEHOLDER.sub(" ", INLINE_CODE.sub(" ", text))
            count += len(WORD.findall(text))
        return count

    def has_heading(self, pattern: str) -> Heading | None:
        rx = re.compile(pattern, re.IGNORECASE)
        return next((h for h in self.headings if rx.search(h.text)), None)


def split_args(args: str) -> tuple[str, ...]:
    return tuple(a.strip().strip("\"'") for a in args.split(",") if a.strip())


@functools.lru_cache(maxsize=1024)  # each check scans every section again; a Doc is only read
def scan(text: str) -> Doc:
    doc = Doc()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        snip = SNIPPET.match(line)
        if snip:
            doc.snippets.append((lineno, snip.group("path")))
        opened = FENCE_OPEN.match(line)
        if opened:
            fence = opened.group("fence")
            closer = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not closer.match(lines[j]):
                body.append(lines[j])
                m = SNIPPET.match(lines[j])
                if m:
                    doc.snippets.append((j + 1, m.group("path")))
                j += 1
            doc.fences.append(Fence(lineno, len(opened.group("indent")), opened.group("info").strip(), tuple(body)))
            i = j + 1
            continue
        heading = HEADING.match(line)
        if heading:
            doc.headings.append(Heading(len(heading.group("hashes")), heading.group("text").strip(), lineno))
        doc.prose.append((lineno, line))
        for m in CITATION.finditer(line):
            doc.citations.append(Citation(tuple(CITE_KEY.findall(m.group(1))), lineno))
        for m in PLACEHOLDER.finditer(line):
            doc.placeholders.append(Placeholder(m.group("func"), split_args(m.group("args")), lineno, m.group(0)))
        i += 1
    return doc
