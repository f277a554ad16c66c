"""Figures of module B03: each is drawn as the site draws it, parsed, and checked against the attention-io
model (tutor_build/models/attention_io.py), so a figure that drifts from the model fails here."""

from __future__ import annotations

import re

from svgparse import check_every_figure_draws_and_is_placed, draw, module_fixtures, rects
from tutor_build.models import attention_io as io

module, figs = module_fixtures("B03")


def test_every_figure_draws_and_is_placed(module, figs):
    placed = check_every_figure_draws_and_is_placed(module, figs)
    assert placed["archive-trips"] == 1
    assert placed["bytes-vs-length"] == 2 and placed["causal-tiles"] == 2


def test_archive_segments_are_the_model_bytes(figs):
    kernels = io.naive_kernel_bytes(4096, 64, 4)
    titles = [r["title"] for r in rects(draw(figs, "archive-trips")) if r.get("title")]
    naive = [t for t in titles if t.startswith("naive: ")]
    assert len(naive) == 6
    for t in naive:
        kernel, way, nbytes = re.match(r"naive: (\w+) (read|write)s (\d+) bytes", t).groups()
        assert int(nbytes) == kernels[kernel][way]
    tiled = [t for t in titles if t.startswith("tiled: ")]
    assert tiled == [f"tiled: {io.compulsory_bytes(4096, 64, 4)} bytes (read Q, K, V, write O)"]


def test_length_bars_are_the_model_bytes(figs):
    block = io.block_rows(128, 227 * 1024, 2)
    seen = 0
    for r in rects(draw(figs, "bytes-vs-length")):
        m = re.match(r"(.+): n = (\d+): (\d+) bytes", r.get("title") or "")
        if not m:
            continue
        name, n, nbytes = m.group(1), int(m.group(2)), int(m.group(3))
        want = (io.naive_bytes(n, 128, 2) if name == "naive" else
                io.compulsory_bytes(n, 128, 2) if name.startswith("compulsory") else io.tiled_bytes(n, 128, 2, block))
        assert nbytes == want
        seen += 1
    assert seen == 15


def test_causal_cells_are_the_model_counts(figs):
    counts = io.causal_blocks(1000, 128, 64)
    kinds = [r["title"].rsplit(": ", 1)[1] for r in rects(draw(figs, "causal-tiles"))
             if (r.get("title") or "").startswith("query block")]
    for kind in ("whole", "masked", "skipped"):
        assert kinds.count(kind) == counts[kind]
    assert len(kinds) == counts["total"]
