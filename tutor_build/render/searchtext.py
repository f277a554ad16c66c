"""What the search index gets from a page: prose as it is, code as the identifiers in it (each once per
section, in order, so `tl.load` or `cudaMemcpyAsync` is still found without indexing every line), math as
its TeX."""

from __future__ import annotations

import html
import re

PRE = re.compile(r"(<pre[^>]*>)(.*?)(</pre>)", re.DOTALL)
TAG = re.compile(r"<[^>]+>")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MATH = re.compile(r'<math\b[^>]*?(?:alttext="(?P<tex>[^"]*)")?[^>]*>.*?</math>', re.DOTALL)


HEADING = re.compile(r"<h[1-6]\b")


def code_words(code_html: str, seen: dict[str, None] | None = None) -> str:
    """The identifiers of a code block, each once, leaving out those already in `seen` (and adding them)."""
    seen = {} if seen is None else seen
    new: list[str] = []
    for word in IDENT.findall(html.unescape(TAG.sub(" ", code_html))):
        if len(word) > 1 and word not in seen:
            seen[word] = None
            new.append(word)
    return html.escape(" ".join(new))


def plain_code(page_html: str) -> str:
    """Code as identifiers, each once per section: the search index splits a page at its headings, and the
    CUDA, HIP and Triton tabs of one lab (exercise and solution) repeat most of their names."""
    out, pos, seen = [], 0, {}
    for m in PRE.finditer(page_html):
        before = page_html[pos:m.start()]
        if HEADING.search(before):
            seen = {}
        out += [before, m.group(1), code_words(m.group(2), seen), m.group(3)]
        pos = m.end()
    out.append(page_html[pos:])
    return MATH.sub(lambda m: f" {m.group('tex') or ''} ", "".join(out))
