"""What the search index gets from a page: prose as it is, code as the identifiers in it (each once, in
order, so `tl.load` or `cudaMemcpyAsync` is still found without indexing every line), math as its TeX."""

from __future__ import annotations

import html
import re

PRE = re.compile(r"(<pre[^>]*>)(.*?)(</pre>)", re.DOTALL)
TAG = re.compile(r"<[^>]+>")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MATH = re.compile(r'<math\b[^>]*?(?:alttext="(?P<tex>[^"]*)")?[^>]*>.*?</math>', re.DOTALL)


def code_words(code_html: str) -> str:
    seen: dict[str, None] = {}
    for word in IDENT.findall(html.unescape(TAG.sub(" ", code_html))):
        if len(word) > 1:
            seen.setdefault(word, None)
    return html.escape(" ".join(seen))


def plain_code(page_html: str) -> str:
    page_html = PRE.sub(lambda m: m.group(1) + code_words(m.group(2)) + m.group(3), page_html)
    return MATH.sub(lambda m: f" {m.group('tex') or ''} ", page_html)
