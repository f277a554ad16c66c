"""Reading a drawn figure back in the figure tests: the course's figures of one module, each drawn as the
site draws it and parsed, and the few ways the tests read a drawing (its texts, its titled rects, the numbers
it shows)."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor_build.figures import svg
from tutor_build.load import load_course

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"


@functools.lru_cache(maxsize=1)
def course():
    """The real course, loaded once per test process (its modules and figure specs are frozen)."""
    return load_course(ROOT)[0]


def module_fixtures(module_id: str):
    """The two module-scoped fixtures of a figure test file: `module` (the course's module) and `figs` (its
    figure specs by id). Use as `module, figs = module_fixtures("A01")`."""

    @pytest.fixture(scope="module")
    def module():
        return course().module(module_id)

    @pytest.fixture(scope="module")
    def figs(module):
        return {f.id: f for f in module.figures}

    return module, figs


def draw(figs, fig_id: str) -> ET.Element:
    """The figure drawn as the site draws it, parsed."""
    return ET.fromstring(svg(figs[fig_id]))


def texts(root: ET.Element) -> list[str]:
    """The text of every <text>, in drawing order (a <tspan>'s text left out)."""
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def rects(root: ET.Element) -> list[dict]:
    """Every rect with a <title> (the drawings name what each bar or cell is), in drawing order."""
    out = []
    for r in root.iter(f"{SVG}rect"):
        t = r.find(f"{SVG}title")
        if t is not None:
            out.append({"title": t.text, "x": float(r.get("x")), "y": float(r.get("y")),
                        "w": float(r.get("width")), "h": float(r.get("height")), "cls": r.get("class")})
    return out


_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def numbers(s: str, powers: bool = False) -> set[str]:
    """The numbers a text states, as written ("12.5", "1,024"), leaving out digits that are part of a name
    (H200) and citation keys. With powers, a power is one number: "2^20", and 2²⁰ is read as 2^20."""
    s = re.sub(r"\[@[^\]]*\]", "", s)
    if not powers:
        return set(re.findall(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?!\w)", s))
    s = re.sub(r"(\d)([⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: m.group(1) + "^" + m.group(2).translate(_SUP), s)
    return set(re.findall(r"(?<![\w.^])\d+(?:,\d{3})*(?:\.\d+)?(?:\^\d+)?(?![\w^])", s))


def shown(root: ET.Element, powers: bool = False) -> set[str]:
    """Every number the figure prints or states in a tooltip (the alt text itself left out)."""
    alt = root.find(f"{SVG}title").text
    out: set[str] = set()
    for el in root.iter():
        if el.tag == f"{SVG}text" or (el.tag == f"{SVG}title" and el.text != alt):
            out |= numbers(el.text or "", powers)
    return out


def placed(module) -> dict[str, int]:
    """Where the module's text places each figure: figure id -> section number."""
    from tutor_build.checks.figures import placements

    return {fig_id: number for fig_id, _, _, number in placements(module)}


def check_every_figure_draws_and_is_placed(module, figs) -> dict[str, int]:
    """At least three figures; each draws as an image titled with its alt text, at most 560 units wide, and is
    placed in a section. Returns the placements (figure id -> section number) for the module's own checks."""
    assert len(figs) >= 3
    where = placed(module)
    for fig_id, spec in figs.items():
        root = draw(figs, fig_id)
        assert root.get("role") == "img" and root.find(f"{SVG}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560
        assert fig_id in where, f"{fig_id} is declared but not placed"
    return where


def titles(root: ET.Element, tag: str = "rect") -> list[str]:
    """The <title> of every `tag` element that has one, in drawing order."""
    return [t.text for el in root.iter(f"{SVG}{tag}") for t in el.findall(f"{SVG}title")]
