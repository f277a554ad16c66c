"""[@key] -> numbered links to the bibliography; the sources list -> full entries with anchors."""

from __future__ import annotations

import re

from ..mdscan import CITATION, CITE_KEY
from ..model import Reference
from .measured import _outside_code


def entry(ref: Reference) -> str:
    who = f"{ref.author}. " if ref.author else ""
    link = ref.link
    return f"{who}*{ref.title}*, {ref.year}. [{link}]({link})"


class Numberer:
    """Numbers citations in order of first use on one page."""

    def __init__(self, refs: dict[str, Reference], target: str = "#ref-{key}") -> None:
        self.refs, self.target, self.order = refs, target, {}

    def number(self, key: str) -> int:
        return self.order.setdefault(key, len(self.order) + 1)

    def link(self, key: str) -> str:
        if key not in self.refs:
            return f"[?{key}]"
        return f"[{self.number(key)}]({self.target.format(key=key)})"

    def replace(self, text: str) -> str:
        def cite(m: re.Match) -> str:
            return "<sup>" + ", ".join(self.link(k) for k in CITE_KEY.findall(m.group(1))) + "</sup>"

        return _outside_code(text, lambda chunk: CITATION.sub(cite, chunk))


SOURCE_ITEM = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d+[.)])\s+\[@(?P<key>[\w:.\-/]+)\]\s*[:\-–—]?\s*(?P<rest>.*)$")


def sources_list(text: str, numberer: Numberer) -> str:
    """Each `- [@key] what it supports` becomes `- [n] Author. *Title*, year. link — what it supports`."""
    out = []
    for line in text.splitlines():
        m = SOURCE_ITEM.match(line)
        if m and m.group("key") in numberer.refs:
            key = m.group("key")
            ref = numberer.refs[key]
            out.append(f'{m.group("indent")}- <span id="ref-{key}"></span>**[{numberer.number(key)}]** {entry(ref)}  \n'
                       f'{m.group("indent")}  {m.group("rest")}')
        else:
            out.append(line)
    return "\n".join(out)
