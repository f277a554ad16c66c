"""`tutor bundle`: the zipped site works opened from disk (file://, no server), in headless Chromium.

The bundle is built once (mkdocs.yml with directory URLs off, built in code), unzipped, and read as a
learner would read it: every page's links name files that are there, index.html and a module page open
with no failed request and nothing asked of another host, figures drawn, a link followed, search answers.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from chromium import CHROMIUM, in_thread, need_chromium

ROOT = Path(__file__).resolve().parents[1]
MODULE = "modules/A02-memory-coalescing.html"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path]:
    """(the zip, the folder it was unzipped into)."""
    from tutor_build.bundle import make_bundle

    out = tmp_path_factory.mktemp("bundle")
    path, _ = make_bundle(ROOT, out / "course.zip")
    with zipfile.ZipFile(path) as z:
        z.extractall(out / "unzipped")
    return path, out / "unzipped" / path.stem


def _open(check, site: Path) -> None:
    """check(page, site) on a Chromium page that may read files only; every request for another host, every
    failed request and every page error is recorded and fails the test. On a thread of its own (chromium.py)."""
    need_chromium("bundle")

    def run() -> tuple[list, list, list]:
        from playwright.sync_api import sync_playwright

        from tutor_build.sheets_pdf import CHROMIUM_ARGS

        outside, failed, errors = [], [], []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context()
            page = context.new_page()

            def route(r):
                if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            page.on("requestfailed", lambda req: failed.append(f"{req.url} ({req.failure})"))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            try:
                check(page, site)
            finally:
                context.close()
                browser.close()
        return outside, failed, errors

    outside, failed, errors = in_thread(run)
    assert not outside, f"requests for other hosts: {outside}"
    assert not failed, f"failed requests: {failed}"
    assert not errors, f"page errors: {errors}"


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


def test_home_and_module_page_open_from_disk_with_figures_and_working_links(bundle):
    _open(_home_and_module_page, bundle[1])


def _home_and_module_page(page, site: Path) -> None:
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


def test_search_answers_from_disk(bundle):
    _open(_search, bundle[1])


def _search(page, site: Path) -> None:
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
