"""Every kind of page, as a reader meets it: no serious accessibility violation on the whole document in
the light and the dark scheme, nothing loaded from another host, and search that finds code identifiers."""

from __future__ import annotations

import pytest
from conftest import axe_check

PAGES = ["", "curriculum/", "tracks/A/", "modules/A01-gpu-mental-model/", "modules/A02-memory-coalescing/",
         "modules/B04-fp8-and-below/", "modules/B07-sharding/", "modules/C07-capstone-serving-node/", "planner/",
         "cards/", "players/", "players/pipeline-schedules/", "sheets/", "sheets/hardware/", "references/", "SETUP/"]

pytestmark = pytest.mark.browser


def every_page(site_dir) -> list[str]:
    """Every page of the site; of the whole-file code pages, one per language (they share one template)."""
    paths, languages = [], set()
    for html in sorted(site_dir.rglob("index.html")):
        rel = html.parent.relative_to(site_dir).as_posix()
        rel = "" if rel == "." else rel + "/"
        if rel.startswith("code/"):
            suffix = rel.rstrip("/").rsplit(".", 1)[-1]
            if suffix in languages:
                continue
            languages.add(suffix)
        paths.append(rel)
    return paths


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_has_no_serious_accessibility_violation(page, site_dir, scheme):
    page.emulate_media(color_scheme=scheme)
    found = {}
    pages = every_page(site_dir)
    assert set(PAGES) <= set(pages)
    for path in pages:
        page.goto(page.base + path)
        assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == ("slate" if scheme == "dark" else "default")
        problems = axe_check(page)
        if problems:
            found[path] = problems
    assert not found, found


def test_math_is_mathml_and_figures_are_inline_svg(page):
    page.goto(page.base + "modules/A02-memory-coalescing/")
    assert page.locator("math").count() > 5
    figures = page.locator("figure.tutor-figure svg[role=img]")
    assert figures.count() >= 4  # three concept figures at least, and the measurement plot
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0 && i.src.startsWith(location.origin))")


# Each identifier with the modules whose pages hold it (cudaEventRecord: A08's timers and B07's two-stage lab)
@pytest.mark.parametrize("query,where", [("tl.load", ("A01",)), ("cudaEventRecord", ("A08", "B07")),
                                         ("hipMemcpyPeerAsync", ("B07",))])
def test_search_finds_code_identifiers(page, query, where):
    page.goto(page.base)
    page.keyboard.press("/")  # Material's shortcut opens the search box
    page.fill("input.md-search__input", query)
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    links = page.locator(".md-search-result__item a").evaluate_all("els => els.map(e => e.href)")
    assert any(module in href for href in links for module in where), links


def test_the_first_results_for_an_identifier_contain_it(page, site_dir):
    """A dotted identifier is one search term: every one of the first three results holds `tl.load`."""
    page.goto(page.base)
    page.keyboard.press("/")
    page.fill("input.md-search__input", "tl.load")
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    links = page.locator(".md-search-result__item > a").evaluate_all("els => els.slice(0, 3).map(e => e.href)")
    assert links
    for href in links:
        rel = href.split(page.base, 1)[1].split("#")[0].split("?")[0]
        assert "tl.load" in (site_dir / rel / "index.html").read_text(encoding="utf-8"), href


def test_a_click_on_a_tab_switches_every_tab_set(page):
    page.goto(page.base + "modules/A02-memory-coalescing/")
    hip_labels = page.locator(".tabbed-labels label", has_text="HIP")
    assert hip_labels.count() >= 2
    hip_labels.first.click()
    checked = page.evaluate("""() => Array.from(document.querySelectorAll('.tabbed-set')).filter(s =>
        Array.from(s.querySelectorAll('.tabbed-labels label')).some(l => l.textContent.trim() === 'HIP')).map(s => {
          const i = s.querySelector('input:checked'); return s.querySelector(`label[for="${i.id}"]`).textContent.trim(); })""")
    assert checked and all(label == "HIP" for label in checked), checked


def test_a_module_pages_cards_link_opens_that_modules_deck(page):
    page.goto(page.base + "modules/B04-fp8-and-below/")
    page.get_by_role("link", name="recall cards of B04").click()
    page.wait_for_selector("#cards-filter")
    assert page.locator("#cards-filter").input_value() == "module:B04"
    card_id = page.get_attribute("article[data-card]", "data-card")
    modules = page.evaluate("Object.fromEntries(window.TUTOR_COURSE.cards.map(c => [c.id, c.module]))")
    assert modules[card_id] == "B04"


@pytest.mark.parametrize("module", ["A01-gpu-mental-model", "B07-sharding", "C07-capstone-serving-node"])
def test_figure_text_is_readable_on_a_phone(page, module):
    """Every figure fits the screen at 390 px and none of its text renders below 9 px."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(page.base + f"modules/{module}/")
    sizes = page.evaluate("""() => Array.from(document.querySelectorAll('figure.tutor-figure svg')).map(s => {
        const box = s.getBoundingClientRect(), scale = box.width / s.viewBox.baseVal.width;
        const fonts = Array.from(s.querySelectorAll('text')).map(t => parseFloat(t.getAttribute('font-size')) * scale);
        return {id: s.closest('figure').id, left: box.left, right: box.right, smallest: Math.min(...fonts)}; })""")
    assert len(sizes) >= 3
    for fig in sizes:
        assert fig["left"] >= 0 and fig["right"] <= 390, fig
        assert fig["smallest"] >= 9.0, fig
