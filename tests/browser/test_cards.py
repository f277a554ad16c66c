"""Recall cards as a learner uses them: reveal, grade, filter, reload, export/import, bad saved data."""

from __future__ import annotations

import json
from urllib.parse import urljoin

import pytest

from conftest import axe_check

pytestmark = pytest.mark.browser

KEY = "tutor.cards.v1"
READY = "#tutor-cards[data-ready]"
DAY_MS = 86_400_000


def _open(page):
    page.goto(page.base + "cards/")
    page.wait_for_selector(READY)
    return page.evaluate("window.TUTOR_COURSE")


def _count(page, what: str) -> int:
    return int(page.inner_text(f"[data-testid=cards-{what}]"))


def _saved(page) -> dict:
    return json.loads(page.evaluate(f"localStorage.getItem('{KEY}')"))["data"]


def test_reveal_then_grade_schedules_the_card_and_survives_reload(page):
    course = _open(page)
    first = course["cards"][0]
    assert page.inner_text("[data-testid=card-question]") == first["q"]
    assert not page.is_visible("[data-testid=card-answer]")
    assert not page.is_visible("[data-testid=grade-good]")
    page.click("[data-testid=reveal]")
    assert page.is_visible("[data-testid=card-answer]")
    assert first["a"] in page.inner_text("[data-testid=card-answer]")
    new_before = _count(page, "new")
    page.click("[data-testid=grade-good]")
    assert _count(page, "new") == new_before - 1
    assert _count(page, "later") == 1
    assert page.inner_text("[data-testid=card-question]") != first["q"]
    page.reload()
    page.wait_for_selector(READY)
    assert _count(page, "later") == 1
    saved = _saved(page)["cards"][first["id"]]
    assert saved["state"] == 1 and saved["step"] == 1 and saved["reps"] == 1
    assert saved["due"] - saved["lastReview"] == 10 * 60_000  # second learning step: 10 minutes


def test_easy_on_a_new_card_matches_the_reference_scheduler(page):
    fsrs = pytest.importorskip("fsrs")
    from datetime import datetime, timezone

    course = _open(page)
    first = course["cards"][0]
    page.click("[data-testid=reveal]")
    page.click("[data-testid=grade-easy]")
    saved = _saved(page)["cards"][first["id"]]
    when = datetime.fromtimestamp(saved["lastReview"] / 1000, tz=timezone.utc)
    ref, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(
        fsrs.Card(card_id=1, due=when), fsrs.Rating.Easy, review_datetime=when)
    assert saved["state"] == int(ref.state) == 2
    assert saved["stability"] == pytest.approx(ref.stability, rel=1e-12)
    assert saved["difficulty"] == pytest.approx(ref.difficulty, rel=1e-12)
    assert saved["due"] - saved["lastReview"] == (ref.due - when).days * DAY_MS


def test_every_card_shows_its_citation_and_section_link(page):
    course = _open(page)
    seen = 0
    for _ in course["cards"]:
        card_id = page.get_attribute("article[data-card]", "data-card")
        card = next(c for c in course["cards"] if c["id"] == card_id)
        page.click("[data-testid=reveal]")
        cite = page.locator("[data-testid=card-cite]")
        assert cite.inner_text() == (card["cite"]["label"] or card["cite"]["key"])
        if card["cite"].get("url"):
            href = cite.get_attribute("href")
            assert urljoin(page.url, href) == urljoin(page.base, card["cite"]["url"])
        section = page.get_attribute("[data-testid=card-section]", "href")
        assert urljoin(page.url, section) == urljoin(page.base, card["section_url"])
        page.keyboard.press("4")
        seen += 1
    assert seen == len(course["cards"])
    assert page.is_visible("[data-testid=cards-empty]")


def test_keyboard_reveal_and_grade(page):
    _open(page)
    page.focus("[data-testid=reveal]")
    page.keyboard.press("Enter")
    assert page.is_visible("[data-testid=card-answer]")
    assert page.evaluate("document.activeElement.dataset.testid") == "grade-good"
    q = page.inner_text("[data-testid=card-question]")
    page.keyboard.press("1")
    assert page.inner_text("[data-testid=card-question]") != q
    assert page.evaluate("document.activeElement.dataset.testid") == "reveal"
    label = page.eval_on_selector("#cards-filter", "e => e.labels[0].innerText")
    assert label.strip() == "Cards from"


def test_again_brings_the_card_back_within_a_minute(page):
    course = _open(page)
    first = course["cards"][0]["id"]
    page.click("[data-testid=reveal]")
    page.click("[data-testid=grade-again]")
    saved = _saved(page)["cards"][first]
    assert saved["due"] - saved["lastReview"] == 60_000


@pytest.mark.parametrize("kind", ["module", "track", "path"])
def test_filter_by_module_track_or_path(page, kind):
    course = _open(page)
    tracks = {m["id"]: m["track"] for m in course["modules"]}
    if kind == "module":
        value = course["cards"][0]["module"]
        wanted = [c for c in course["cards"] if c["module"] == value]
    elif kind == "track":
        value = tracks[course["cards"][-1]["module"]]
        wanted = [c for c in course["cards"] if tracks.get(c["module"]) == value]
    else:
        path = course["paths"][0]
        value = path["id"]
        wanted = [c for c in course["cards"] if c["module"] in path["modules"]]
    page.select_option("#cards-filter", f"{kind}:{value}")
    assert _count(page, "new") == len(wanted)
    assert page.get_attribute("article[data-card]", "data-card") in {c["id"] for c in wanted}
    page.reload()
    page.wait_for_selector(READY)
    assert page.input_value("#cards-filter") == f"{kind}:{value}"


def test_export_then_import(page, browser, tmp_path):
    _open(page)
    page.click("[data-testid=reveal]")
    page.click("[data-testid=grade-hard]")
    with page.expect_download() as dl:
        page.click("[data-testid=cards-export]")
    saved = tmp_path / "history.json"
    dl.value.save_as(saved)
    fresh = browser.new_context()
    other = fresh.new_page()
    other.goto(page.base + "cards/")
    other.wait_for_selector(READY)
    assert int(other.inner_text("[data-testid=cards-later]")) == 0
    other.set_input_files("#cards-import", str(saved))
    other.wait_for_function("document.querySelector('[data-testid=cards-notice]').innerText.includes('Imported')")
    assert int(other.inner_text("[data-testid=cards-later]")) == 1
    fresh.close()


@pytest.mark.parametrize("stored", [
    "]]]",
    json.dumps({"app": "tutor-cards", "version": 1, "data": {"cards": {"x": {"state": 9}}, "filter": {}}}),
    json.dumps({"app": "tutor-planner", "version": 1, "data": {}}),
])
def test_corrupt_or_foreign_saved_data_is_reset_with_a_notice(page, stored):
    course = _open(page)
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [KEY, stored])
    page.reload()
    page.wait_for_selector(READY)
    notice = page.locator("[data-testid=cards-notice]")
    assert notice.is_visible() and "reset" in notice.inner_text()
    assert _count(page, "new") == len(course["cards"])
    page.click("[data-testid=reveal]")
    page.click("[data-testid=grade-good]")
    assert _count(page, "later") == 1


def test_no_serious_accessibility_violations(page):
    _open(page)
    assert axe_check(page, ".md-content") == []
    page.click("[data-testid=reveal]")
    assert axe_check(page, ".md-content") == []
