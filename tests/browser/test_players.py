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
    ("where_time_goes", "link_gbps"): "host_memory=pinned",
    ("coalescing", "tile"): "tile=16",
    ("serving_sizing", "attention"): "kv=fp8",  # with a bf16 cache attention is memory-bound on every roof
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
            id: e.id, tag: e.tagName, type: e.type || '',
            name: e.getAttribute('data-control') || e.getAttribute('data-slider-for') || e.id,
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
    elif c["type"] == "range":  # from the keyboard, to the far end
        page.focus(sel)
        page.keyboard.press("End" if c["value"] != c["max"] else "Home")
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


# ---------------------------------------------------------------- layout, labelled visuals, sliders

VIS = "[data-testid=player-visual]"
PHONE = {"width": 390, "height": 844}


def _labels(page, cls: str) -> list[str]:
    return page.eval_on_selector_all(f"{VIS} .{cls}", "els => els.map(e => e.textContent)")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("slug", list(SLUGS))
def test_result_is_on_the_first_screen_of_a_phone(page, slug, scheme):
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size(PHONE)
    _open(page, slug)
    if scheme == "dark":
        assert page.get_attribute("body", "data-md-color-scheme") == "slate"
    for sel in (OUT, VIS):
        box = page.locator(sel).bounding_box()
        assert box and box["y"] < PHONE["height"], f"{slug}: {sel} starts below the first screen ({box})"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{slug}: the page scrolls sideways ({width} px)"
    # the svg is drawn at its pixel width, so its text keeps its CSS size
    smallest = page.evaluate(f"""() => {{
        const s = document.querySelector('{VIS}'), k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        return Math.min(...Array.from(s.querySelectorAll('text')).map(t => parseFloat(getComputedStyle(t).fontSize) * k));
    }}""")
    assert smallest >= 11, f"{slug}: text of {smallest:.1f} px in the visual"


# Per player: words that axis titles, tick labels, legend entries and field labels must contain.
EXPECT = {
    "where-time-goes": {"tp-axis-title": ["share", "time"], "tp-legend-item": ["context", "allocations", "copies", "kernel"],
                        "tp-tick": ["kernel", "µs"]},
    "coalescing": {"tp-field": ["32 lanes", "Shared memory"], "tp-axis-title": ["sectors", "bank"], "tp-legend-item": ["sector"]},
    "occupancy": {"tp-axis-title": ["blocks"], "tp-tick": ["registers", "shared memory", "LDS"], "tp-legend-item": ["limiting"]},
    "roofline": {"tp-axis-title": ["FLOP/byte", "TFLOP/s"], "tp-tick": ["ridge", "peak", "0.01", "10k"], "tp-legend-item": ["roof"]},
    "gemm-tiling": {"tp-axis-title": ["waves"], "tp-legend-item": ["tiles", "idle"], "tp-field": ["slots"]},
    "divergence": {"tp-axis-title": ["SIMT efficiency"], "tp-legend-item": ["path A", "path B"], "tp-tick": ["warp 0", "64-lane"]},
    "number-formats": {"tp-field": ["sign", "exponent", "mantissa"], "tp-tick": ["E4M3", "E4M3FNUZ", "E5M2", "E5M2FNUZ"]},
    "attention-io": {"tp-axis-title": ["sequence length", "HBM traffic"], "tp-legend-item": ["naive", "tiled"], "tp-tick": ["1K"]},
    "collectives": {"tp-axis-title": ["message size", "bus bandwidth (GB/s)"], "tp-legend-item": ["ring", "tree", "link"],
                    "tp-tick": ["KiB"]},
    "training-memory": {"tp-axis-title": ["bytes per GPU"], "tp-legend-item": ["weights", "gradients", "optimizer", "activations"],
                        "tp-tick": ["HBM"]},
    "pipeline-schedules": {"tp-axis-title": ["time"], "tp-tick": ["stage 1", "stage 2", "stage 3", "stage 4"],
                           "tp-legend-item": ["forward", "backward", "idle"]},
    "serving-sizing": {"tp-axis-title": ["tokens"], "tp-tick": ["KV pool", "SLO cap"], "tp-legend-item": ["binds"]},
}


@pytest.mark.parametrize("slug", list(SLUGS))
def test_visual_has_labelled_axes_or_fields(page, slug):
    _open(page, slug)
    svg = page.locator(VIS)
    assert svg.evaluate("e => e.tagName") == "svg"
    assert svg.get_attribute("role") == "img" and len(svg.get_attribute("aria-label") or "") > 20
    assert len(_labels(page, "tp-tick")) >= 3, f"{slug}: fewer than 3 tick labels"
    for cls, words in EXPECT[slug].items():
        text = " | ".join(_labels(page, cls))
        for w in words:
            assert w in text, f"{slug}: no {cls} containing {w!r} (have: {text!r})"


def test_pipeline_shows_micro_batch_numbers_on_a_time_axis(page):
    _open(page, "pipeline-schedules", "schedule=gpipe&stages=4&micro_batches=8")
    numbers = set(_labels(page, "tp-mb"))
    assert {str(m) for m in range(1, 9)} <= numbers, numbers
    ticks = [t for t in _labels(page, "tp-tick") if t.replace(",", "").isdigit()]
    assert len(ticks) >= 3, f"no numeric time ticks: {ticks}"


def test_coalescing_draws_lanes_sectors_and_banks(page):
    _open(page, "coalescing", "stride=32&bytes_per_element=4&tile=32&padding=0")
    assert page.locator(f"{VIS} .tp-lane").count() == 32
    assert page.locator(f"{VIS} .tp-sector").count() >= 32  # 32 lines of 4 sectors, one each touched
    assert page.locator(f"{VIS} .tp-sector.tp-c2").count() == 32
    banks = page.eval_on_selector_all(f"{VIS} .tp-bank", "els => els.length")
    assert banks == 32  # all 32 lanes in bank 0, one row each
    _open(page, "coalescing", "stride=1&bytes_per_element=4&tile=32&padding=1")
    assert page.locator(f"{VIS} .tp-sector.tp-c2").count() == 4


@pytest.mark.parametrize("bits, expect", [(0x80, {"e4m3": "-0", "e4m3fnuz": "NaN", "e5m2": "-0", "e5m2fnuz": "NaN"}),
                                          (0x7F, {"e4m3": "NaN", "e4m3fnuz": "240"}),
                                          (0x00, {"e4m3": "0", "e4m3fnuz": "0"})])
def test_number_formats_fields_and_special_values(page, bits, expect):
    _open(page, "number-formats", f"bits={bits}")
    for fmt, value in expect.items():
        row = page.locator(f"{VIS} [data-format={fmt}]")
        fields = row.locator(".tp-field").evaluate_all("els => els.map(e => e.textContent)")
        assert fields == ["sign", "exponent", "mantissa"], f"{fmt}: {fields}"
        assert row.locator(".tp-value").text_content() == f"= {value}", f"0x{bits:02x} in {fmt}"
        assert row.locator(".tp-bit").count() == 8
    ebits = page.locator(f"{VIS} [data-format=e5m2] .tp-exp").evaluate("e => e.getAttribute('width')")
    mbits = page.locator(f"{VIS} [data-format=e4m3] .tp-exp").evaluate("e => e.getAttribute('width')")
    assert float(ebits) > float(mbits), "E5M2's exponent field is not wider than E4M3's"
    if bits == 0x80:
        assert "-0" in page.inner_text(OUT)


def _spec(page, name):
    return page.evaluate(f"window.TutorPresets.inputs[{name!r}]")


@pytest.mark.parametrize("slug", list(SLUGS))
def test_sliders_follow_the_number_field_and_the_url(page, slug):
    name = SLUGS[slug]
    _open(page, slug)
    spec = _spec(page, name)
    ranges = page.eval_on_selector_all(".tp-controls input[type=range]",
                                       "els => els.map(e => e.getAttribute('data-slider-for'))")
    floats = [k for k, s in spec.items() if s["kind"] == "float"]
    assert ranges, f"{slug}: no slider"
    assert set(floats) <= set(ranges), f"{slug}: continuous inputs without a slider: {set(floats) - set(ranges)}"
    for k in ranges:
        slider, number = f"#tp-{name}-{k}-slider", f"#tp-{name}-{k}"
        assert page.locator(f"label[for='tp-{name}-{k}-slider']").count() == 1
        assert page.locator(f"label[for='tp-{name}-{k}']").count() == 1
    k = ranges[0]
    slider, number = f"#tp-{name}-{k}-slider", f"#tp-{name}-{k}"
    before, num_before = page.inner_text(OUT), page.input_value(number)
    page.focus(slider)
    page.keyboard.press("End" if page.input_value(slider) != page.get_attribute(slider, "max") else "Home")
    after = page.input_value(number)
    assert after != num_before, f"{slug}: moving the {k} slider did not change the number field"
    assert f"{k}={after}" in page.url, f"{slug}: the URL does not hold {k}={after}: {page.url}"
    for _ in range(3):
        page.keyboard.press("ArrowLeft" if page.input_value(slider) != "0" else "ArrowRight")
    assert page.input_value(number) != after or spec[k]["kind"] == "int"
    assert page.inner_text(OUT) != before, f"{slug}: moving the {k} slider did not change the output"
    # typing the exact value moves the slider
    pos = page.input_value(slider)
    page.fill(number, str(spec[k]["default"]))
    page.dispatch_event(number, "input")
    assert page.input_value(slider) != pos or str(spec[k]["default"]) == page.input_value(number)


# ---------------------------------------------------------------- regressions of the design review

def test_occupancy_says_the_block_cannot_launch(page):
    text = _open(page, "occupancy", "threads=256&registers=300&shared_kib=0")
    assert "cannot launch" in text and "300 registers per thread exceed" in text and "255" in text, text
    assert "0.00 %" not in text and "0 blocks" not in text
    text = _open(page, "occupancy", "threads=256&registers=32&shared_kib=250")
    assert "cannot launch" in text and "shared memory" in text, text
    text = _open(page, "occupancy", "threads=1024&registers=255&shared_kib=0")
    assert "cannot launch" in text and "register file" in text, text
    assert "cannot launch" in " ".join(_labels(page, "tp-field"))


@pytest.mark.parametrize("state", ["", "params_b=70", "params_b=2000&seq=1048576&micro_batch=1024&hidden=65536&heads=512&layers=256"])
def test_training_memory_numbers_are_humane(page, state):
    text = _open(page, "training-memory", state)
    visual = page.locator(VIS).text_content()
    for t in (text, visual):
        assert not re.search(r"\de[+-]\d", t), f"exponent notation in {t!r}"
    if state:
        assert "does not fit" in text and "× the GPU's" in text, text


def test_collectives_has_no_empty_field(page):
    for state in ("", "operation=all-gather&algorithm=tree", "algorithm=tree"):
        text = _open(page, "collectives", state)
        assert "; )" not in text and "()" not in text, text
    assert "(ring; tree is modelled" in _open(page, "collectives", "operation=all-gather&algorithm=tree")


def test_serving_sizing_states_batch_and_rate_and_shows_overflow(page):
    text = _open(page, "serving-sizing")
    assert re.search(r"Batch [\d,.]+ sequences", text) and re.search(r"[\d,.]+ output tokens/s", text), text
    assert "390 %" not in text
    _open(page, "serving-sizing", "slo_ms=200&context=32768")
    assert "over by" in page.locator(VIS).text_content()


def test_where_time_goes_has_pinned_memory_and_context_reuse(page):
    _open(page, "where-time-goes", "log2_n=24")
    base = page.inner_text(OUT)
    page.select_option("#tp-where_time_goes-host_memory", "pinned")
    pinned = page.inner_text(OUT)
    assert "pinned memory at 64 GB/s" in pinned and pinned != base
    page.select_option("#tp-where_time_goes-context", "reuse")
    assert "reused" in page.inner_text(OUT) and "0 (reused)" in page.locator(VIS).text_content()
    assert "host_memory=pinned" in page.url and "context=reuse" in page.url


@pytest.mark.parametrize("slug", list(SLUGS))
def test_no_serious_accessibility_violation_dark(page, slug):
    page.emulate_media(color_scheme="dark")
    _open(page, slug)
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"
    violations = axe_check(page, ".tp-player")
    assert not violations, f"{slug} (dark): {violations}"
