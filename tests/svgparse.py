"""Reading a drawn figure back in the figure tests."""

from __future__ import annotations

import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def rects(root: ET.Element) -> list[dict]:
    """Every rect with a <title> (the drawings name what each bar or cell is), in drawing order."""
    out = []
    for r in root.iter(f"{SVG}rect"):
        t = r.find(f"{SVG}title")
        if t is not None:
            out.append({"title": t.text, "x": float(r.get("x")), "y": float(r.get("y")),
                        "w": float(r.get("width")), "h": float(r.get("height")), "cls": r.get("class")})
    return out
