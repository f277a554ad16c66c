"""Claims of module A08 (measuring and profiling): derived here, then read from the module's own text.

Every number the prose derives (the lab's bytes and DRAM floors, the ridge points and how far below them
the kernel sits, the flush sizes, the streams' grid, the drill answers) is recomputed from the lab's own
source, the one hardware table, the installed Triton's own source or the lab's records, formatted as the
page prints it, and looked up in the paragraph that states it (tests/claims/prose.py). A change to the
prose or to the derivation alone fails.

The second half reads the H200 records and checks the relations the prose draws from them (which trap
reads below the floor, where the warm L2 stops mattering, which launch path is faster). The lab runs on
one GPU, so a missing record is a failure, not a skip.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import yaml

from prose import states
from tutor_build.measurements import records
from tutor_build.models import hardware, timing

ROOT = Path(__file__).parents[2]
LAB_CU = (ROOT / "labs/A08/cuda/timing.cu").read_text(encoding="utf-8")
LAB_TRITON = (ROOT / "labs/A08/triton/timing.py").read_text(encoding="utf-8")
PROFILE = yaml.safe_load((ROOT / "labs/A08/profile.yml").read_text(encoding="utf-8"))
FIGURES = yaml.safe_load((ROOT / "modules/A08-measuring-profiling/figures.yml").read_text(encoding="utf-8"))

MIB = 2**20
FLOAT = 4  # bytes per fp32 element


def lab(pattern: str, text: str = LAB_CU) -> str:
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return found.group(1)


SMALL = 1 << int(lab(r'"--small", 1 << (\d+)\)'))
LARGE = 1 << int(lab(r'"--large", 1 << (\d+)\)'))
assert SMALL == 1 << int(lab(r'"--small", type=int, default=1 << (\d+)\)', LAB_TRITON))
assert LARGE == 1 << int(lab(r'"--large", type=int, default=1 << (\d+)\)', LAB_TRITON))
PER_ELEMENT = 2 * FLOAT  # y = a * x: one float read, one written (the lab's floor_of(8.0 * n))
assert "8.0 * small" in LAB_CU and "8.0 * n" in LAB_CU
N_LAUNCHES = int(lab(r"constexpr int kN = (\d+);"))
SPIN_CYCLES = int(lab(r"const long long cycles = (\d+);"))
GRID_DIVISOR = int(lab(r"sms / (\d+)\)"))
HBM = hardware.value("h200", "hbm_bw")
HBM_MI = hardware.value("mi300x", "hbm_bw")
SMS = int(hardware.value("h200", "units"))
IC = hardware.value("mi300x", "infinity_cache_bytes")
XCD_L2 = hardware.value("mi300x", "l2_bytes") / 8  # 8 XCDs (amd-rocm-gpu-specs)


def do_bench_buffer() -> int:
    """Bytes of the buffer triton.testing.do_bench clears, read from the installed Triton's NVIDIA driver."""
    from triton.backends.nvidia import driver

    src = inspect.getsource(driver.CudaDriver.get_empty_cache_for_benchmark)
    size = re.search(r"cache_size = (\d+) \* (\d+) \* (\d+)", src)
    assert size, "do_bench's buffer size is no longer spelled as a product in the Triton driver"
    return int(size.group(1)) * int(size.group(2)) * int(size.group(3))


def us(x: float, fmt: str = ".2f") -> str:
    return f"{x * 1e6:{fmt}}"


# =============================================================================================
# Derived from first principles, the lab's source and the hardware table
# =============================================================================================


def tex(n: int) -> str:
    """A whole number as the page's TeX prints it: 16{,}777{,}216."""
    return f"{n:,}".replace(",", "{,}")


def test_the_lab_bytes():
    small, large = SMALL * PER_ELEMENT, LARGE * PER_ELEMENT
    states("A08", tex(small), near="B_\\text{small}")
    states("A08", f"{small // MIB} \\text{{ MiB}}", near="B_\\text{small}")
    states("A08", f"{large:,}", near="Its large size")
    states("A08", f"{large // MIB} MiB", near="Its large size")
    states("A08", f"{SMALL * FLOAT // MIB} MiB", near="an 8 MiB `x`")  # each buffer
    states("A08", f"{small // MIB} MiB", near="an 8 MiB `x`")


def test_the_large_kernel_moves_32_times_the_bytes():
    states("A08", f"{LARGE // SMALL} times the\nbytes".split("\n")[0], near="At its floor the small kernel")


def test_the_dram_floors():
    states("A08", tex(SMALL * PER_ELEMENT), near="4.8 \\times 10^{12}} = ")
    states("A08", us(SMALL * PER_ELEMENT / HBM), near="4.8 \\times 10^{12}} = ")
    states("A08", us(LARGE * PER_ELEMENT / HBM, ".1f"), near="4.8 \\times 10^{12}} = ")


def test_the_ridge_points_and_the_distance_below_them():
    intensity = 1 / PER_ELEMENT
    states("A08", f"{intensity:.3f}", near="\\frac{1 \\text{ FLOP}}")
    ridge = hardware.peak("h200", "fp32") / HBM
    ridge_mi = hardware.peak("mi300x", "fp32") / HBM_MI
    states("A08", f"{ridge:.1f}", near="The ridge point of an H200")
    states("A08", f"{ridge_mi:.1f}", near="The ridge point of an H200")
    states("A08", f"{ridge / intensity:.0f}", near="times below the H200's ridge")
    states("A08", f"{ridge_mi / intensity:.0f}", near="times below the H200's ridge")


def test_the_counted_bytes_of_the_profiled_kernels():
    states("A08", f"{SMALL * FLOAT:,}", near="The small kernel reads `x`")
    states("A08", f"{LARGE * FLOAT:,}", near="The small kernel reads `x`")
    kernels = {entry["kernel"] for entry in PROFILE}
    assert kernels == {"scale_first", "scale"}
    # launch_skip of the large entry: the checks' launches plus the small bench launches, as the file explains
    checks = len(re.search(r"std::vector<size_t> sizes = \{([^}]*)\};", LAB_CU).group(1).split(","))
    large = next(e for e in PROFILE if e["kernel"] == "scale")
    host_reps = int(lab(r"host_no_sync\(\[&\] \{ launch_scale\(dx, dy, n\); \}, (\d+)\)"))
    kit_src = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text()
    warmup, reps = map(int, re.search(r"int warmup = (\d+);\s*int reps = (\d+);", kit_src).groups())
    kit = warmup + reps  # median_ms defaults (tutor::Timing)
    waited = 3 + int(lab(r"for \(int r = 0; r < (\d+); \+\+r\) \{\n    TUTOR_CHECK\(cudaEventRecord\(start\)\);"))
    event = 3 + int(lab(r"event_times\(on, wait, 3, (\d+), s\)"))
    right = 3 + int(lab(r"event_times\(on, cold, 3, is_small \? (\d+) :"))
    assert large["launch_skip"] == checks + host_reps + kit + waited + event + right


def test_the_flush_sizes():
    l2 = FIGURES[2]["args"]["l2_mib"] * MIB  # the L2 the H200 reports, held to its record below
    states("A08", f"{2 * l2:,.0f} bytes", near="so the lab writes")
    states("A08", f"{2 * l2 / MIB:.0f} MiB", near="so the lab writes")
    states("A08", f"{2 * l2 / MIB:.0f} MiB", near="What the cache sizes mean for a flush")
    states("A08", f"{do_bench_buffer() / l2:.1f} times", near="What the cache sizes mean for a flush")
    states("A08", f"{2 * IC / MIB:.0f} MiB", near="Flush that empties it")
    states("A08", f"{IC / MIB:.0f} MiB", near="Flush that empties it")
    states("A08", f"{us(2 * l2 / HBM, '.1f')} µs", near="Flushing costs device time")
    states("A08", f"{LARGE * PER_ELEMENT / l2:.1f}".replace("8.5", "eight and a half"),
           near="Its large size")


def test_the_kit_ceiling_is_many_l2s():  # "17 times" near "What this means for the course"
    kit = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    ceiling = kit[kit.index("inline Ceiling copy_ceiling("):]
    assert "float ms = median_ms(copy);" in ceiling[:ceiling.index("\n}\n")]  # "still measured with median_ms"
    default = int(re.search(r"copy_ceiling\(size_t bytes = size_t\(1\) << (\d+)\)", kit).group(1))
    l2 = FIGURES[2]["args"]["l2_mib"] * MIB
    states("A08", f"{(1 << default) / l2:.0f} times", near="What this means for the course")


def test_the_streams_grid():
    grid = SMS // GRID_DIVISOR
    states("A08", f"{grid} blocks", near="a quarter as many blocks")
    states("A08", f"{2 * grid}", near="a quarter as many blocks")
    states("A08", f"{SMS} SMs", near="a quarter as many blocks")
    states("A08", f"{SPIN_CYCLES:,}", near="a quarter as many blocks")
    states("A08", f"{SPIN_CYCLES / 2e9 * 1e6:.0f} µs at 2 GHz", near="a quarter as many blocks")
    states("A08", f"{grid} blocks each", near="Two kernels of")
    states("A08", f"{N_LAUNCHES:,}", near="in a run of")


def test_the_drills():
    q1 = 3 * (1 << 23) * FLOAT
    states("A08", tex(q1), near="Bytes: $3")
    states("A08", f"{q1 / HBM * 1e6:.1f}", near="Bytes: $3")
    states("A08", f"{q1 / HBM_MI * 1e6:.1f}", near="Bytes: $3")
    states("A08", f"{q1 // MIB} MiB", near="Bytes: $3")
    states("A08", f"{2 * XCD_L2 / MIB:.0f} MiB", near="Twice 4 MiB")
    states("A08", f"{do_bench_buffer() / IC:.1f} times", near="Twice 4 MiB")
    states("A08", f"{1e9 / HBM * 1e6:.0f}", near="they timed the enqueue")
    eager = 400 * max(5, 2 + 1)
    graph = 400 * (2 + 1)
    states("A08", f"{eager:,}", near="the host is the bottleneck")
    states("A08", tex(graph), near="the host is the bottleneck")
    states("A08", f"{eager / graph:.2f}", near="the host is the bottleneck")


def test_the_model_orders_what_section_2_derives():
    t = timing.Timeline(**FIGURES[0]["args"])
    assert timing.reading(t, "host_no_sync") == t.enqueue
    assert timing.reading(t, "events_idle") > timing.reading(t, "events_warm_l2")
    assert timing.dram_bytes(1, SMALL * PER_ELEMENT, FIGURES[2]["args"]["l2_mib"] * MIB, warm=True) == 0
    assert timing.dram_bytes(1, LARGE * PER_ELEMENT, FIGURES[2]["args"]["l2_mib"] * MIB, warm=True) == 1


# =============================================================================================
# Measurement records (NVIDIA H200): every one exists, and the prose's relations hold
# =============================================================================================

SMALL_VARIANTS = ["small_cold_first_call", "small_host_no_sync", "small_kit", "small_warm_l2", "small_right",
                  "small_after_idle", "small_after_idle_first", "small_kit_waited", "launch_event_waited",
                  "spread_p10", "spread_p90", "large_kit", "large_right", "launch_event_single", "launch_host",
                  "launch_eager", "launch_graph"]


class Records(dict):
    def __missing__(self, key: str):
        raise AssertionError(f"no record for {key}: run `tutor labs bench A08 --course` (and `tutor labs profile "
                             "A08 --course`) on the H200")


@pytest.fixture(scope="module")
def recs() -> Records:
    return Records(records(ROOT))


def v(recs, variant: str, vendor: str = "cuda") -> float:
    return recs[f"A08/timing/{variant}/{vendor}"]["value"]


def test_every_record_exists(recs):
    for vendor in ("cuda", "triton"):
        for variant in SMALL_VARIANTS + ["device_l2"]:
            assert recs[f"A08/timing/{variant}/{vendor}"]
    for variant in ("streams_one", "streams_serial", "streams_two"):
        assert recs[f"A08/timing/{variant}/cuda"]
    for variant in ("small_do_bench", "small_do_bench_median"):
        assert recs[f"A08/timing/{variant}/triton"]
    for entry in PROFILE:
        for metric in entry["metrics"]:
            assert recs[f"A08/timing/{entry['kernel']}.{metric}/cuda"]


def test_the_reported_l2_is_the_figures(recs):
    for vendor in ("cuda", "triton"):
        assert v(recs, "device_l2", vendor) == FIGURES[2]["args"]["l2_mib"]


def test_the_floors_are_the_bytes_at_the_copy_rate(recs):
    for vendor in ("cuda", "triton"):
        copy = recs[f"A08/timing/launch_host/{vendor}"]["ceiling"]
        assert copy["unit"] == "GB/s"
        for variant, n in (("small_right", SMALL), ("large_right", LARGE)):
            rec = recs[f"A08/timing/{variant}/{vendor}"]
            assert rec["bytes"] == n * PER_ELEMENT
            assert rec["ceiling"]["value"] == pytest.approx(n * PER_ELEMENT / (copy["value"] * 1e3), rel=1e-4)


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_trap_2_is_the_largest_error_and_trap_3_reads_less_but_above_the_floor(recs, vendor):
    right = v(recs, "small_right", vendor)
    others = [v(recs, k, vendor) for k in ("small_host_no_sync", "small_kit", "small_kit_waited", "small_warm_l2",
                                            "small_after_idle", "small_after_idle_first")]
    assert v(recs, "small_cold_first_call", vendor) > 5 * max(others + [right])
    floor = recs[f"A08/timing/small_warm_l2/{vendor}"]["ceiling"]["value"]
    assert floor < v(recs, "small_warm_l2", vendor) < right
    assert v(recs, "spread_p10", vendor) <= right <= v(recs, "spread_p90", vendor)


def test_trap_1_reads_less_than_the_kernel_in_cuda_and_more_in_triton(recs):
    # "of the same order as the DRAM floor": above or below it depending on the host (both have been seen)
    floor = recs["A08/timing/small_host_no_sync/cuda"]["ceiling"]["value"]
    assert 0.5 * floor < v(recs, "small_host_no_sync") < 2 * floor
    assert v(recs, "small_host_no_sync") < v(recs, "small_right")
    assert v(recs, "small_host_no_sync", "triton") > v(recs, "small_right", "triton")


def test_trap_4_records_the_first_repeats_after_idle():
    assert 'record("small_after_idle_first", idle[0]' in LAB_CU
    assert "first10 += idle[r] / 10" in LAB_CU and "statistics.mean(idle[:10])" in LAB_TRITON
    para = states("A08", "first ten", near="Trap 4, the clocks")
    assert "DRAM-bound" not in para


@pytest.mark.parametrize("vendor", ["triton"])
def test_the_first_repeat_after_idle_is_slow(recs, vendor):
    """"In Triton the first repeat reads well above the right way, and the mean of the first ten less so";
    the other nine of the ten (ten times the mean, less the first, over nine) at or below the right way."""
    first, mean10, right = (v(recs, k, vendor) for k in ("small_after_idle_first", "small_after_idle", "small_right"))
    assert first > 1.1 * right
    assert right < mean10 < first
    assert (10 * mean10 - first) / 9 <= right
    states("A08", "ten times that mean, less the first repeat, over nine", near="Trap 4, the clocks")


@pytest.mark.parametrize("vendor", ["cuda"])
def test_no_slow_first_repeat_shows_after_idle(recs, vendor):
    """"In CUDA nothing shows, even on the first repeat": the first repeat and the mean of the first ten
    both within the right way's noise."""
    right = v(recs, "small_right", vendor)
    assert v(recs, "small_after_idle_first", vendor) <= 1.1 * right
    assert v(recs, "small_after_idle", vendor) <= 1.1 * right


def test_no_record_reads_the_clocks_or_the_right_ways_first_repeat(recs):
    """The page calls the clock a hypothesis because nothing in the lab records a clock, nor the first repeat
    of the right way after busy work; a lab that starts recording either must have its page revisited."""
    for key in recs:
        if key.startswith("A08/"):
            assert "clock" not in key.split("/")[2], key
            assert key.split("/")[2] not in ("small_right_first", "small_right_mean10"), key
    for src in (LAB_CU, LAB_TRITON):
        assert "clocks_sm" not in src and "nvmlDeviceGetClock" not in src and "pynvml" not in src


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_the_kit_now_reads_the_right_way(recs, vendor):
    # timed_ms flushes and queues ahead as the right way does: "within a few percent" (the headline)
    assert v(recs, "small_kit", vendor) / v(recs, "small_right", vendor) == pytest.approx(1.0, abs=0.05)
    assert v(recs, "large_kit", vendor) / v(recs, "large_right", vendor) == pytest.approx(1.0, abs=0.05)
    assert "tutor::timed_ms([&] { launch_scale(dx, dy, n); })" in LAB_CU
    assert 'tutor_lab.timed_ms(run)' in LAB_TRITON
    assert "tutor::timed_ms([&] { bump<<<1, 1>>>(dy); })" in LAB_CU
    assert "tutor_lab.timed_ms(lambda: bump_kernel[(1,)](one))" in LAB_TRITON


def test_the_waiting_timer_falls_into_both_traps(recs):
    warm, waited = v(recs, "small_warm_l2"), v(recs, "small_kit_waited")
    assert warm < v(recs, "small_right")  # the warm L2 makes it faster ...
    assert warm < waited < warm + v(recs, "launch_host")  # ... part of an enqueue slower again
    assert v(recs, "small_kit_waited", "triton") / v(recs, "small_right", "triton") > 1.5  # the gap wins
    # Q4: "less than one enqueue in CUDA, more than one from Python"
    assert v(recs, "small_kit_waited", "triton") - v(recs, "small_warm_l2", "triton") > v(recs, "launch_host", "triton")
    states("A08", "more than even the warm time plus one\nwhole host enqueue".replace("\n", " "),
           near="What `median_ms` does, and what that costs")


def test_the_labs_copy_of_median_ms_is_the_kits():
    """small_kit_waited and launch_event_waited time the kit's first timer as the lab's own copy: the same
    3 warm-up runs and 20 waited-for runs, no flush."""
    kit = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    warmup, reps = map(int, re.search(r"float median_ms\(F&& launch, int warmup = (\d+), int reps = (\d+)\)",
                                      kit).groups())
    assert (warmup, reps) == (3, 20)
    assert f"def median_ms(fn, warmup: int = {warmup}, reps: int = {reps})" in (
        ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    body = LAB_CU[LAB_CU.index("double waited_median(F&& launch)"):]
    body = body[:body.index("\n}\n")]
    assert f"for (int i = 0; i < {warmup}; ++i) launch();" in body and f"r < {reps}; ++r" in body
    assert "cudaEventSynchronize(stop)" in body and "flush" not in body
    tbody = LAB_TRITON[LAB_TRITON.index("def waited_median(fn)"):LAB_TRITON.index("def l2_bytes")]
    assert f"for _ in range({warmup}):" in tbody and f"for _ in range({reps}):" in tbody
    assert "b.synchronize()" in tbody and "flush" not in tbody.split('"""')[2]
    states("A08", "the lab's copy of the kit's first timer, `median_ms`", near="`small_kit_waited`",
           files="4-labs.md")


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_a_waited_empty_launch_holds_more_than_a_queued_one(recs, vendor):
    assert v(recs, "launch_event_waited", vendor) > v(recs, "launch_event_single", vendor)


def test_the_waited_empty_launch_holds_less_than_an_enqueue_in_cuda_and_more_in_triton(recs):
    extra = {k: v(recs, "launch_event_waited", k) - v(recs, "launch_event_single", k) for k in ("cuda", "triton")}
    assert extra["cuda"] < v(recs, "launch_host")
    assert extra["triton"] > v(recs, "launch_host", "triton")
    states("A08", "less than one host enqueue", near="The last two rows")
    # "a few microseconds in CUDA (the launch table above) ...; from Python it is larger"
    assert recs["A08/timing/launch_event_waited/cuda"]["unit"] == "us" and extra["cuda"] < 10
    assert extra["triton"] > extra["cuda"]
    states("A08", "a\nfew microseconds in CUDA".replace("\n", " "), near="What this means for the course")


def test_which_labs_use_which_timer():
    """The page names the modules whose labs still call median_ms and those that call timed_ms."""
    still = ["A01", "A02", "A06", "A07", "B04", "B07", "C07"]
    moved = ["A03", "A04", "A05", "A08"]

    def sources(module: str) -> list[str]:
        return [p.read_text(encoding="utf-8") for p in sorted((ROOT / "labs" / module).glob("*/*"))
                if p.suffix in (".cu", ".hip", ".py") and not p.name.endswith("_exercise" + p.suffix)]

    for module in still:
        assert any("median_ms(" in src for src in sources(module)), module
    for module in moved:
        assert any("timed_ms(" in src for src in sources(module)), module
        assert not any(re.search(r"\bmedian_ms\(", src) for src in sources(module)), module
    states("A08", ", ".join(still[:-1]) + f" and {still[-1]}", near="has two timers")
    states("A08", ", ".join(moved[:-2]) + f", {moved[-2]} and this lab", near="has two timers")


def test_the_two_median_rules():
    kit = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    first = kit[kit.index("float median_ms(F&& launch"):]
    assert "return times[reps / 2];" in first[:first.index("\n}\n")]
    assert "0.5f * (sorted[n / 2 - 1] + sorted[n / 2])" in kit
    py = (ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    assert "return statistics.median(times)" in py and "statistics.median(times_ms(" in py
    for src in (LAB_CU, LAB_TRITON):  # the lab's copy: the rank rule of stats_of / stats, upper middle of 20
        assert "q * (double)(t.size() - 1) + 0.5" in src or "q * (len(t) - 1) + 0.5" in src
    reps = 20
    assert int(0.5 * (reps - 1) + 0.5) == reps // 2
    states("A08", f"`times[reps / 2]` of {reps} sorted times (the {reps // 2 + 1}th)", near="keeps its first rule")


def test_do_bench_agrees_with_the_right_way_within_its_spread(recs):
    lo, hi = v(recs, "spread_p10", "triton"), v(recs, "spread_p90", "triton")
    for variant in ("small_do_bench", "small_do_bench_median"):
        assert lo <= v(recs, variant, "triton") <= hi


def test_the_triton_kernel_gains_more_from_the_warm_l2(recs):
    gain = {k: v(recs, "small_warm_l2", k) / v(recs, "small_right", k) for k in ("cuda", "triton")}
    assert gain["triton"] < gain["cuda"]
    block = int(re.search(r"^BLOCK = (\d+)$", LAB_TRITON, re.M).group(1))
    assert "num_warps" not in LAB_TRITON  # the default of 4 warps (triton-config)
    states("A08", f"{block:,} elements over {4 * 32} threads is {block // (4 * 32)}", near="wider accesses")


def test_only_the_triton_kernel_reaches_its_floor_at_512_mib(recs):
    floor = {k: recs[f"A08/timing/large_right/{k}"]["ceiling"]["value"] for k in ("cuda", "triton")}
    assert v(recs, "large_right", "triton") <= 1.1 * floor["triton"]
    assert v(recs, "large_right") > 1.2 * floor["cuda"]


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_the_kit_relations(recs, vendor):
    assert v(recs, "small_kit", vendor) >= v(recs, "small_warm_l2", vendor)  # flushed, not warm
    assert v(recs, "small_cold_first_call", vendor) > v(recs, "small_kit", vendor)
    assert v(recs, "launch_event_single", vendor) > v(recs, "launch_graph", vendor)


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_the_graph_is_faster_per_launch_than_eager(recs, vendor):
    assert v(recs, "launch_graph", vendor) < v(recs, "launch_eager", vendor)


def test_two_streams_beat_one(recs):
    one, serial, two = (v(recs, f"streams_{k}") for k in ("one", "serial", "two"))
    assert serial == pytest.approx(2 * one, rel=0.15)
    assert two < 0.75 * serial


def counter(recs, kernel: str, metric: str) -> float:
    rec = recs[f"A08/timing/{kernel}.{metric}/cuda"]
    assert rec["kind"] == "counter"
    return rec["value"]


def test_the_profiled_kernels_read_x_from_dram(recs):
    assert counter(recs, "scale_first", "dram__bytes_read.sum") == pytest.approx(SMALL * FLOAT, rel=0.01)
    assert counter(recs, "scale", "dram__bytes_read.sum") == pytest.approx(LARGE * FLOAT, rel=0.01)


def test_the_writes_trail_and_the_hit_rate_is_half(recs):
    assert counter(recs, "scale_first", "dram__bytes_write.sum") < 0.05 * SMALL * FLOAT  # y still in the L2
    written = counter(recs, "scale", "dram__bytes_write.sum")
    assert 0.8 * LARGE * FLOAT < written < LARGE * FLOAT  # all but the last stretch
    for kernel in ("scale_first", "scale"):
        assert 40 <= counter(recs, kernel, "lts__t_sector_hit_rate.pct") <= 60
    small_tp = counter(recs, "scale_first", "dram__throughput.avg.pct_of_peak_sustained_elapsed")
    assert small_tp < counter(recs, "scale", "dram__throughput.avg.pct_of_peak_sustained_elapsed")


def test_the_profiled_small_kernel_is_shorter_than_the_right_way(recs):
    rec = recs["A08/timing/scale_first.gpu__time_duration.sum/cuda"]
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[rec["unit"]]
    assert rec["value"] * scale < v(recs, "small_right")


def test_the_counts_the_page_types_are_the_labs():
    sizes = re.search(r"std::vector<size_t> sizes = \{([^}]*)\};", LAB_CU).group(1).split(",")
    text = ", ".join(f"{int(n):,}" for n in sizes[:-1]) + f" and {int(sizes[-1]):,}"
    states("A08", text, near="on fresh random inputs")
    streams = re.findall(r"\(size_t\)(\d+)", re.search(r"for \(size_t n : \{([^}]*)\}\) verify_streams",
                                                          LAB_CU).group(1))
    states("A08", ", ".join(f"{int(n):,}" for n in streams[:-1]) + f" and {int(streams[-1]):,}",
           near="The two-stream pair")
    warm_ms = set(re.findall(r"warm_clocks\(flush, (\d+), s\)", LAB_CU))
    assert warm_ms == {"100"} and "def warm_clocks(ms: float = 100.0)" in LAB_TRITON
    states("A08", "100 ms of busy work", near="every\ntimer after them".replace("\n", " "), files="4-labs.md")
    kit = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    warmup, reps = map(int, re.search(r"int warmup = (\d+);\s*int reps = (\d+);", kit).groups())
    assert "warmup: int = 3, reps: int = 20" in (ROOT / "labs/common/python/tutor_lab.py").read_text()
    assert "for (int r = 0; r < 20; ++r)" in LAB_CU and "for _ in range(20):" in LAB_TRITON  # the waited timer
    states("A08", "20 runs", near="What `median_ms` does, and what that costs")
    states("A08", f"{warmup} warm-up runs, then {reps} runs", near="`small_kit`, `large_kit`")
    states("A08", "each of 20 runs", near="`small_kit_waited`")


def test_a_set_just_above_the_l2_still_reads_at_an_l2_rate(recs):
    """The counterexample to the model's sharp step, from A04's records (section 2, step 5)."""
    l2 = v(recs, "device_l2") * MIB
    assert 64 * MIB > l2
    just_above = recs["A04/bandwidth/read_64MiB/cuda"]["value"]
    dram = recs["A04/bandwidth/read_2GiB/cuda"]["value"]
    assert just_above > 1.3 * dram
    states("A08", "64 MiB set", near="The sharp step is the model's")
