"""Highlighted code as plain text: the same words for the search index, a fraction of the tags."""

from __future__ import annotations

import re

PRE = re.compile(r"(<pre[^>]*>)(.*?)(</pre>)", re.DOTALL)
SPAN = re.compile(r"</?span[^>]*>|<a [^>]*></a>|</?a[^>]*>")


def plain_code(html: str) -> str:
    return PRE.sub(lambda m: m.group(1) + SPAN.sub("", m.group(2)) + m.group(3), html)
