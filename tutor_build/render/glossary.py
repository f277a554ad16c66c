"""The course glossary (glossary.yml): a page of its own, and a hover definition (<abbr title>, shown by
Material's tooltips) on the first use of each term on every page."""

from __future__ import annotations

import html
import re

from ..model import Course, GlossaryEntry

# Text inside these elements is left alone: code, links, headings, math, drawings, existing abbreviations.
_SKIP = {"code", "pre", "a", "abbr", "h1", "h2", "h3", "h4", "h5", "h6", "math", "svg", "script", "style",
         "title", "button", "label", "textarea", "select", "option", "summary", "kbd"}
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^>]*?(/?)>")


def tooltip(e: GlossaryEntry) -> str:
    head = f"{e.expansion}: " if e.expansion else ""
    return f"{head}{e.definition}"


def _pattern(term: str) -> re.Pattern:
    return re.compile(r"(?<![\w/\-.])" + re.escape(term) + r"(?:s)?(?![\w/\-])")


def mark_terms(page_html: str, entries: tuple[GlossaryEntry, ...], skip_terms: set[str] = frozenset()) -> str:
    """Wrap the first use of each glossary term in the page's prose in an <abbr> with its definition."""
    todo = {e.term: (e, _pattern(e.term)) for e in entries if e.term not in skip_terms}
    out, pos = [], 0
    stack: list[str] = []
    for m in _TAG.finditer(page_html):
        text = page_html[pos:m.start()]
        out.append(_mark(text, todo) if not stack and todo else text)
        closing, name, selfclosing = m.group(1), m.group(2).lower(), m.group(3)
        if name in _SKIP and not selfclosing:
            if closing:
                if stack and stack[-1] == name:
                    stack.pop()
            else:
                stack.append(name)
        out.append(m.group(0))
        pos = m.end()
    rest = page_html[pos:]
    out.append(_mark(rest, todo) if not stack and todo else rest)
    return "".join(out)


def _mark(text: str, todo: dict) -> str:
    """Find each remaining term's first use in the text as it came (never inside a tooltip just added),
    then wrap them all."""
    hits = []
    for term in list(todo):
        if term not in text:  # a plain substring test first: most terms are absent from most runs of text
            continue
        entry, rx = todo[term]
        m = rx.search(text)
        if m and not any(m.start() < end and start < m.end() for start, end, _ in hits):
            hits.append((m.start(), m.end(), entry))
            del todo[term]
    for start, end, entry in sorted(hits, key=lambda h: h[0], reverse=True):
        title = html.escape(tooltip(entry), quote=True)
        text = f'{text[:start]}<abbr title="{title}">{text[start:end]}</abbr>{text[end:]}'
    return text


def glossary_page(course: Course) -> str:
    lines = ["---", "title: Glossary", "---", "", "# Glossary", "",
             "Every term and abbreviation the course uses. On every page, the first use of each is underlined with a "
             "dotted line: hover over it, or focus it, to read its definition here.", ""]
    for e in sorted(course.glossary, key=lambda e: e.term.lower()):
        taught = course.module(e.module) if e.module else None
        where = f" Taught in [{taught.id} · {taught.title}](modules/{taught.name}.md)." if taught else ""
        name = f"**{e.term}** ({e.expansion})" if e.expansion else f"**{e.term}**"
        anchor = re.sub(r"[^a-z0-9]+", "-", e.term.lower()).strip("-")
        lines.append(f'<span id="term-{anchor}"></span>{name}')
        lines.append(f":   {e.definition}{where}")
        lines.append("")
    return "\n".join(lines)
