"""Every kind of page, as a reader meets it: no serious accessibility violation on the whole document in
the light and the dark scheme, nothing loaded from another host, and search that finds code identifiers."""

from __future__ import annotations

import pytest
from conftest import axe_check

PAGES = ["", "curriculum/", "tracks/A/", "modules/A01-gpu-mental-model/", "modules/A02-memory-coalescing/",
         "modules/B04-fp8-and-below/", "modules/B07-sharding/", "modules/C07-capstone-serving-node/", "planner/",
         "cards/", "players/", "players/pipeline-schedules/", "sheets/", "sheets/hardware/", "references/", "SETUP/"]

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", PAGES)
def test_whole_page_has_no_serious_accessibility_violation(page, path, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(page.base + path)
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == ("slate" if scheme == "dark" else "default")
    assert axe_check(page) == []


def test_math_is_mathml_and_plots_are_local_svg(page):
    page.goto(page.base + "modules/A02-memory-coalescing/")
    assert page.locator("math").count() > 5
    plots = page.locator("img.tutor-plot")
    assert plots.count() >= 1
    for src in plots.evaluate_all("els => els.map(e => e.src)"):
        assert src.startswith(page.base) and src.endswith(".svg")
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")


@pytest.mark.parametrize("query,where", [("tl.load", "A01"), ("cudaEventRecord", "B07"), ("hipMemcpy", "B07")])
def test_search_finds_code_identifiers(page, query, where):
    page.goto(page.base)
    page.keyboard.press("/")  # Material's shortcut opens the search box
    page.fill("input.md-search__input", query)
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    links = page.locator(".md-search-result__item a").evaluate_all("els => els.map(e => e.href)")
    assert any(where in href for href in links), links


def test_a_click_on_a_tab_switches_every_tab_set(page):
    page.goto(page.base + "modules/A02-memory-coalescing/")
    hip_labels = page.locator(".tabbed-labels label", has_text="HIP")
    assert hip_labels.count() >= 2
    hip_labels.first.click()
    checked = page.evaluate("""() => Array.from(document.querySelectorAll('.tabbed-set')).filter(s =>
        Array.from(s.querySelectorAll('.tabbed-labels label')).some(l => l.textContent.trim() === 'HIP')).map(s => {
          const i = s.querySelector('input:checked'); return s.querySelector(`label[for="${i.id}"]`).textContent.trim(); })""")
    assert checked and all(label == "HIP" for label in checked), checked
