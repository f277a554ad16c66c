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
        mathml = convert(source, display="block" if display else "inline")
        # The TeX rides along as alttext: the search index shows it instead of flattened MathML.
        return mathml.replace("<math ", f'<math alttext="{html.escape(" ".join(source.split()))}" ', 1)
    except Exception:  # noqa: BLE001 - show the TeX rather than break the page; the check names it
        return f'<code class="tex-error">{html.escape(source)}</code>'


def tex_to_mathml(page_html: str, display: dict[str, str] | None = None) -> str:
    """Inline math from arithmatex, display math from the tokens of :func:`stash_display_math`."""
    page_html = DISPLAY.sub(lambda m: f'<div class="math-display" tabindex="0">{_mathml(m.group("tex"), True)}</div>', page_html)
    for key, tex in (display or {}).items():
        token = DISPLAY_TOKEN.format(n=key)
        block = _mathml(html.escape(tex), True)
        # A token alone in its paragraph becomes a block; inside a list item's paragraph it stays a span
        # (a <div> may not sit inside a <p>) that the stylesheet displays as a block.
        page_html = page_html.replace(f"<p>{token}</p>", f'<div class="math-display" tabindex="0">{block}</div>')
        page_html = page_html.replace(token, f'<span class="math-display" tabindex="0">{block}</span>')
    return INLINE.sub(lambda m: _mathml(m.group("tex"), False), page_html)


DISPLAY_TOKEN = "@@TUTOR-MATH-{n}@@"
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def stash_display_math(markdown: str) -> tuple[str, dict[str, str]]:
    """Take every `$$ ... $$` display block out of the Markdown before it is parsed, wherever it stands
    (a list item, a tab, an admonition, the middle of a paragraph), leaving a token on the line it began.
    Markdown would otherwise turn a block inside a list item's paragraph into plain text."""
    out: list[str] = []
    stash: dict[str, str] = {}
    lines = markdown.split("\n")
    fence = None
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _FENCE.match(line)
        if opened and (fence is None or opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)):
            fence = opened.group(1) if fence is None else None
            out.append(line)
            i += 1
            continue
        stripped = line.strip()
        if fence is None and stripped.startswith("$$"):
            indent = line[: len(line) - len(line.lstrip())]
            one_line = stripped.endswith("$$") and len(stripped) > 4
            if one_line:
                tex, i = stripped[2:-2], i + 1
            else:
                body, j = [stripped[2:]], i + 1
                while j < len(lines) and not lines[j].strip().endswith("$$"):
                    body.append(lines[j].strip())
                    j += 1
                if j == len(lines):  # unclosed: leave it for the reader and the raw-TeX gate to see
                    out.append(line)
                    i += 1
                    continue
                body.append(lines[j].strip()[:-2])
                tex, i = "\n".join(body), j + 1
            key = str(len(stash))
            stash[key] = tex.strip()
            out.append(indent + DISPLAY_TOKEN.format(n=key))
            continue
        out.append(line)
        i += 1
    return "\n".join(out), stash


def bad_tex(tex_sources: list[str]) -> list[str]:
    """The TeX snippets latex2mathml cannot convert (for the checks)."""
    bad = []
    for tex in tex_sources:
        try:
            convert(tex)
        except Exception:  # noqa: BLE001
            bad.append(tex)
    return bad
