"""`tutor book`: the whole course printed to one PDF through Chromium, read back with pypdf.

The real course is built and printed once: its pages are counted, the contents list every chapter on
the page it starts, each page carries its number, every module title and every figure (its caption and
the text drawn in it) is in the book, code wraps and every tab panel prints. The fake course checks the
module PDFs: a module page links its PDF only while the PDF was printed from that page, and the linked
file is in the built site.
"""

from __future__ import annotations

import os
import re
import unicodedata
import shutil
from html import unescape
from pathlib import Path

import pytest
from chromium import CHROMIUM, in_thread, need_chromium

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser


def _need_chromium():
    need_chromium("book")


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", unicodedata.normalize("NFKC", text).lower())


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """(course, built site, BookResult, text of each page) for the real course."""
    _need_chromium()
    from tutor_build.book import build_site, make_book
    from tutor_build.load import load_course

    course, _ = load_course(ROOT)
    tmp = tmp_path_factory.mktemp("book")
    site = Path(os.environ["TUTOR_SITE_DIR"]) if os.environ.get("TUTOR_SITE_DIR") else tmp / "site"
    if not os.environ.get("TUTOR_SITE_DIR"):
        build_site(ROOT, site)
    result = in_thread(make_book, ROOT, tmp / "out", site_dir=site, executable_path=CHROMIUM)
    return course, site, result, Pages(Path(result.pdf))


class Pages:
    """The text of each page of a PDF, extracted when first asked for (pypdf takes ~0.2 s a page)."""

    def __init__(self, pdf: Path):
        from pypdf import PdfReader

        self.reader = PdfReader(str(pdf))
        self.cache: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.reader.pages)

    def __getitem__(self, i: int) -> str:
        if i not in self.cache:
            self.cache[i] = self.reader.pages[i].extract_text() or ""
        return self.cache[i]


def test_book_counts_its_pages_and_lists_every_chapter_where_it_starts(printed):
    from tutor_build.book import chapters

    course, _, result, texts = printed
    assert result.pages == len(texts) > 20 * len(course.modules)
    chs = chapters(course)
    assert [c.key for c in chs] == [m.id for m in course.modules] + ["glossary", "references", "errata"]
    assert list(result.starts) == [c.key for c in chs]
    contents = _squash(" ".join(texts[i] for i in range(result.starts[chs[0].key] - 1)))
    for c in chs:
        start = result.starts[c.key]
        assert _squash(c.title) + str(start) in contents, f"the contents lack {c.title} on page {start}"
        assert _squash(c.title) in _squash(texts[start - 1]), f"{c.title} does not start on page {start}"
    starts = list(result.starts.values())
    assert starts == sorted(starts) and starts[-1] <= result.pages
    # the pages of a chapter carry, in their footer, the chapter's title and the book's page number
    ends = starts[1:] + [result.pages + 1]
    for c, first, end in zip(chs, starts, ends):
        for n in sorted({first, first + 1, end - 1}):
            flat = _squash(texts[n - 1])
            assert f"{n}{_squash(c.title)}" in flat or f"{_squash(c.title)}{n}" in flat, f"page {n} ({c.title})"
    print(f"\nbook: {result.pages} pages, {result.bytes / 1e6:.1f} MB")


def test_every_module_title_and_every_figure_is_in_the_book(printed):
    course, site, result, texts = printed
    from tutor_build.book import page_file

    keys = list(result.starts)
    for m in course.modules:
        first = result.starts[m.id]
        last = result.starts[keys[keys.index(m.id) + 1]] - 1
        assert _squash(f"{m.id} · {m.title}") in _squash(texts[first - 1])
        html = (site / page_file(site, m.page_path)).read_text(encoding="utf-8")
        figures = [re.search(rf'<figure class="tutor-figure" id="fig-{m.id.lower()}-{re.escape(f.id)}"[^>]*>(.*?)</figure>',
                             html, re.S) for f in m.figures]
        assert len(m.figures) >= 3 and all(figures), m.id
        figures = [f.group(1) for f in figures]
        captions = [f"Figure {m.id}.{n}." for n in range(1, len(m.figures) + 1)]
        chapter = ""
        for n in range(first, last + 1):  # read on until the last caption
            chapter += "\n" + texts[n - 1]
            if all(c in chapter for c in captions):
                break
        missing = [c for c in captions if c not in chapter]
        assert missing == [], f"not in the book: {missing}"
        flat = _squash(chapter)
        for fig in figures:  # the drawing itself printed: the words drawn in the SVG are in the text
            drawn = [_squash(unescape(re.sub(r"<[^>]+>", "", t))) for t in re.findall(r"<text[^>]*>(.*?)</text>", fig, re.S)]
            drawn = [t for t in drawn if len(t) >= 4]
            if drawn:
                found = sum(t in flat for t in drawn)
                assert found >= max(1, len(drawn) // 2), f"{m.id}: a figure's drawing is missing ({drawn[:4]})"


def test_code_wraps_every_tab_prints_and_solutions_open(printed):
    course, _, result, texts = printed
    assert result.overflowing_code == []
    assert result.hidden_tabs == 0
    a02 = "\n".join(texts[n - 1] for n in range(result.starts["A02"], result.starts["A03"]))
    assert a02.count("Tab: CUDA") >= 2 and a02.count("Tab: HIP") >= 2  # each panel printed under its label
    assert "Model answer" in a02  # collapsed answers print open


def test_each_module_has_its_pdf_of_its_own_pages(printed):
    from tutor_build.book import count_pages

    course, _, result, _ = printed
    keys = list(result.starts)
    out = Path(result.pdf).parent
    for m in course.modules:
        span = result.starts[keys[keys.index(m.id) + 1]] - result.starts[m.id]
        assert result.module_pdfs[m.id] == f"{m.id}.pdf"
        assert count_pages(out / f"{m.id}.pdf") == span


def test_a_module_page_links_its_pdf_only_while_it_was_printed_from_that_page(pristine_course, tmp_path):
    _need_chromium()
    from tutor_build.book import BOOK_DIR, build_site, make_book

    root = tmp_path / "course"
    shutil.copytree(pristine_course, root)
    build_site(root, tmp_path / "site0")
    assert not list((tmp_path / "site0").rglob("*.pdf"))  # nothing printed yet: no link, no file
    assert ".pdf" not in (tmp_path / "site0/modules/A01-fake-basics/index.html").read_text()
    result = in_thread(make_book, root, site_dir=tmp_path / "site0", executable_path=CHROMIUM)
    assert sorted(result.module_pdfs) == ["A01", "A02"]
    assert (root / BOOK_DIR / "manifest.json").is_file()
    # one module's text changes after the print: its PDF is stale, the other's is current
    analogy = next((root / "modules").glob("A02-*/1-analogy.md"))
    analogy.write_text(analogy.read_text() + "\nOne more sentence after the print.\n")
    site = tmp_path / "site1"
    build_site(root, site)
    linked = {}
    for html in site.glob("modules/*/index.html"):
        for href in re.findall(r'href="([^"]+\.pdf)"', html.read_text()):
            linked[html.parent.name] = href
            assert (html.parent / href).resolve().is_file(), f"{html}: {href} is not in the site"
    assert linked == {"A01-fake-basics": "../../downloads/pdf/A01.pdf"}
    one = in_thread(make_book, root, tmp_path / "one", site_dir=site, module="A02", executable_path=CHROMIUM)
    assert one.starts == {"A02": 1} and one.pages >= 1 and Path(one.pdf).name == "A02-a4.pdf"
