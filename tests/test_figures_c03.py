"""Figures of module C03: each is drawn as the site draws it, parsed, and checked against the KV model
(tutor_build/models/kvcache.py) and against closed forms written out here, so a figure that drifts from the
model or from the published configs fails."""

from __future__ import annotations

import re

from svgparse import check_every_figure_draws_and_is_placed, draw, module_fixtures, texts, titles
from tutor_build.figures import c03
from tutor_build.models import kvcache as kv

module, figs = module_fixtures("C03")


def test_every_figure_is_placed_in_the_section_it_explains(module, figs):
    where = check_every_figure_draws_and_is_placed(module, figs)
    assert where == {"shelf": 1, "kv-bytes": 2, "block-table": 2}


def test_shelf_rows_tile_the_pool_and_hold_the_same_notes(figs):
    rows = c03.shelf_rows()
    assert len(rows) == 3
    need = sum(n for _, n in c03.SHELF_REQUESTS)
    for _, segs in rows:
        covered = sorted((s, s + n) for s, n, _, _ in segs if n > 0)
        assert covered[0][0] == 0 and covered[-1][1] == c03.SHELF_POOL
        assert all(a[1] == b[0] for a, b in zip(covered, covered[1:])), "segments overlap or leave a gap"
        assert sum(n for _, n, part, _ in segs if part == "used") == need
    fixed, fit, paged = c03.shelf_totals()
    assert fixed["internal"] == len(c03.SHELF_REQUESTS) * c03.SHELF_FIXED - need and fixed["external"] == 0
    assert fit["internal"] == sum(c03.SHELF_RESERVED.values()) - need
    assert fit["external"] > 0 and paged["external"] == 0
    # pages waste less than one page per request, and what is free is whole pages
    assert paged["internal"] < c03.SHELF_PAGE * len(c03.SHELF_REQUESTS)
    assert paged["free"] % c03.SHELF_PAGE == 0
    root = draw(figs, "shelf")
    shown = texts(root)
    for t in (fixed, fit, paged):
        assert f"{t['used']} holding notes · {t['internal']} empty inside · {t['external']} in gaps too short" in shown


def test_shelf_alt_text_matches_the_drawing(figs):
    fixed, fit, paged = c03.shelf_totals()
    alt = figs["shelf"].alt
    for n in (fixed["internal"], fit["internal"], fit["external"], paged["internal"], paged["free"]):
        assert re.search(rf"\b{n}\b", alt)


def test_kv_bytes_bars_are_the_configs(figs):
    root = draw(figs, "kv-bytes")
    got = {t.rsplit(": ", 1)[0]: int(t.rsplit(": ", 1)[1].split()[0].replace(",", "")) for t in titles(root)}
    want = {  # 2 x layers x KV heads x head dim x 2 bytes, and MLA's latent, from the configs cited on the page
        "Llama 2 7B": 2 * 32 * 32 * 128 * 2,
        "Llama 3.1 8B": 2 * 32 * 8 * 128 * 2,
        "Mistral 7B": 2 * 32 * 8 * 128 * 2,
        "Llama 3.1 70B": 2 * 80 * 8 * 128 * 2,
        "Falcon 7B": 2 * 32 * 1 * 64 * 2,
        "DeepSeek-V3": 61 * (512 + 64) * 2,
    }
    assert got == want
    assert {m.name: kv.bytes_per_token(m) for m in kv.MODELS} == want
    for name, b in want.items():
        assert f"{b:,}" in figs["kv-bytes"].alt


def test_block_table_shares_the_prefix_pages(figs):
    root = draw(figs, "block-table")
    t = titles(root)
    shared = set(c03.BT_TABLES["A"]) & set(c03.BT_TABLES["B"])
    assert shared == {3, 7}
    for p in range(c03.BT_POOL):
        want = "shared by A and B" if p in shared else "A" if p in c03.BT_TABLES["A"] else \
            "B" if p in c03.BT_TABLES["B"] else "free"
        assert f"page {p}: {want}" in t
    shown = texts(root)
    assert "= 32 KiB of K and 32 KiB of V per layer" in shown  # 16 x 8 x 128 x 2 bytes
    assert f"table bytes per KV byte, one head: {4 / (16 * 2 * 128 * 2):.3%}" in shown
    assert "a 64-token tile reads 4 table entries, then its K and V" in shown
    assert "0.049%" in figs["block-table"].alt
    one_head = 16 * 2 * 128 * 2  # a page of one head's K and V
    assert one_head == 8 * 1024 and "4-byte entry for 8 KiB of one head's" in figs["block-table"].caption
