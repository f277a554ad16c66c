"""The prerequisite graph of a full 30-module course: no two boxes overlap, no arrow crosses a box, every
title is there in full and fits its box."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor_build.load import load_course
from tutor_build.render.curriculum import PAD, graph_svg, text_width

REPO = Path(__file__).resolve().parents[1]
NS = {"s": "http://www.w3.org/2000/svg"}
LONG = ["Sharding: tensor, pipeline, sequence, expert", "Mixture of experts and distributed inference",
        "CUTLASS and CuTe (optional, NVIDIA-only)", "A", "Supercalifragilisticexpialidociousnesses in HBM"]


@pytest.fixture(scope="module")
def real():
    course, _ = load_course(REPO)
    return course


def thirty_written(real, dense: bool = False):
    """The 5 real modules plus 25 more: 30 written modules in four tracks, with prerequisites across tracks."""
    base = real.modules[0]
    have = {m.id for m in real.modules}
    ids = [f"{t}0{i}" for t, n in (("A", 8), ("B", 8), ("C", 7), ("D", 7)) for i in range(1, n + 1)]
    mods = list(real.modules)
    for k, mid in enumerate(i for i in ids if i not in have):
        earlier = [m.id for m in mods]
        prereqs = tuple(earlier[j] for j in range(len(earlier)) if (j * 7 + k) % (3 if dense else 9) == 0)
        mods.append(dataclasses.replace(base, id=mid, track=mid[0], title=LONG[k % len(LONG)] + f" {k}",
                                        prerequisites=prereqs, folder=f"modules/{mid}-synthetic"))
    assert len(mods) == 30
    return dataclasses.replace(real, modules=tuple(mods), planned={})


def five_and_planned(real):
    """The course as it is now: the written modules and the rest of the 30 of the plan."""
    planned = dict(real.planned) or {f"{t}0{i}": LONG[i % len(LONG)] for t in "ABCD" for i in range(1, 8)}
    return dataclasses.replace(real, planned=planned)


def parse(svg: str):
    root = ET.fromstring(svg)
    boxes, titles = {}, {}
    for group in root.findall("s:a", NS) + root.findall("s:g", NS):
        rect = group.find("s:rect", NS)
        mid = group.get("data-module")
        boxes[mid] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
        title = group.find("s:text[@class='node-title']", NS)
        titles[mid] = [t.text or "" for t in title.findall("s:tspan", NS)]  # each line but the last ends in a space
    edges = [p.get("d") for p in root.findall("s:path[@class='edge']", NS)]
    return root, boxes, titles, edges


def intersects(a, b) -> bool:
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def segments(d: str):
    """The straight pieces of an edge path (M x y, then H x / V y)."""
    tokens = re.findall(r"[MHV]|-?\d+(?:\.\d+)?", d)
    x = y = 0.0
    out, i = [], 0
    while i < len(tokens):
        cmd = tokens[i]
        if cmd == "M":
            x, y = float(tokens[i + 1]), float(tokens[i + 2])
            i += 3
            continue
        nx, ny = (float(tokens[i + 1]), y) if cmd == "H" else (x, float(tokens[i + 1]))
        out.append((min(x, nx), min(y, ny), max(x, nx), max(y, ny)))
        x, y = nx, ny
        i += 2
    return out


def courses(real):
    return {"thirty-written": thirty_written(real), "thirty-dense": thirty_written(real, dense=True),
            "five-and-planned": five_and_planned(real)}


@pytest.mark.parametrize("name", ["thirty-written", "thirty-dense", "five-and-planned"])
def test_boxes_do_not_overlap_and_lie_inside_the_picture(real, name):
    course = courses(real)[name]
    root, boxes, _, _ = parse(graph_svg(course))
    assert len(boxes) == 30
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    items = sorted(boxes.items())
    for i, (a, ra) in enumerate(items):
        x, y, w, h = ra
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height, (a, ra, width, height)
        for b, rb in items[i + 1:]:
            assert not intersects(ra, rb), f"{a} {ra} overlaps {b} {rb}"


@pytest.mark.parametrize("name", ["thirty-written", "thirty-dense", "five-and-planned"])
def test_every_title_is_whole_and_fits_its_box(real, name):
    course = courses(real)[name]
    expected = {**dict(course.planned), **{m.id: m.title for m in course.modules}}
    _, boxes, titles, _ = parse(graph_svg(course))
    for mid, title in expected.items():
        assert "".join(titles[mid]) == title, (mid, titles[mid])
        _, _, w, h = boxes[mid]
        for line in titles[mid]:
            assert text_width(line.strip()) <= w - 2 * PAD, (mid, line, w)
        assert h >= 2 * PAD + 16 * (1 + len(titles[mid]))


@pytest.mark.parametrize("name", ["thirty-written", "thirty-dense", "five-and-planned"])
def test_arrows_run_between_boxes_never_across_one(real, name):
    course = courses(real)[name]
    _, boxes, _, edges = parse(graph_svg(course))
    expected = sum(1 for m in course.modules for p in m.prerequisites if p in boxes)
    assert len(edges) == expected
    for d in edges:
        for x0, y0, x1, y1 in segments(d):
            for mid, (x, y, w, h) in boxes.items():
                inside = x0 < x + w and x < x1 and y0 < y + h and y < y1  # the open interior of the box
                assert not inside, f"edge {d} crosses {mid}"


def test_planned_modules_are_boxes_without_links_and_written_ones_link(real):
    course = five_and_planned(real)
    root, boxes, _, _ = parse(graph_svg(course, link_prefix="../"))
    links = {a.get("data-module"): a.get("href") for a in root.findall("s:a", NS)}
    assert set(links) == {m.id for m in course.modules}
    for m in course.modules:
        assert links[m.id] == f"../{m.url}"
    assert len(root.findall("s:g[@class='planned']", NS)) == 30 - len(course.modules)


def test_a_prerequisite_cycle_still_gives_one_box_per_place(real):
    a, b = real.modules[0], real.modules[1]
    looped = (dataclasses.replace(a, prerequisites=(b.id,)), dataclasses.replace(b, prerequisites=(a.id,)))
    course = dataclasses.replace(real, modules=looped + real.modules[2:], planned={})
    _, boxes, _, _ = parse(graph_svg(course))
    items = list(boxes.values())
    assert not any(intersects(p, q) for i, p in enumerate(items) for q in items[i + 1:])


def test_no_module_id_is_left_as_plain_text_for_the_link_pass(real):
    """Module pages turn ids in text into links; the SVG writes ids with a character reference instead."""
    svg = graph_svg(five_and_planned(real))
    text_only = re.sub(r"<[^>]*>", "", svg)
    assert not re.search(r"[A-D]0[1-9]", text_only)
