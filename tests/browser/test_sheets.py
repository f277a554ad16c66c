"""Reference sheets: every sheet page renders, the CUDA/HIP table is generated, each prints on <= 2 pages."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import axe_check

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p.stem for p in (ROOT / "sheets").glob("*.md"))


def test_every_sheet_source_is_built_and_listed(page, site_dir):
    from tutor_build.sheets_pdf import sheet_pages

    built = sheet_pages(site_dir)
    assert sorted(built) == SOURCES
    page.goto(page.base + "sheets/")
    hrefs = page.eval_on_selector_all(".md-content a", "as => as.map(a => a.getAttribute('href'))")
    for name in SOURCES:
        assert any(h and h.rstrip("/").endswith(name) for h in hrefs), f"index does not link {name}"


def test_sheets_render_without_leftover_placeholders(page, site_dir):
    for name in SOURCES:
        page.goto(page.base + f"sheets/{name}/")
        text = page.inner_text(".md-content")
        assert "{{" not in text and "}}" not in text, name
        assert page.locator(".md-content h1").count() == 1, name
        assert axe_check(page, ".md-content") == [], name


def test_cuda_hip_sheet_shows_the_generated_map(page):
    from tutor_build.hipify_map import sheet_rows

    page.goto(page.base + "sheets/cuda-hip/")
    cells = page.eval_on_selector_all(".md-content table td code", "cs => cs.map(c => c.innerText)")
    for _, cuda, hip in sheet_rows():
        assert cuda in cells and hip in cells, cuda


def _print(site_dir, out):
    from tutor_build.sheets_pdf import print_sheets

    return print_sheets(site_dir, out)


def test_every_sheet_prints_on_at_most_two_pages_a4_and_letter(site_dir, tmp_path, browser):
    # print_sheets drives its own Playwright; run it in a worker thread, away from the
    # session's browser event loop.
    with ThreadPoolExecutor(max_workers=1) as pool:
        results = pool.submit(_print, site_dir, tmp_path).result(timeout=600)
    assert sorted(results) == SOURCES
    for name, (a4, letter) in results.items():
        assert 1 <= a4 <= 2, f"{name}: {a4} pages on A4"
        assert 1 <= letter <= 2, f"{name}: {letter} pages on Letter"
        assert (tmp_path / f"{name}-a4.pdf").stat().st_size > 0
