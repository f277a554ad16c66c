"""TeX -> MathML at build time, so pages need no math library, no CDN, and print as they look."""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((?P<tex>.+?)\\\)</span>', re.DOTALL)
DISPLAY = re.compile(r'<div class="arithmatex">\\\[(?P<tex>.+?)\\\]</div>', re.DOTALL)


def _mathml(tex: str, display: bool) -> str:
    source = html.unescape(tex).strip()
    try:
        return convert(source, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - show the TeX rather than break the page; the check names it
        return f'<code class="tex-error">{html.escape(source)}</code>'


def tex_to_mathml(page_html: str) -> str:
    page_html = DISPLAY.sub(lambda m: f'<div class="math-display" tabindex="0">{_mathml(m.group("tex"), True)}</div>', page_html)
    return INLINE.sub(lambda m: _mathml(m.group("tex"), False), page_html)


def bad_tex(tex_sources: list[str]) -> list[str]:
    """The TeX snippets latex2mathml cannot convert (for the checks)."""
    bad = []
    for tex in tex_sources:
        try:
            convert(tex)
        except Exception:  # noqa: BLE001
            bad.append(tex)
    return bad
