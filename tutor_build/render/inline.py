"""HTML post-processing of a page: inline SVG figures and plots, and find TeX left unrendered."""

from __future__ import annotations

import re

TOKEN = re.compile(r"(?P<p><p>)?@@TUTOR-SVG:(?P<key>[\w.\-]+)@@\s*(?P<caption>(?:(?!@@TUTOR-SVG:).)*?)\s*@@END-SVG@@(?(p)</p>)", re.DOTALL)
SVG_ELEMENT = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
# Code, preformatted text and rendered math may hold dollar signs and backslashes legitimately.
_SKIP = re.compile(r"<(pre|code|math|script|style|svg|textarea)\b.*?</\1>", re.DOTALL)
_RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\(?:frac|sum|sqrt|cdot|times|left|right|mathrm|text|begin)\b")


def inline_figures(page_html: str, svgs: dict[str, str]) -> tuple[str, list[str]]:
    """Replace each token (with its paragraph, when it has one of its own) by a <figure>. Returns the page and
    the keys it could not find, and any token left broken by the Markdown around it."""
    def swap(m: re.Match) -> str:
        key = m.group("key")
        svg = svgs.get(key)
        if svg is None:
            return m.group(0)
        caption = f"<figcaption>{m.group('caption')}</figcaption>" if m.group("caption") else ""
        return f'<figure class="tutor-figure" id="fig-{key.lower()}">{svg}{caption}</figure>'

    page_html = TOKEN.sub(swap, page_html)
    return page_html, re.findall(r"@@TUTOR-SVG:([\w.\-]+)@@", page_html)


def raw_tex(page_html: str) -> list[str]:
    """TeX that reached the reader as source text: a `$$`, a `\\(` or a TeX command outside code and math."""
    text = _SKIP.sub(" ", page_html)
    text = re.sub(r"<[^>]+>", " ", text)
    found, last = [], -10**9
    for m in _RAW_TEX.finditer(text):
        if m.start() - last > 80:  # one report per stretch of TeX, not one per command in it
            found.append(" ".join(text[max(0, m.start() - 30): m.end() + 40].split()))
        last = m.end()
    return found


def without_svg(page_html: str) -> str:
    """The page for the search index: drawings hold labels, not prose worth finding."""
    return SVG_ELEMENT.sub(" ", page_html)
