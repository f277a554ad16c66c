"""Drive every concept player as a person would: change each control and watch the output."""

from __future__ import annotations

import re

import pytest

from conftest import axe_check

pytestmark = pytest.mark.browser

SLUGS = {
    "where-time-goes": "where_time_goes", "coalescing": "coalescing", "occupancy": "occupancy",
    "roofline": "roofline", "gemm-tiling": "gemm_tiling", "divergence": "divergence",
    "number-formats": "number_formats", "attention-io": "attention_io", "collectives": "collectives",
    "training-memory": "training_memory", "pipeline-schedules": "pipeline_schedules",
    "serving-sizing": "serving_sizing",
}
# A control whose effect shows only in some states is tested from such a state.
CONTEXT = {
    ("divergence", "p"): "pattern=random",
    ("divergence", "k"): "pattern=modulo",
    ("divergence", "pattern"): "k=3&cost_b=30",
    ("training_memory", "dp"): "zero_stage=3",
    ("pipeline_schedules", "virtual"): "schedule=interleaved&stages=4&micro_batches=8",
    ("number_formats", "saturate"): "value=1000",
}
BAD = re.compile(r"\bNaN\b|undefined|Infinity|\bnull\b")
FRAME_MS = 16.0
TIMINGS: list[float] = []

OUT = "[data-testid=player-output]"


def _open(page, slug: str, state: str = ""):
    page.goto(page.base + f"players/{slug}/" + (f"#{state}" if state else ""))
    page.wait_for_function(f"document.querySelector('{OUT}') && document.querySelector('.tp-controls')")
    return page.inner_text(OUT)


def _check_text(name: str, text: str):
    assert text.strip(), f"{name}: empty output"
    bad = BAD.findall(text)
    if name == "number_formats":  # a NaN code is a real value of that format
        bad = [b for b in bad if b != "NaN"]
    assert not bad, f"{name}: output shows {bad}: {text!r}"


def _controls(page) -> list[dict]:
    return page.eval_on_selector_all(
        ".tp-controls [id]",
        """els => els.filter(e => ['INPUT','SELECT'].includes(e.tagName)).map(e => ({
            id: e.id, tag: e.tagName, type: e.type || '', name: e.getAttribute('data-control') || e.id,
            min: e.min, max: e.max, value: e.value,
            options: e.tagName === 'SELECT' ? Array.from(e.options).map(o => o.value) : [],
            label: !!document.querySelector('label[for="' + e.id + '"]')}))""")


def _change(page, c: dict):
    sel = f"#{c['id']}"
    if c["tag"] == "SELECT":
        choices = [o for o in c["options"] if o not in ("", c["value"])]
        page.select_option(sel, choices[-1])
    elif c["type"] == "checkbox":
        page.focus(sel)
        page.keyboard.press("Space")
    else:
        target = c["min"] if c["value"] != c["min"] else c["max"]
        page.fill(sel, target)
        page.dispatch_event(sel, "change")


@pytest.mark.parametrize("slug", list(SLUGS))
def test_every_control_changes_the_output(page, slug):
    name = SLUGS[slug]
    _open(page, slug)
    controls = _controls(page)
    assert controls, f"{slug}: no controls"
    for c in controls:
        assert c["label"], f"{slug}: control {c['id']} has no label"
        state = CONTEXT.get((name, c["name"]), "")
        _open(page, slug, state)
        c = next(x for x in _controls(page) if x["id"] == c["id"])
        before, url_before = page.inner_text(OUT), page.url
        _change(page, c)
        after = page.inner_text(OUT)
        _check_text(name, after)
        assert after != before or c["name"].endswith("preset"), \
            f"{slug}: changing {c['name']} did not change the output"
        if not c["name"].endswith("preset"):
            assert page.url != url_before, f"{slug}: changing {c['name']} did not change the URL"
    TIMINGS.extend(page.evaluate("window.TutorPlayerTimings || []"))


@pytest.mark.parametrize("slug", list(SLUGS))
def test_url_state_round_trips_and_out_of_range_is_clamped(page, slug):
    name = SLUGS[slug]
    _open(page, slug)
    numbers = [c for c in _controls(page) if c["type"] == "number"]
    assert numbers, f"{slug}: no numeric control"
    c = numbers[0]
    page.fill(f"#{c['id']}", "1e300")
    page.dispatch_event(f"#{c['id']}", "change")
    assert "Out of range" in page.inner_text(".tp-note"), f"{slug}: no out-of-range message"
    assert page.input_value(f"#{c['id']}") == c["max"] or float(page.input_value(f"#{c['id']}")) == float(c["max"])
    text, url = page.inner_text(OUT), page.url
    _check_text(name, text)
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_function(f"document.querySelector('{OUT}') && document.querySelector('.tp-controls')")
    assert page.inner_text(OUT) == text, f"{slug}: the URL did not restore the setting"


HEAVIEST = {"pipeline-schedules": "schedule=interleaved&stages=16&micro_batches=64&virtual=4",
            "collectives": "gpus=1024", "divergence": "threads=1024&pattern=random"}


@pytest.mark.parametrize("heaviest", [False, True], ids=["defaults", "heaviest"])
@pytest.mark.parametrize("slug", list(SLUGS))
def test_update_is_faster_than_a_frame(page, slug, heaviest):
    """At the defaults every update fits in a frame; the heaviest settings are measured and reported, and
    held to two frames so that a loaded CI machine does not make the test flaky."""
    _open(page, slug, HEAVIEST.get(slug, "") if heaviest else "")
    ms = page.evaluate("""() => {
        const el = document.querySelector('.tp-controls input[type=number], .tp-controls select:not([id$=preset])');
        const t = [];
        for (let i = 0; i < 25; i++) {
            const t0 = performance.now();
            el.dispatchEvent(new Event('change'));
            t.push(performance.now() - t0);
        }
        t.sort((a, b) => a - b);
        return t[t.length - 6];  // 80th percentile of 25: one-off GC pauses are not the model's
    }""")
    TIMINGS.append(ms)
    print(f"{slug}: 80th percentile of 25 updates {ms:.2f} ms")
    limit = 2 * FRAME_MS if heaviest else FRAME_MS
    assert ms < limit, f"{slug}: update took {ms:.1f} ms"


@pytest.mark.parametrize("slug", list(SLUGS))
def test_no_serious_accessibility_violation(page, slug):
    _open(page, slug)
    violations = axe_check(page, ".tp-player")
    assert not violations, f"{slug}: {violations}"


def test_index_lists_the_twelve(page):
    page.goto(page.base + "players/")
    links = page.eval_on_selector_all("article a[href]", "els => els.map(e => e.getAttribute('href'))")
    for slug in SLUGS:
        assert any(slug in h for h in links), f"index does not link {slug}"
