"""Figures of module B07: each draws from the loaded course, and its bars, strips and peaks are the
schedules tutor_build.models.pipeline simulates and the memory the module derives."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest

from svgparse import SVG, draw, module_fixtures, placed, texts, titles
from tutor_build.models import pipeline as pp

SLOT = re.compile(r"stage (\d+): (forward|backward) of micro-batch (\d+)(?:, chunk (\d+))?, (\S+) to (\S+)")


module, figs = module_fixtures("B07")


@pytest.fixture(scope="module")
def figures(figs):
    """Each figure's spec and its drawing, by id."""
    return {fig_id: (spec, draw(figs, fig_id)) for fig_id, spec in figs.items()}


def closed_peak(schedule: str, S: int, M: int, s: int, v: int) -> Fraction:
    """The module's derivation, in units of L*a: L/S*M (GPipe), L/S*(S-s) (1F1B, M >= S),
    L*(1 + (S-1)/(S v)) on device 0 interleaved."""
    if schedule == "gpipe":
        return Fraction(M, S)
    if schedule == "1f1b":
        return Fraction(S - s, S)
    if s == 0:
        return 1 + Fraction(S - 1, S * v)
    return Fraction(pp.peak_in_flight_closed(schedule, S, M, s, v), S * v)


def test_every_figure_draws_and_is_placed(module, figures):
    where = placed(module)
    assert where == {"notebook-pages": 1, "gpipe-vs-1f1b": 2, "interleaved": 2, "tp-mlp": 2, "bubble-vs-m": 6}
    assert set(figures) == set(where)
    for spec, root in figures.values():
        assert spec.alt.strip() and spec.caption.strip()
        assert root.get("role") == "img" and root.find(f"{SVG}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560
        # no opacity: a translucent fill comes out darker, not paler, on the dark background
        assert "opacity" not in ET.tostring(root, encoding="unicode")


@pytest.mark.parametrize("fig", ["gpipe-vs-1f1b", "interleaved"])
def test_gantt_bars_are_the_simulated_schedule(figures, fig):
    spec, root = figures[fig]
    a = spec.args
    drawn = {}
    for t in titles(root):
        m = SLOT.fullmatch(t)
        if m:
            st, kind, micro, chunk, t0, t1 = m.groups()
            drawn.setdefault(int(st), []).append((kind[0].upper(), int(micro), int(chunk or 0), float(t0), float(t1)))
    bars = sorted(x for v in drawn.values() for x in v)
    expect = []
    for name in a["schedules"]:
        v = a.get("virtual", 2) if name == "interleaved" else 1
        r = pp.simulate(name, a["stages"], a["micro_batches"], v, a["t_f"], a["t_b"])
        expect += [(s.kind, s.micro, s.chunk, s.start, s.end) for dev in r.timeline for s in dev]
        # every slot of the schedule is a bar, and the bubble quoted is the closed form
        frac = pp.bubble_fraction_closed(name, a["stages"], a["micro_batches"], v)
        assert f"idle {float(frac):.0%}" in " ".join(texts(root))
    assert bars == sorted(expect)


@pytest.mark.parametrize("fig", ["gpipe-vs-1f1b", "interleaved"])
def test_memory_strips_peak_at_the_derived_activation_memory(figures, fig):
    spec, root = figures[fig]
    a = spec.args
    S, M = a["stages"], a["micro_batches"]
    strips = [el for el in root.iter(f"{SVG}polygon") if el.get("data-stage") is not None]
    # the dashed L*a line of each strip: S micro-batches (L/S layers each) above its baseline
    refs = [el for el in root.iter(f"{SVG}line") if el.get("stroke-dasharray") == "5 3" and el.get("x1") == "34"]
    labels = [t for t in texts(root) if t.endswith("L·a")]
    labels = labels[1:]  # the first is the legend's
    results = [pp.simulate(n, S, M, a.get("virtual", 2) if n == "interleaved" else 1, a["t_f"], a["t_b"])
               for n in a["schedules"]]
    assert len(strips) == len(results) * S == len(refs) == len(labels)
    i = 0
    for r in results:
        for s in range(S):
            pts = [tuple(map(float, p.split(","))) for p in strips[i].get("points").split()]
            base = max(y for _, y in pts)
            ref_h = base - float(refs[i].get("y1"))  # height of S micro-batches = L*a
            peak_h = base - min(y for _, y in pts)
            peak = Fraction(round(peak_h / ref_h * S * r.virtual), S * r.virtual)  # in units of L*a
            assert peak == Fraction(r.peak_in_flight[s], S * r.virtual) == closed_peak(r.schedule, S, M, s, r.virtual)
            want = "L·a" if peak == 1 else f"{peak.numerator}/{peak.denominator} L·a" if peak.denominator > 1 else f"{peak} L·a"
            assert labels[i] == want
            i += 1
    if "1f1b" in a["schedules"]:
        assert labels[len(labels) - S] == "L·a"  # stage 0 under 1F1B: the S cancels


def test_benches_hold_the_in_flight_micro_batches(figures):
    spec, root = figures["notebook-pages"]
    S, M = spec.args["stages"], spec.args["micro_batches"]
    pages = {}
    for t in titles(root):
        who = t.split(":")[0]
        pages[who] = pages.get(who, 0) + 1
    body = texts(root)
    counts = [int(t.split()[0]) for t in body if re.fullmatch(r"\d+ pages?", t)]
    one = pp.simulate("1f1b", 1, M).peak_in_flight
    line = pp.simulate("1f1b", S, M).peak_in_flight
    gpipe = pp.simulate("gpipe", S, M).peak_in_flight
    assert counts == [*one, *line, *gpipe] == [1, 4, 3, 2, 1, 8, 8, 8, 8]
    assert sum(pages.values()) == sum(counts)
    # baker 1's quarter pages take exactly the bench of the one whole-recipe page
    widths = {}
    for el in root.iter(f"{SVG}rect"):
        t = el.find(f"{SVG}title")
        if t is not None:
            widths.setdefault(t.text.split(":")[0], []).append(float(el.get("width")) + 2)
    assert sum(widths["baker"]) == pytest.approx(sum(widths["baker 1"][:line[0]]))


def test_tp_mlp_splits_a_by_columns_b_by_rows_and_needs_one_all_reduce(figures):
    spec, root = figures["tp-mlp"]
    rects = {el.find(f"{SVG}title").text: el for el in root.iter(f"{SVG}rect") if el.find(f"{SVG}title") is not None}
    get = lambda prefix: [el for t, el in rects.items() if t.startswith(prefix)]  # noqa: E731
    h = spec.args["h"]
    a_full, b_full = get("A: ")[0], get("B: ")[0]
    assert float(a_full.get("width")) == 4 * h and float(a_full.get("height")) == h
    assert float(b_full.get("height")) == 4 * h and float(b_full.get("width")) == h
    for g in (1, 2):
        (a,), (b,) = get(f"A{g}:"), get(f"B{g}:")
        assert float(a.get("width")) == 4 * h / 2 and float(a.get("height")) == h  # a column block
        assert float(b.get("height")) == 4 * h / 2 and float(b.get("width")) == h  # a row block
    assert len(get("all-reduce")) == 1
    body = texts(root)
    assert body.count("no message") == 2 and "= 2bsh bytes" in body  # 2 (T-1)/T * 2bsh with T = 2


def test_bubble_curve_is_the_simulated_idle_share(figures):
    spec, root = figures["bubble-vs-m"]
    pts = [t for t in titles(root, "circle")]
    n, series = 0, {}
    for t in pts:
        m = re.fullmatch(r"(1F1B|interleaved), S = (\d+)(?:, v = (\d+))?, M = (\d+): (\S+)% idle", t)
        sched, S, v, M, share = m[1].lower(), int(m[2]), int(m[3] or 1), int(m[4]), float(m[5])
        assert (sched == "interleaved") == (v > 1)
        assert share == pytest.approx(float(pp.bubble_fraction_closed(sched, S, M, v)) * 100, abs=0.05)
        if sched == "interleaved":  # the module's closed form (S-1)/(vM+S-1)
            assert share == pytest.approx(100 * (S - 1) / (v * M + S - 1), abs=0.05)
        series.setdefault(t.split(", M = ")[0], []).append(M)
        n += 1
    S8 = max(spec.args["stages"])
    assert n == 2 * len(spec.args["micro_batches"]) + sum(1 for m in spec.args["micro_batches"] if m % S8 == 0)
    # interleaving needs M to be a multiple of S: its points are exactly those M
    inter = series[f"interleaved, S = {S8}, v = {spec.args['virtual']}"]
    assert inter == [m for m in spec.args["micro_batches"] if m % S8 == 0] and min(inter) == S8
    with pytest.raises(ValueError):
        pp.simulate("interleaved", S8, S8 + S8 // 2, spec.args["virtual"])
    # the legend names each curve as its points do
    legend = [t for t in texts(root) if t.startswith(("1F1B, ", "interleaved, "))]
    assert legend == list(series) == ["1F1B, S = 4", "1F1B, S = 8", "interleaved, S = 8, v = 2"]
    assert "47%" in texts(root)  # S = 8, M = 8, quoted in section 6


def test_interleaved_second_chunk_is_outlined_not_translucent(figures):
    spec, root = figures["interleaved"]
    n = {0: 0, 1: 0}
    for el in root.iter(f"{SVG}rect"):
        t = el.find(f"{SVG}title")
        m = SLOT.fullmatch(t.text) if t is not None else None
        if not m:
            continue
        series = "s1" if m[2] == "forward" else "s2"
        cls = el.get("class").split()
        chunk = int(m[4])
        if chunk % 2 == 1:  # the page background inside, an outline in the slot's series colour
            assert cls == ["fi-bg", f"st-{series}"] and float(el.get("stroke-width")) >= 2
        else:
            assert cls == [f"fi-{series}", "st-bg"]
        n[chunk % 2] += 1
    a = spec.args
    assert n[0] == n[1] == 2 * a["stages"] * a["micro_batches"]  # a forward and a backward per micro-batch
    legend = [t for t in texts(root) if "second chunk" in t]
    assert legend == ["outlined: the device's second chunk of layers"]
    assert "second chunk drawn as outlines" in spec.alt and "paler" not in spec.alt


def step_labels(root) -> list[tuple[str, str]]:
    """(step, idle) as each panel's header states them."""
    return [re.match(r"step (\S+).* · idle (\S+)", t).groups() for t in texts(root) if t.startswith("step ")]


def test_schedule_alt_texts_and_captions_state_the_drawn_numbers(figures):
    spec, root = figures["gpipe-vs-1f1b"]
    a = spec.args
    S, M = a["stages"], a["micro_batches"]
    (g_step, g_idle), (o_step, o_idle) = step_labels(root)
    assert g_step == o_step and g_idle == o_idle
    assert f"Both steps take {g_step} slots with {g_idle} idle" in spec.alt
    peaks = [t for t in texts(root) if t.endswith("L·a")][1:]  # the first is the legend's
    gpipe, one = peaks[:S], peaks[S:]
    assert set(gpipe) == {f"{Fraction(M, S)} L·a"} and f"climbs to {M} micro-batches, {gpipe[0]}" in spec.alt
    assert one[0] == "L·a" and f"stage 0 levels off at {pp.simulate('1f1b', S, M).peak_in_flight[0]}, L·a" in spec.alt
    assert f"{one[1][:-4]}, {one[2][:-4]} and {one[3]}" in spec.alt  # 3/4, 1/2 and 1/4 L·a
    assert f"$S = {S}$, $M = {M}$" in spec.caption and f"= {Fraction(M, S)}La$" in spec.caption
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight"]
    assert f"{words[S]} stages each, {words[M]} micro-batches" in spec.alt

    spec, root = figures["interleaved"]
    a = spec.args
    S, M, v = a["stages"], a["micro_batches"], a["virtual"]
    ((step, idle),) = step_labels(root)
    plain = pp.simulate("1f1b", S, M, 1, a["t_f"], a["t_b"]).makespan
    assert re.search(r"\(1F1B: (\S+)\)", " ".join(texts(root)))[1] == f"{plain:g}"
    assert f"takes {step} forward slots instead of 1F1B's {plain:g}" in spec.alt
    assert f"idle share falls to {idle}" in spec.alt
    peaks = [t for t in texts(root) if t.endswith("L·a")][1:]
    fr = [p[:-4] for p in peaks]
    assert f"peak at {fr[0]}, {fr[1]}, {fr[2]} and {fr[3]} L·a" in spec.alt
    assert fr[0] == "11/8" and Fraction(fr[0]) == closed_peak("interleaved", S, M, 0, v) > 1  # above the dashed line
    assert f"= \\frac{{{Fraction(fr[0]).numerator}}}{{{Fraction(fr[0]).denominator}}}La$" in spec.caption
    assert f"$v = {v}$" in spec.caption


def test_notebook_and_tp_alt_texts_state_the_drawn_numbers(figures):
    spec, root = figures["notebook-pages"]
    S, M = spec.args["stages"], spec.args["micro_batches"]
    counts = [int(t.split()[0]) for t in texts(root) if re.fullmatch(r"\d+ pages?", t)]
    line, gpipe = counts[1:1 + S], counts[1 + S:]
    assert f"benches hold {line[0]}, {line[1]}, {line[2]} and {line[3]} quarter-recipe pages" in spec.alt
    assert set(gpipe) == {M} and f"holds {M} quarter pages, twice" in spec.alt and M / S == 2
    assert counts[0] == 1 and "holds one page covering the whole recipe" in spec.alt
    assert f"order of {M} cakes" in spec.caption and f"$S = {S}$, $M = {M}$" in spec.caption

    spec, root = figures["tp-mlp"]
    body = texts(root)
    assert "message 2bsh" in body and "= 2bsh bytes" in body and "2(T−1)/T × msg" in body
    assert "message, 2bsh bytes in bf16" in spec.alt and "2(T−1)/T times the message, 2bsh bytes for T = 2" in spec.alt
    assert "$T = 2$" in spec.caption


def test_bubble_alt_text_and_caption_state_the_drawn_numbers(figures):
    spec, root = figures["bubble-vs-m"]
    a = spec.args
    S4, S8 = a["stages"]
    Ms = a["micro_batches"]
    assert f"log axis from {Ms[0]} to {Ms[-1]}" in spec.alt
    assert f"1F1B with {S4} and {S8} stages" in spec.alt and f"{S8} stages and {a['virtual']} chunks" in spec.alt
    first = min(m for m in Ms if m % S8 == 0)
    assert f"points start at {first} micro-batches" in spec.alt and f"start at $M = {first}$" in spec.caption
    f88 = pp.simulate("1f1b", S8, S8).bubble_fraction
    assert f"{f88:.0%}" in texts(root) and f"With {S8} stages and {S8} micro-batches {f88:.0%}" in spec.alt
    # "the 8-stage curve reaches the 10% line only near 64 micro-batches"
    reach = next(m for m in Ms if pp.simulate("1f1b", S8, m).bubble_fraction <= a["target"])
    assert reach == Ms[-1] == 64 and f"reaches the {a['target']:.0%} line only near {reach}" in spec.alt
    assert "$(S-1)/(M+S-1)$" in spec.caption and "$(S-1)/(vM+S-1)$" in spec.caption
    assert "multiple of $S$" in spec.caption
