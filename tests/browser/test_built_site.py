"""The built real course, read as files: page weight, search index size, figures with alt text, no raw TeX,
previous/next on every module page. (The site is built once by conftest's site_dir fixture.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tutor_build.load import load_course
from tutor_build.render.inline import raw_tex

ROOT = Path(__file__).resolve().parents[2]
COURSE, _ = load_course(ROOT)
MODULES = [m.name for m in COURSE.modules]
MAX_MODULE_HTML = 600_000  # bytes of HTML of the heaviest module page
MAX_INDEX_PER_MODULE = 100_000  # characters of search text per module page
MAX_INDEX_COURSE_PAGES = 250_000  # bytes for the course-wide pages: bibliography, glossary, errata, sheets, tools


def _html(site_dir: Path, rel: str) -> str:
    return (site_dir / rel / "index.html").read_text(encoding="utf-8")


def _pages(site_dir: Path) -> list[Path]:
    return sorted(p for p in site_dir.rglob("*.html") if p.name != "404.html")


@pytest.mark.parametrize("name", MODULES)
def test_module_page_weight(site_dir, name):
    size = (site_dir / "modules" / name / "index.html").stat().st_size
    assert size <= MAX_MODULE_HTML, f"{name}: {size:,} bytes of HTML (goal {MAX_MODULE_HTML:,})"


def test_search_index_size_and_identifiers(site_dir):
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    per_page: dict[str, int] = {}
    for doc in index["docs"]:
        page = doc["location"].split("#")[0]
        per_page[page] = per_page.get(page, 0) + len(doc["text"]) + len(doc["title"])
    for name in MODULES:
        size = per_page.get(f"modules/{name}/", 0)
        assert 0 < size <= MAX_INDEX_PER_MODULE, f"{name}: {size:,} characters in the search index"
    total = (site_dir / "search" / "search_index.json").stat().st_size
    budget = MAX_INDEX_PER_MODULE * len(MODULES) + MAX_INDEX_COURSE_PAGES
    assert total <= budget, f"search index {total:,} bytes, more than {budget:,}"
    assert not any(p.startswith("code/") for p in per_page), "whole-file code pages are left out of search"
    text = " ".join(d["text"] for d in index["docs"])
    for identifier in ("tl.load", "cudaEventRecord", "hipMemcpy", "__syncthreads"):
        assert identifier in text, f"{identifier} is no longer findable"
    assert "<mrow>" not in text and "<mi>" not in text


@pytest.mark.parametrize("name", MODULES)
def test_no_prose_turned_into_a_code_block(site_dir, name):
    """A paragraph indented four spaces where Markdown no longer sees a list becomes a plain-text code block,
    its backticks and bold shown literally; the course writes code in fenced blocks, so Markdown syntax in
    a text block is such an accident."""
    import html as htmllib

    for m in re.finditer(r'<div class="language-text highlight"><pre>(.*?)</pre>', _html(site_dir, f"modules/{name}"), re.S):
        body = htmllib.unescape(re.sub(r"<[^>]+>", "", m.group(1)))
        assert not ("`" in body or "](" in body or "**" in body), f"{name}: prose shown as code: {body[:200]}"


def test_no_raw_tex_in_any_page(site_dir):
    found = {str(p.relative_to(site_dir)): raw_tex(p.read_text(encoding="utf-8")) for p in _pages(site_dir)}
    assert not {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("name", MODULES)
def test_module_figures_have_alt_text_and_captions(site_dir, name):
    page = _html(site_dir, f"modules/{name}")
    figures = re.findall(r'<figure class="tutor-figure" id="fig-[^"]+">(<svg.*?</svg>)(<figcaption>.*?</figcaption>)?</figure>',
                         page, re.DOTALL)
    module = next(m for m in COURSE.modules if m.name == name)
    concept = [f for f in figures if re.search(rf'id="fig-{module.id.lower()}-', page)]
    assert len(concept) >= 3, f"{name}: {len(concept)} figures"
    for svg, caption in figures:
        label = re.search(r'aria-label="([^"]*)"', svg)
        assert 'role="img"' in svg and label and len(label.group(1).split()) >= 4, svg[:200]
        assert caption and len(re.sub(r"<[^>]+>", "", caption).split()) >= 4
    assert "@@TUTOR-" not in page


def test_every_module_page_has_previous_and_next(site_dir):
    for i, name in enumerate(MODULES):
        page = _html(site_dir, f"modules/{name}")
        prev = re.search(r'<a class="tutor-pager-prev" href="\.\./([^/"]+)/" rel="prev">', page)
        nxt = re.search(r'<a class="tutor-pager-next" href="\.\./([^/"]+)/" rel="next">', page)
        assert (prev.group(1) if prev else None) == (MODULES[i - 1] if i else None), name
        assert (nxt.group(1) if nxt else None) == (MODULES[i + 1] if i + 1 < len(MODULES) else None), name
        assert "What to do next" in page and f"?deck=module:{COURSE.modules[i].id}" in page


def test_planned_modules_are_marked_not_linked(site_dir):
    page = _html(site_dir, "modules/A01-gpu-mental-model")
    assert re.search(r'<span class="tutor-planned" title="D07 [^"]+">D07 \(planned\)</span>', page)
    written = {m.id for m in COURSE.modules}
    for p in _pages(site_dir):
        for target in re.findall(r'href="(?:\.\./)*modules/([^/"]+)/', p.read_text(encoding="utf-8")):
            assert (site_dir / "modules" / target / "index.html").is_file(), f"{p}: dead link to {target}"
    assert all(mid in COURSE.planned for mid in written)


def test_glossary_terms_have_definitions_on_pages(site_dir):
    if not COURSE.glossary:
        pytest.fail("glossary.yml is missing")
    page = _html(site_dir, "modules/A01-gpu-mental-model")
    titles = re.findall(r'<abbr title="([^"]+)">(\w+)s?</abbr>', page)
    assert len(titles) >= 10 and len({t for _, t in titles}) == len(titles)  # each term once per page
    glossary = _html(site_dir, "glossary")
    assert all(f"<strong>{e.term}</strong>" in glossary for e in COURSE.glossary)
