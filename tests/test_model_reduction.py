"""The reduction model (tutor_build/models/reduction.py): shuffle trees, the look-back toy clock and the
summation-order demonstration, checked against independent computations."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from tutor_build.models import reduction


@pytest.mark.parametrize("lanes", [2, 4, 8, 16, 32, 64, 128])
def test_the_tree_takes_log2_lanes_steps_and_sums_every_lane(lanes):
    assert reduction.tree_steps(lanes) == int(math.log2(lanes))
    values = [float(random.randint(-50, 50)) for _ in range(lanes)]
    assert reduction.tree_sum_lanes(values) == sum(values)
    # every lane feeds lane 0 exactly once through the useful pairs
    reach = {lane: {lane} for lane in range(lanes)}
    for step in reduction.shuffle_tree(lanes):
        for dst, src in step:
            reach[dst] |= reach[src]
    assert reach[0] == set(range(lanes))


def test_a_loop_written_for_32_lanes_loses_half_a_wavefront():
    values = [1.0] * 64
    v = list(values)
    for d in reduction.shuffle_offsets(32):  # the 32-lane offsets on 64 lanes
        v = [v[lane] + (v[lane + d] if lane + d < 64 else 0.0) for lane in range(64)]
    assert v[0] == 32.0 and reduction.tree_sum_lanes(values) == 64.0


def test_bad_lane_counts_are_refused():
    for bad in (0, 1, 3, 48):
        with pytest.raises(ValueError):
            reduction.shuffle_offsets(bad)


def test_lookback_publishes_in_order_and_the_walk_stays_bounded():
    sim = reduction.lookback(64, stagger=0.5, work=6.0, read=1.5)
    for t, tile in enumerate(sim):
        assert tile.start <= tile.aggregate_at <= tile.prefix_at
        if t:
            # a prefix needs the predecessors' totals: never before the predecessor's prefix is possible
            assert tile.prefix_at >= sim[t - 1].aggregate_at
            assert 1 <= tile.reads <= t
    assert max(t.reads for t in sim[16:]) == min(t.reads for t in sim[16:])  # a steady state


def test_status_follows_the_clock():
    tile = reduction.Tile(start=1.0, aggregate_at=3.0, prefix_at=5.0, reads=1)
    assert reduction.status_at(tile, 0.5) is None
    assert reduction.status_at(tile, 2.0) == reduction.INVALID
    assert reduction.status_at(tile, 4.0) == reduction.AGGREGATE
    assert reduction.status_at(tile, 5.0) == reduction.PREFIX


def test_gamma_and_bounds():
    u = 2.0 ** -24
    assert reduction.gamma(1) == pytest.approx(u / (1 - u))
    assert reduction.sequential_bound(1 << 20) == pytest.approx(((1 << 20) - 1) * u / (1 - ((1 << 20) - 1) * u))
    assert reduction.pairwise_bound(1 << 20) == pytest.approx(20 * u / (1 - 20 * u))


def test_order_demo_matches_an_independent_float32_loop():
    n = 4099
    d = reduction.order_demo(n=n, seed=11)
    x = np.random.default_rng(11).random(n, dtype=np.float32)
    s = np.float32(0.0)
    for v in x:
        s = np.float32(s + v)
    assert d["forward"] == float(s)
    assert d["exact"] == pytest.approx(float(np.sum(x, dtype=np.float64)), rel=1e-15)
    for k in ("err_forward", "err_backward", "err_pairwise"):
        assert d[k] <= d["bound_sequential"]
    assert d["err_pairwise"] <= d["bound_pairwise"]
