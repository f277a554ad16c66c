"""The timing model of module A08 (tutor_build/models/timing.py): what each way of timing reads."""

from __future__ import annotations

import pytest

from tutor_build.models import timing


def test_each_way_reads_the_intervals_section_2_derives():
    t = timing.Timeline(enqueue=2, latency=3, kernel=10, wake=1, first_call=50, kernel_warm=6)
    assert timing.reading(t, "host_no_sync") == 2
    assert timing.reading(t, "first_call") == 50 + 2 + 3 + 10 + 1
    assert timing.reading(t, "events_idle") == 2 + 6
    assert timing.reading(t, "events_warm_l2") == 6
    assert timing.reading(t, "right") == 10
    assert timing.error(t, "right") == 1.0
    with pytest.raises(ValueError):
        timing.reading(t, "stopwatch")


def test_the_no_sync_clock_misses_the_whole_kernel():
    t = timing.Timeline()
    host, queued, kernel, wait = timing.segments(t)
    assert host.end <= queued.start < kernel.start
    assert wait.end == kernel.end + t.wake


def test_a_cyclic_sweep_keeps_all_of_a_set_that_fits_and_nothing_of_one_that_does_not():
    c = 50e6
    assert timing.dram_bytes(8.0, 16 * 2**20, c, warm=True) == 0.0
    assert timing.dram_bytes(8.0, 16 * 2**20, c, warm=False) == 8.0
    assert timing.dram_bytes(8.0, c + 1, c, warm=True) == 8.0
    assert timing.flush_bytes(c) == 100e6
