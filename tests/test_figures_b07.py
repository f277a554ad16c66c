"""Figures of module B07: each draws from the loaded course, and its bars, strips and peaks are the
schedules tutor_build.models.pipeline simulates and the memory the module derives."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from tutor_build.figures import svg
from tutor_build.load import load_course
from tutor_build.models import pipeline as pp

ROOT = Path(__file__).parents[1]
NS = "{http://www.w3.org/2000/svg}"
SLOT = re.compile(r"stage (\d+): (forward|backward) of micro-batch (\d+)(?:, chunk (\d+))?, (\S+) to (\S+)")


@pytest.fixture(scope="module")
def figures():
    module = next(m for m in load_course(ROOT)[0].modules if m.id == "B07")
    return {spec.id: (spec, ET.fromstring(svg(spec))) for spec in module.figures}


def titles(root, tag="rect") -> list[str]:
    return [t.text for el in root.iter(f"{NS}{tag}") for t in el.findall(f"{NS}title")]


def texts(root) -> list[str]:
    return [t.text or "" for t in root.iter(f"{NS}text")]


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


def test_every_figure_draws(figures):
    assert set(figures) == {"notebook-pages", "gpipe-vs-1f1b", "interleaved", "tp-mlp", "bubble-vs-m"}
    for spec, root in figures.values():
        assert root.get("role") == "img" and root.find(f"{NS}title").text == spec.alt
        assert float(root.get("viewBox").split()[2]) <= 560


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
    strips = [el for el in root.iter(f"{NS}polygon") if el.get("data-stage") is not None]
    # the dashed L*a line of each strip: S micro-batches (L/S layers each) above its baseline
    refs = [el for el in root.iter(f"{NS}line") if el.get("stroke-dasharray") == "5 3" and el.get("x1") == "34"]
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
    for el in root.iter(f"{NS}rect"):
        t = el.find(f"{NS}title")
        if t is not None:
            widths.setdefault(t.text.split(":")[0], []).append(float(el.get("width")) + 2)
    assert sum(widths["baker"]) == pytest.approx(sum(widths["baker 1"][:line[0]]))


def test_tp_mlp_splits_a_by_columns_b_by_rows_and_needs_one_all_reduce(figures):
    spec, root = figures["tp-mlp"]
    rects = {el.find(f"{NS}title").text: el for el in root.iter(f"{NS}rect") if el.find(f"{NS}title") is not None}
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
    n = 0
    for t in pts:
        m = re.fullmatch(r"S = (\d+)(?:, v = (\d+))?, M = (\d+): (\S+)% idle", t)
        S, v, M, share = int(m[1]), int(m[2] or 1), int(m[3]), float(m[4])
        sched = "interleaved" if v > 1 else "1f1b"
        assert share == pytest.approx(float(pp.bubble_fraction_closed(sched, S, M, v)) * 100, abs=0.05)
        n += 1
    assert n == 2 * len(spec.args["micro_batches"]) + sum(1 for m in spec.args["micro_batches"] if m % 8 == 0)
    assert "47%" in texts(root)  # S = 8, M = 8, quoted in section 6
