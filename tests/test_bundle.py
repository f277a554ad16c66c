"""`tutor bundle`: the zipped site works opened from disk (file://, no server), in headless Chromium.

The bundle is built once (mkdocs.yml with directory URLs off, built in code), unzipped, and read as a
learner would read it: every page's links name files that are there, index.html and a module page open
with no failed request and nothing asked of another host, figures drawn, a link followed, search answers.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"
MODULE = "modules/A02-memory-coalescing.html"

pytestmark = pytest.mark.browser


def _unavailable(reason: str):  # as tests/browser/conftest.py: a skip with its reason, a failure in CI
    if REQUIRE_ALL:
        pytest.fail(f"{reason} (TUTOR_REQUIRE_ALL=1)")
    print(f"SKIP bundle tests: {reason}", file=sys.stderr)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    """(the zip, the folder it was unzipped into)."""
    from tutor_build.bundle import make_bundle

    out = tmp_path_factory.mktemp("bundle")
    path, _ = make_bundle(ROOT, out / "course.zip")
    with zipfile.ZipFile(path) as z:
        z.extractall(out / "unzipped")
    return path, out / "unzipped" / path.stem


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    from tutor_build.sheets_pdf import CHROMIUM_ARGS

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A page that may read files only: any other request is stopped and recorded, as is every failure."""
    context = browser.new_context()
    pg = context.new_page()
    pg.outside, pg.failed, pg.errors = [], [], []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            pg.outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    pg.on("requestfailed", lambda req: pg.failed.append(f"{req.url} ({req.failure})"))
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    yield pg
    context.close()
    assert not pg.outside, f"requests for other hosts: {pg.outside}"
    assert not pg.failed, f"failed requests: {pg.failed}"
    assert not pg.errors, f"page errors: {pg.errors}"


_REF = re.compile(r'\s(?:href|src)="([^"]*)"')


def test_bundle_is_a_zip_of_the_site_without_directory_urls(bundle):
    path, site = bundle
    assert path.stat().st_size > 0
    assert (site / "index.html").is_file() and (site / MODULE).is_file()
    assert not (site / "modules" / "A02-memory-coalescing" / "index.html").exists()
    assert (site / "search" / "search_index.js").is_file()  # the index a script tag loads under file://


def test_every_link_and_asset_of_every_page_names_a_file(bundle):
    _, site = bundle
    broken, checked = [], 0
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site)
        if rel.as_posix() == "404.html":
            continue
        text = html.read_text(encoding="utf-8")
        for url in _REF.findall(text):
            if re.match(r"^(?:[a-z][a-z0-9+.-]*:|//|#|$)", url, re.I):
                continue
            path = unquote(url.split("#")[0].split("?")[0])
            if not path:
                continue
            checked += 1
            if not (html.parent / path).resolve().is_file():
                broken.append(f"{rel}: {url}")
    assert checked > 1000
    assert broken == []


def test_no_page_loads_anything_from_another_host(bundle):
    _, site = bundle
    loads = re.compile(r'<(?:script|img|iframe)[^>]*\ssrc="(?:https?:)?//|<link[^>]*rel="(?:stylesheet|preconnect)"'
                       r'[^>]*href="(?:https?:)?//|<link[^>]*href="(?:https?:)?//[^"]*"[^>]*rel="stylesheet"')
    offenders = [p.relative_to(site).as_posix() for p in site.rglob("*.html") if loads.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_home_and_module_page_open_from_disk_with_figures_and_working_links(page, bundle):
    _, site = bundle
    page.goto((site / "index.html").as_uri(), wait_until="load")
    assert "GPU + ML Expert Tutor" in page.title()
    page.click(f'.md-content a[href="{MODULE}"]')
    page.wait_for_load_state("load")
    assert page.url == (site / MODULE).as_uri()
    assert page.locator(".md-content h1").inner_text().startswith("A02")
    figures = page.locator(".tutor-figure svg")
    assert figures.count() >= 3
    for i in range(figures.count()):
        box = figures.nth(i).bounding_box()
        assert box and box["width"] > 100 and box["height"] > 50, f"figure {i} is not drawn"
    assert page.locator(".md-content math").count() > 0  # math is MathML, drawn without a script from elsewhere
    # the module's links to other pages open files that are there
    hrefs = page.eval_on_selector_all(".md-content a[href]", "as => as.map(a => a.href)")
    local = [h for h in hrefs if h.startswith("file:")]
    assert local
    for h in local:
        assert Path(unquote(urlparse(h).path)).is_file(), h


def test_search_answers_from_disk(page, bundle):
    _, site = bundle
    page.goto((site / "index.html").as_uri(), wait_until="load")
    search = page.locator(".md-search__input")
    search.click()
    page.wait_for_function("""() => !/initializing/i.test(
        document.querySelector(".md-search-result__meta")?.innerText || "initializing")""", timeout=20000)
    search.press_sequentially("coalescing", delay=30)  # typed: search listens to the keys
    page.wait_for_selector(".md-search-result__item", timeout=20000)
    first = page.locator(".md-search-result__item a").first.get_attribute("href")
    assert first and ".html" in first
    assert page.locator(".md-search-result__meta").inner_text().strip().lower() != "no matching documents"
