"""Figures of module A05: each is drawn as the site draws it, parsed, and checked against the reduction model
(tutor_build/models/reduction.py) and the numbers the module's text states, so a figure that drifts from the
model, or a model change the figures do not follow, fails here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from svgparse import ROOT, SVG, check_every_figure_draws_and_is_placed, draw, module_fixtures, rects, texts
from tutor_build.models import reduction



module, figs = module_fixtures("A05")




def circles(root: ET.Element) -> list[str]:
    return [c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle") if c.find(f"{SVG}title") is not None]


def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["classroom"] == 1
    assert placed["shuffle-trees"] == 2 and placed["lookback-states"] == 2


def test_classroom_draws_one_queue_and_log2_rounds(figs):
    n = figs["classroom"].args["students"]
    root = draw(figs, "classroom")
    rounds = reduction.tree_rounds(n)
    assert f"Everyone calls one teacher: {reduction.one_address_serial(n)} additions, one after another" in texts(root)
    assert f"Pairs add in rounds: {rounds} rounds for {n} scores" in texts(root)
    assert [t for t in texts(root) if t.startswith("round ")] == [f"round {r}" for r in range(1, rounds + 1)]
    held = [t for t in circles(root) if "holds a partial sum" in t]
    assert len(held) == sum(n >> r for r in range(1, rounds + 1))  # 8 + 4 + 2 + 1
    # section 1 and the alt text state the same counts, in words
    words = {4: "four", 16: "sixteen"}
    analogy = " ".join((ROOT / "modules/A05-reductions-scans-atomics/1-analogy.md").read_text().split())
    assert f"Sixteen scores take {words[rounds]} rounds ({n}, 8, 4, 2, 1)" in analogy
    alt = figs["classroom"].alt
    assert "four rounds" in alt and "sixteen" in alt.lower()


@pytest.mark.parametrize("lanes", [32, 64])
def test_shuffle_rows_are_the_loop_offsets(figs, lanes):
    assert lanes in figs["shuffle-trees"].args["lanes"]
    root = draw(figs, "shuffle-trees")
    cells = [r for r in rects(root) if r["title"].startswith(f"{lanes} lanes, offset ")]
    offsets = sorted({int(re.search(r"offset (\d+)", c["title"]).group(1)) for c in cells}, reverse=True)
    assert offsets == reduction.shuffle_offsets(lanes)
    for d in offsets:
        row = [c for c in cells if f"offset {d}, " in c["title"]]
        assert len(row) == lanes
        useful = [c for c in row if "adds lane" in c["title"]]
        assert len(useful) == d and all("fi-s1" in c["cls"] for c in useful)
    steps = reduction.tree_steps(lanes)
    assert f"{lanes} lanes: {steps} steps (log2 {lanes} = {steps})" in texts(root)
    assert {32: 5, 64: 6}[lanes] == steps


def test_lookback_snapshot_is_the_model_state(figs):
    args = figs["lookback-states"].args
    sim = reduction.lookback(args["tiles"], stagger=args["stagger"], work=args["work"], read=args["read"])
    states_now = [reduction.status_at(t, args["time"]) for t in sim]
    root = draw(figs, "lookback-states")
    tiles = [r for r in rects(root) if re.fullmatch(r"tile \d+: .*", r["title"])]
    assert len(tiles) == args["tiles"]
    names = {reduction.PREFIX: "inclusive prefix", reduction.AGGREGATE: "aggregate", reduction.INVALID: "running",
             None: "not started"}
    for t, (rect, st) in enumerate(zip(tiles, states_now)):
        assert rect["title"].startswith(f"tile {t}: {names[st]}")
    reads = sim[args["focus"]].reads
    assert f"tile {args['focus']} reads {reads} words back, nearest first:" in texts(root)
    # the alt text and caption say what the model computes
    prefix = [t for t, s in enumerate(states_now) if s == reduction.PREFIX]
    agg = [t for t, s in enumerate(states_now) if s == reduction.AGGREGATE]
    run = [t for t, s in enumerate(states_now) if s == reduction.INVALID]
    alt = figs["lookback-states"].alt
    assert f"tiles {prefix[0]} to {prefix[-1]} hold their inclusive prefix" in alt
    assert f"tiles {agg[0]} to {agg[-1]} hold only their own total" in alt
    assert f"tiles {run[0]} to {run[-1]} are running" in alt
    walk = ", ".join(str(j) for j in range(args["focus"] - 1, args["focus"] - 1 - reads, -1))
    assert walk.rsplit(", ", 1)[0] + " and " + walk.rsplit(", ", 1)[1] in alt
    # the arrows are later reads: the last word read is not yet a prefix at the instant drawn, and is one when
    # read (the model's rule), so the figure and its words must say so, not imply the walk ends at tile 3
    last = args["focus"] - reads
    assert states_now[last] != reduction.PREFIX
    assert sim[last].prefix_at <= sim[args["focus"]].prefix_at - args["read"]
    assert f"tile {last}, drawn as it is now, holds its inclusive prefix by the time it is read" in " ".join(
        texts(root))
    assert f"tile {last}, an aggregate at the instant drawn, holds its inclusive prefix" in " ".join(alt.split())
    assert f"the walk stops at tile {last}, which has its prefix by then, not at tile {prefix[-1]}" in " ".join(
        figs["lookback-states"].caption.split())
    steady = {t.reads for t in sim[args["tiles"] // 2:]}
    assert steady == {reads} and f"settles at {reads} words" in figs["lookback-states"].caption
