"""Figures of module B06: each draws from the loaded course, and every bar is a number of
tutor_build.models.data_parallel (the bytes per parameter and per GPU of each ZeRO stage, DDP's buckets)."""

from __future__ import annotations

import re

import pytest

from svgparse import draw, module_fixtures, placed, texts, titles
from tutor_build.models import data_parallel as dp
from tutor_build.models import training_memory

module, figs = module_fixtures("B06")


def test_every_figure_draws_and_is_placed(module, figs):
    assert placed(module) == {"four-desks": 1, "llama-by-stage": 2, "gpt2-buckets": 2}
    for fig_id in figs:
        root = draw(figs, fig_id)
        assert float(root.get("viewBox").split()[2]) <= 560


def test_desks_are_the_stage_formula(figs):
    root = draw(figs, "four-desks")
    n = figs["four-desks"].args["ranks"]
    got = {}
    for t in titles(root):
        m = re.fullmatch(r"(.+), rank (\d+): (.+) (\S+) bytes a parameter", t)
        stage, rank, kind, v = m.groups()
        got.setdefault((stage, int(rank)), 0.0)
        got[(stage, int(rank))] += float(v)
    for s in dp.STAGES:
        name = {0: "stage 0 (DDP)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}[s]
        for r in range(n):
            assert got[(name, r)] == pytest.approx(dp.bytes_per_param(n, s))


def test_llama_bars_are_the_headline(figs):
    root = draw(figs, "llama-by-stage")
    psi = training_memory.MODELS["llama2-7b"]["params"]
    shown = set(texts(root))
    for s in dp.STAGES:
        assert f"{dp.per_rank(psi, 8, s)['states'] / 1e9:.1f} GB" in shown


def test_bucket_strip_is_the_rule(figs):
    root = draw(figs, "gpt2-buckets")
    sizes = dp.ddp_buckets(dp.GPT2["gpt2"])
    assert [t for t in titles(root) if t.startswith("bucket ")] == [
        f"bucket {i + 1}: {b / dp.MiB:.2f} MiB" for i, b in enumerate(sizes)]
