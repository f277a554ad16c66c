"""Claims of module A05 (reductions, scans and atomics): derived here, then read from the module's own text.

Every number the prose derives (intensities, ridge points, the time to read the benchmark's bytes, the atomics
of each ladder step, the bytes in flight, shuffle steps, summation bounds, the CPU order demonstration, the
integer-exactness limits, the scan's traffic) is recomputed from first principles, the one hardware table, the
lab sources or the reduction model, formatted as the page prints it, and looked up in the paragraph that states
it (tests/claims/prose.py). A change to the prose or to the derivation alone fails.

The second half reads the H200 records and checks the relations the headline and section 5 draw from them.
The labs run on one GPU, so a missing record is a failure, not a skip.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from prose import never_states, states
from requirements_gate import need
from tutor_build.measurements import records
from tutor_build.models import hardware, reduction

ROOT = Path(__file__).parents[2]
REDUCE_CU = (ROOT / "labs/A05/cuda/reduce.cu").read_text(encoding="utf-8")
SCAN_CU = (ROOT / "labs/A05/cuda/scan.cu").read_text(encoding="utf-8")
REDUCE_PY = (ROOT / "labs/A05/triton/reduce.py").read_text(encoding="utf-8")
SCAN_PY = (ROOT / "labs/A05/triton/scan.py").read_text(encoding="utf-8")

FLOAT = 4  # bytes per float32
U = 2.0 ** -24  # float32 unit roundoff, round to nearest (ieee-754-2019)
WORD = 8  # bytes of a look-back status word (status and value packed, as the lab declares)


def lab_int(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return int(found.group(1))


K_BLOCK = lab_int(r"constexpr int kBlock = (\d+);", REDUCE_CU)
K_IN_FLIGHT = lab_int(r"constexpr int kInFlight = (\d+);", REDUCE_CU)
K_BLOCKS_PER_SM = lab_int(r"constexpr int kBlocksPerSM = (\d+);", REDUCE_CU)
N = 1 << lab_int(r'arg_int\(args, "--n", 1ll << (\d+)\)', REDUCE_CU)
N_ATOMIC = 1 << lab_int(r'arg_int\(args, "--n-atomic", 1ll << (\d+)\)', REDUCE_CU)
N_SCAN = 1 << lab_int(r'arg_int\(args, "--n", 1ll << (\d+)\)', SCAN_CU)
SCAN_THREADS = lab_int(r"constexpr int kThreads = (\d+);", SCAN_CU)
SCAN_CHUNKS = lab_int(r"constexpr int kChunks = (\d+);", SCAN_CU)
TILE = SCAN_THREADS * 4 * SCAN_CHUNKS  # kChunk * kChunks, one float4 per thread per chunk
INT_HI = lab_int(r"fill_random\(v, seed, 0\.0f, (\d+)\.0f\)", REDUCE_CU)  # fill_exact: floor gives 0..hi-1
# fill_exact keeps every value up to this many elements, a share MAX_INT_N / n of them above it
MAX_INT_N = 1 << lab_int(r"std::ldexp\(1\.0, (\d+)\) / \(double\)v\.size\(\)", REDUCE_CU)

H200_SMS = int(hardware.value("h200", "units"))
H200_THREADS_PER_SM = int(hardware.value("h200", "max_warps_per_unit") * hardware.value("h200", "lanes"))
H200_BW = hardware.value("h200", "hbm_bw")
MI300X_BW = hardware.value("mi300x", "hbm_bw")
H200_RIDGE = hardware.peak("h200", "fp32") / H200_BW
MI300X_RIDGE = hardware.peak("mi300x", "fp32") / MI300X_BW


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


# ---------------------------------------------------------------- intensity, ridge points, time bounds
def test_intensity_and_ridge_points():
    intensity = (N - 1) / (FLOAT * N)
    states("A05", f"{intensity:.2f}", near="arithmetic intensity", files="2-first-principles.md")
    states("A05", f"{intensity:.2f}", near="I_{\\text{sum}}", files="5-performance.md")
    states("A05", f"{H200_RIDGE:.1f} FLOP/byte", near="| H200 |", files="5-performance.md")
    states("A05", f"{MI300X_RIDGE:.1f} FLOP/byte", near="| MI300X |", files="5-performance.md")
    below = H200_RIDGE / intensity
    states("A05", f"{below:.0f}", near="times below the H200's ridge point", files="2-first-principles.md")
    states("A05", f"{below:.0f}", near="left of the H200's ridge point", files="5-performance.md")
    states("A05", f"{H200_RIDGE / (1 / 8):.0f}", near="left of the H200's ridge point", files="5-performance.md")
    states("A05", f"{below:.0f} times below the ridge point", near="0.25 FLOP/byte", files="cards")


def test_time_to_read_the_bench_bytes():
    nbytes = FLOAT * N
    assert nbytes == 1 << 30
    states("A05", us(nbytes / H200_BW), near="take at least", files="2-first-principles.md")
    states("A05", us(nbytes / MI300X_BW), near="take at least", files="2-first-principles.md")
    states("A05", us(nbytes / H200_BW), near="| H200 |", files="5-performance.md")
    states("A05", us(nbytes / MI300X_BW), near="| MI300X |", files="5-performance.md")


# ---------------------------------------------------------------- atomics per ladder step
def test_atomics_on_the_result():
    grid = H200_SMS * K_BLOCKS_PER_SM
    states("A05", f"{N:,}", near="(1) one per element", files="2-first-principles.md")
    states("A05", f"{N // K_BLOCK:,}", near="(2), (3) one per block", files="2-first-principles.md")
    states("A05", f"{grid:,}", near="(4) one per block of a grid", files="2-first-principles.md")
    states("A05", f"{H200_SMS} SMs × {K_BLOCKS_PER_SM} blocks", near="(4) one per block of a grid",
           files="2-first-principles.md")
    states("A05", f"$2^{{{int(math.log2(N_ATOMIC))}}}$", near="times it on the first", files="2-first-principles.md")
    states("A05", f"{grid:,}", near="A grid of", files="5-performance.md")
    states("A05", f"{grid:,} partials", near="second launch", files="4-labs.md")
    # grid_blocks(n) = min(ceil(n / per_block), grid): full for n > (grid - 1) * per_block, smaller at or below
    per_block = K_BLOCK * 4 * K_IN_FLIGHT
    assert "std::min(want, (unsigned)(sm_count() * kBlocksPerSM))" in REDUCE_CU
    assert "blocks(n, (size_t)kBlock * 4 * kInFlight)" in REDUCE_CU
    full_from = (grid - 1) * per_block
    assert -(-(full_from + 1) // per_block) == grid and -(-full_from // per_block) == grid - 1
    para = states("A05", f"{full_from:,}", near="the grid shrinks", files="6-tradeoffs.md")
    assert f"({H200_SMS} × {K_BLOCKS_PER_SM} − 1) × {per_block:,}" in para and "at or below" in para
    never_states("A05", f"{grid * per_block:,}")


def test_atomics_against_the_read_time():
    # Q3: one atomic per nanosecond, as the question supposes
    serial = N * 1e-9
    read = FLOAT * N / H200_BW
    states("A05", f"{serial * 1e3:.0f} ms", near="× 1 ns", files="9-self-assessment.md")
    states("A05", f"{round(serial / read, -2):,.0f} times", near="× 1 ns", files="9-self-assessment.md")
    grid = H200_SMS * K_BLOCKS_PER_SM
    states("A05", f"{grid * 1e-9 * 1e6:.3f} µs", near="× 1 ns", files="9-self-assessment.md")
    states("A05", f"{100 * grid * 1e-9 / read:.2f}%", near="× 1 ns", files="9-self-assessment.md")


def test_bytes_in_flight():
    assert H200_THREADS_PER_SM == 2048
    in_flight = H200_SMS * H200_THREADS_PER_SM * K_IN_FLIGHT * 16
    states("A05", f"{in_flight:,}", near="Little's law", files="2-first-principles.md")
    states("A05", f"{in_flight / H200_BW * 1e6:.1f} µs", near="Little's law", files="2-first-principles.md")
    states("A05", f"{in_flight:,}", near="Fewer atomics and more bytes in flight", files="5-performance.md")
    states("A05", f"{in_flight:,}", near="keep in flight", files="cards")


# ---------------------------------------------------------------- shuffle trees
def test_shuffle_steps_per_vendor():
    warp, wave = int(hardware.value("h200", "lanes")), int(hardware.value("mi300x", "lanes"))
    assert reduction.tree_steps(warp) == 5 and reduction.tree_steps(wave) == 6
    states("A05", f"s({warp}) = {reduction.tree_steps(warp)}", near="the number of steps is",
           files="2-first-principles.md")
    states("A05", f"s({wave}) = {reduction.tree_steps(wave)}", near="the number of steps is",
           files="2-first-principles.md")
    states("A05", f"$\\log_2 {warp} = {reduction.tree_steps(warp)}$ steps", near="shuffle tree over one warp",
           files="3-silicon.md")
    states("A05", f"$\\log_2 {wave} = {reduction.tree_steps(wave)}$ steps", near="shuffle tree over one warp",
           files="3-silicon.md")
    states("A05", f"$\\log_2 {K_BLOCK} = 8$", near="shared-memory tree of variant (2)", files="2-first-principles.md")
    assert reduction.tree_steps(K_BLOCK) == 8
    # warps per 256-thread block
    states("A05", f"| {K_BLOCK // warp} | {K_BLOCK // wave} |", near="warps or wavefronts in a 256-thread block",
           files="3-silicon.md")


def test_q1_steps_of_a_1024_thread_block():
    warp, wave = 32, 64
    h = reduction.tree_steps(warp) + reduction.tree_steps(warp)  # 32 warps -> one more 32-lane tree
    a = reduction.tree_steps(wave) + reduction.tree_steps(wave)  # the labs' loop always runs all steps
    states("A05", f"**{h}**", near="1,024-thread block has 32 warps", files="9-self-assessment.md")
    states("A05", f"**{a}**", near="1,024-thread block has 32 warps", files="9-self-assessment.md")
    states("A05", f"$\\log_2 1024 = {int(math.log2(1024))}$", near="1,024-thread block has 32 warps",
           files="9-self-assessment.md")


# ---------------------------------------------------------------- summation order
def test_summation_bounds_and_the_cpu_demo():
    n = 1 << 20
    states("A05", f"{reduction.sequential_bound(n):.3f}", near="$n = 2^{20}$", files="2-first-principles.md")
    states("A05", f"{reduction.pairwise_bound(n) / 1e-6:.1f}", near="$n = 2^{20}$", files="2-first-principles.md")
    assert reduction.tree_rounds(n) == 20
    d = reduction.order_demo(n=n, seed=5)
    near = "Three orders"
    states("A05", f"{d['exact']:,.2f}", near=near, files="2-first-principles.md")
    for key in ("forward", "backward", "pairwise"):
        text = f"{d[key]:,.3f}".rstrip("0").rstrip(".")
        states("A05", text, near=near, files="2-first-principles.md")
    for key in ("err_forward", "err_backward", "err_pairwise"):
        mant, exp = f"{d[key]:.1e}".split("e")
        states("A05", f"${mant} \\times 10^{{{int(exp)}}}$", near=near, files="2-first-principles.md")
    assert len({d["forward"], d["backward"], d["pairwise"]}) == 3  # "three different float32 results"


def test_integer_checks_are_exact_in_any_order():
    limit = 2 ** 24  # float32 has a 24-bit significand
    states("A05", f"{limit:,}", near="Two cases are exact", files="2-first-principles.md")
    worst = (INT_HI - 1) * MAX_INT_N  # every value kept up to MAX_INT_N elements
    assert worst < limit
    states("A05", f"{worst:,}", near="Two cases are exact", files="2-first-principles.md")
    states("A05", f"0 to {INT_HI - 1}", near="Two cases are exact", files="2-first-principles.md")
    para = states("A05", f"$2^{{{int(math.log2(MAX_INT_N))}}}/n$", near="Two cases are exact",
                  files="2-first-principles.md")
    assert "asserts that the total stays below" in para
    # above MAX_INT_N elements a share MAX_INT_N / n is kept, and the host asserts the total, in every language
    for text in (REDUCE_CU, SCAN_CU):
        assert INT_HI == lab_int(r"fill_random\(v, seed, 0\.0f, (\d+)\.0f\)", text)
        assert MAX_INT_N == 1 << lab_int(r"std::ldexp\(1\.0, (\d+)\) / \(double\)v\.size\(\)", text)
        assert "if (total >= 0x1.0p24)" in text
    for text in (REDUCE_PY, SCAN_PY):
        assert INT_HI == lab_int(r"rand\(n, lo=0\.0, hi=(\d+)\.0\) if guarded", text)
        assert MAX_INT_N == 2 ** lab_int(r"x\.mul_\(torch\.rand\(n, device=x\.device\) < 2\*\*(\d+) / n\)", text)
        assert "< 2**24, \"the exact input must sum to less than 2^24\"" in text
    # section 4 says the same
    para = states("A05", f"$2^{{{int(math.log2(MAX_INT_N))}}}/n$", near="Two inputs per size", files="4-labs.md")
    assert "0 to 7" in para and "asserts on the host that their total is below $2^{24}$" in para


# ---------------------------------------------------------------- scans
def test_scan_traffic_and_tile_words():
    tiles = N_SCAN // TILE
    assert TILE == 4096
    states("A05", f"{TILE:,}", near="65,536 tiles", files="2-first-principles.md")
    states("A05", f"{tiles:,}", near="publish 8-byte words", files="2-first-principles.md")
    words = (tiles + 1) * WORD
    states("A05", f"{words:,}", near="publish 8-byte words", files="2-first-principles.md")
    share = 100 * words / (2 * FLOAT * N_SCAN)
    states("A05", f"{share:.3f}%", near="publish 8-byte words", files="2-first-principles.md")
    states("A05", f"{share:.3f}%", near="look-back adds", files="9-self-assessment.md")
    states("A05", f"{words:,}", near="look-back adds", files="9-self-assessment.md")
    states("A05", f"{100 * 2 / 3:.1f}%", near="read twice", files="2-first-principles.md")
    states("A05", f"{100 * 2 / 3:.1f}%", near="two thirds of a copy", files="5-performance.md")
    assert f"kWord = {WORD}" not in SCAN_CU and "unsigned long long" in SCAN_CU  # one 64-bit word a tile


# ---------------------------------------------------------------- the H200 records
REDUCE_CUDA = ("atomic_each", "smem_tree", "warp_shuffle", "vec_grid", "two_pass")


@pytest.fixture(scope="module")
def recs():
    return records(ROOT)


def rec(recs, key):
    assert key in recs, f"no record {key}: run `tutor labs bench A05 --course` on the H200"
    return recs[key]


def pct(r) -> float:
    return 100 * r["value"] / r["ceiling"]["value"]


LOOKBACKS = ("lookback", "lookback_backoff", "lookback_persistent", "lookback_persistent_backoff")


def test_every_record_of_the_ladders_exists(recs):
    for v in REDUCE_CUDA:
        rec(recs, f"A05/reduce/{v}/cuda")
    for v in ("atomic", "two_pass", "torch_sum"):
        rec(recs, f"A05/reduce/{v}/triton")
    for v in ("reduce_then_scan", "lookback"):
        rec(recs, f"A05/scan/{v}/cuda")
        rec(recs, f"A05/scan/{v}/triton")
    for v in LOOKBACKS:
        rec(recs, f"A05/scan/{v}/cuda")
    rec(recs, "A05/scan/torch_cumsum/triton")
    # section 4: "No HIP run is recorded"
    assert not [k for k in recs if k.startswith("A05/") and k.endswith("/hip")]
    states("A05", "No HIP run is recorded", near="What the checks do not cover", files="4-labs.md")


def chosen(recs, lab: str, variant: str) -> dict:
    """The candidate the Triton bench kept for a variant: the one of least median ms (min(timings) in the lab),
    timed again afterwards as the variant itself."""
    found = [r for k, r in recs.items() if k.startswith(f"A05/{lab}/{variant}_b") and k.endswith("/triton")]
    assert found, f"no candidates of {lab}/{variant}"
    return min(found, key=lambda r: r["ms"])


def spreads(recs) -> dict[str, float]:
    """The same kernel timed twice in one process: the kept candidate against its second timing."""
    out = {}
    for lab, variant in (("reduce", "atomic"), ("reduce", "two_pass"), ("scan", "reduce_then_scan"),
                         ("scan", "lookback")):
        again = rec(recs, f"A05/{lab}/{variant}/triton")
        out[f"{lab}/{variant}"] = abs(chosen(recs, lab, variant)["value"] / again["value"] - 1)
    return out


def test_the_ladder_climbs_and_ends_at_the_copy_ceiling(recs):
    v = [rec(recs, f"A05/reduce/{k}/cuda")["value"] for k in REDUCE_CUDA]
    assert v[0] < v[1] and v[0] < v[2] < v[3]
    assert v[3] / v[0] > 100  # from step (1) to step (4), orders of magnitude
    assert pct(rec(recs, "A05/reduce/vec_grid/cuda")) >= 95
    assert pct(rec(recs, "A05/reduce/two_pass/cuda")) >= 95


def test_triton_passes_the_copy_and_torch_sum_by_more_than_the_spread(recs):
    """The headline: the best Triton sum reads faster than the copy and than torch.sum in the same run, by more
    than ten times the largest spread of one kernel timed twice; the CUDA vec_grid reads faster than its run's
    copy, two_pass slightly slower, and neither is compared with torch.sum."""
    torch_sum = rec(recs, "A05/reduce/torch_sum/triton")
    tri = {v: rec(recs, f"A05/reduce/{v}/triton") for v in ("atomic", "two_pass")}
    best = max(r["value"] for r in tri.values())
    assert all(r["ceiling"]["value"] == torch_sum["ceiling"]["value"] for r in tri.values())  # the same run
    assert 100 * best / torch_sum["ceiling"]["value"] > 100  # "and faster than the copy"
    spread = max(spreads(recs).values())
    gap = best / torch_sum["value"] - 1
    assert gap > 10 * spread  # "by more than ten times the spread of the timing"
    assert 0 < gap < 0.07  # section 6: "by a few percent"
    assert pct(rec(recs, "A05/reduce/vec_grid/cuda")) > 100 > pct(rec(recs, "A05/reduce/two_pass/cuda")) >= 99
    assert "A05/reduce/torch_sum/cuda" not in recs  # the CUDA bench has no torch.sum: "not measured"
    headline = states("A05", "by more than the timing varies between runs", near="best Triton kernel",
                      files="module.yml")
    assert "whose best Triton kernel reads faster than torch.sum in the same run" in headline
    assert "whose best CUDA and Triton kernels read as fast as the device copy measured in the same run or faster" \
        in headline
    assert "within a few percent of the read-only rate measured in module A04" in headline
    never_states("A05", "by more than the spread of the timing", files="module.yml")
    # the margin over torch.sum exceeds the copy's variation between runs; the margins over the copy do not
    between = max(copy_spreads(recs).values())
    assert gap > between
    vec, two = (pct(rec(recs, f"A05/reduce/{v}/cuda")) for v in ("vec_grid", "two_pass"))
    assert abs(vec - 100) < 100 * between and abs(two - 100) < 100 * between  # "ties with the copy"
    para = states("A05", "by more than ten times the spread of the timing", near="Against `torch.sum` in the same run",
                  files="5-performance.md")
    assert "and by more than the copy's rate varies between runs" in para
    assert "reads faster than the library's" in para and "its library bar is CUB's device-wide sum" in para
    assert "`vec_grid` reads faster than its run's copy, and `two_pass` a fraction of a percent slower" in para
    assert "so they are ties with the copy, not wins over it" in para
    assert "why `torch.sum` reads slower here is not measured" in para
    states("A05", "a few percent", near="When a library call is fast enough", files="6-tradeoffs.md")
    assert pct(torch_sum) >= 95  # "`torch.sum` reads close to the copy ceiling"
    never_states("A05", "within 1%")
    never_states("A05", "Neither Triton variant reaches")
    never_states("A05", "matches torch.sum", files="module.yml")


def test_the_timer_queues_every_run_behind_a_spin_and_flushes_the_l2():
    """Sections 4 and 5 describe the kit's timed_ms (the median of times_ms); the copy ceiling is still timed with
    median_ms, each run waited for, no flush."""
    kit = (ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    cuh = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    for text, lab in ((kit, REDUCE_PY), (kit, SCAN_PY), (cuh, REDUCE_CU), (cuh, SCAN_CU)):
        assert "timed_ms(" in lab and "median_ms(" not in lab
    body = kit[kit.index("def times_ms"):kit.index("def timed_ms")]
    loop = body.index("for i in range(reps):")
    assert body.index("hold_gpu(") < loop  # the spin is enqueued before every timed run
    assert loop < body.index("flush_l2()", loop) < body.index("start[i].record()") < body.index("fn()", loop)
    assert body.index("sync()", body.index("stop[i].record()")) > body.index("stop[i].record()")  # one wait
    assert "return statistics.median(times_ms(" in kit[kit.index("def timed_ms"):kit.index("def median_ms")]
    body = cuh[cuh.index("std::vector<float> times_ms(F&& launch"):cuh.index("inline float median_of")]
    loop = body.index("for (int i = 0; i < how.reps; ++i) {\n    if (how.flush)")
    assert body.index("hold_gpu(") < loop < body.index("cudaEventRecord(start[i])")
    assert "return median_of(times_ms(launch, how));" in cuh
    # the ceiling: the first timer
    assert "ms = median_ms(lambda: dst.copy_(src))" in kit and "float ms = median_ms(copy);" in cuh
    para = states("A05", "`median_ms`", near="The copy ceilings of these runs", files="5-performance.md")
    assert "each run waited for, the L2 not overwritten" in para and "by how much is not measured" in para
    para = states("A05", "the same kernel", near="How much a percent is worth", files="5-performance.md")
    assert "queues every run behind a spinning kernel" in para and "overwrites the L2 before each" in " ".join(
        para.split())


def copy_spreads(recs) -> dict[str, float]:
    """The same copy of the same bytes, the same code, in two processes of one vendor: reduce's run and scan's."""
    out = {}
    for vendor, a, b in (("triton", "A05/reduce/torch_sum/triton", "A05/scan/torch_cumsum/triton"),
                         ("cuda", "A05/reduce/vec_grid/cuda", "A05/scan/lookback/cuda")):
        ca, cb = rec(recs, a)["ceiling"], rec(recs, b)["ceiling"]
        assert ca["name"] == cb["name"]
        hi, lo = max(ca["value"], cb["value"]), min(ca["value"], cb["value"])
        out[vendor] = hi / lo - 1
    return out


def test_the_copy_varies_between_runs_more_than_within_one(recs):
    """Section 5: the copy of the same 1 GiB in the reduce and scan runs of one vendor differs by about 3% in
    Triton and 1% in CUDA, more than one kernel timed twice in one process."""
    for text in (REDUCE_CU, SCAN_CU):
        assert "const size_t bytes = n * sizeof(float);" in text or "size_t bytes = n * sizeof(float)" in text
    for text in (REDUCE_PY, SCAN_PY):
        assert "ceiling = tutor_lab.copy_ceiling(4 * n)" in text
    assert N == N_SCAN and FLOAT * N == 1 << 30  # the same bytes in both labs
    s = copy_spreads(recs)
    assert max(s.values()) > max(spreads(recs).values())
    para = states("A05", f"about {100 * s['triton']:.0f}%", near="Between runs the spread is larger",
                  files="5-performance.md")
    assert f"differ by about {100 * s['cuda']:.0f}%" in para
    assert "the same 1 GiB" in para and "not a property of the kernels" in para
    flat = " ".join(para.split())
    assert "the earlier ones are in the history of `measurements/h200.jsonl`" in flat  # described, never quoted
    assert "read several percent faster in the earlier run" in flat
    never_states("A05", "within a fraction of a percent of these records")
    raw = _raw_paragraph("Between runs the spread is larger")
    assert 'ceiling("A05/reduce/torch_sum/triton")' in raw and 'ceiling("A05/scan/torch_cumsum/triton")' in raw


def test_the_same_kernel_timed_twice_differs_by_under_half_a_percent(recs):
    s = spreads(recs)
    first = chosen(recs, "reduce", "atomic")
    assert first["variant"] == "atomic_b32768_w32"  # "32,768 elements per program on 32 warps"
    assert max(s.values()) < 0.005  # "less than half a percent"
    assert all(v < s["reduce/atomic"] for k, v in s.items() if k != "reduce/atomic")  # "came closer still"
    para = states("A05", "32,768", near="How much a percent is worth", files="5-performance.md")
    assert "32 warps" in para and 'value("A05/reduce/atomic_b32768_w32/triton")' in _raw_paragraph(
        "How much a percent is worth")
    assert "less than half a percent" in para
    # the other chosen candidates named on the page
    assert chosen(recs, "scan", "reduce_then_scan")["variant"] == "reduce_then_scan_b4096_w8"


def _raw_paragraph(near: str) -> str:
    text = (sorted(ROOT.glob("modules/A05-*"))[0] / "5-performance.md").read_text(encoding="utf-8")
    found = [p for p in text.split("\n\n") if near in " ".join(p.split())]
    assert found, near
    return " ".join(found[0].split())


def test_the_candidate_counts_and_block_range():
    def block(variant):
        start = REDUCE_PY.index(f'"{variant}": [', REDUCE_PY.index("CANDIDATES = {"))
        return REDUCE_PY[start:REDUCE_PY.index("]", start)]

    atomic = [int(b) for b in re.findall(r"dict\(BLOCK=(\d+)", block("atomic"))]
    two_pass = re.findall(r"dict\(BLOCK=", block("two_pass"))
    assert len(atomic) == 7 and len(two_pass) == 7
    states("A05", "the fastest of seven candidates", near="Triton `atomic`", files="5-performance.md")
    states("A05", "the fastest of seven shapes", near="Triton `two_pass`", files="5-performance.md")
    states("A05", f"{min(atomic):,} to {max(atomic):,} elements", near="Triton `atomic`", files="4-labs.md")


def test_order_changes_the_bits_and_two_pass_does_not(recs):
    assert rec(recs, "A05/reduce/distinct_two_pass/cuda")["value"] == 1
    assert rec(recs, "A05/reduce/distinct_two_pass/triton")["value"] == 1
    assert rec(recs, "A05/reduce/distinct_vec_grid/cuda")["value"] > 1
    assert rec(recs, "A05/reduce/distinct_atomic/triton")["value"] > 1
    # "at 2^28 elements (n - 1) u is above 1": no bound, and the experiment checks nothing
    assert (N - 1) * U > 1
    para = states("A05", "$(n - 1) u$ is above 1", near="No result of this experiment", files="5-performance.md")
    assert "compared with a reference" in para
    assert "tutor::fill_random(in, 1);" in REDUCE_CU and "x = tutor_lab.rand(n)" in REDUCE_PY  # random floats


def test_the_two_block_trees_run_at_the_same_speed(recs):
    smem, shfl = (rec(recs, f"A05/reduce/{v}/cuda")["value"] for v in ("smem_tree", "warp_shuffle"))
    assert abs(shfl / smem - 1) < 0.03  # "the two trees run at the same speed"


def test_fewer_bytes_did_not_win_and_the_triton_scan_passes_torch_cumsum(recs):
    for vendor in ("cuda", "triton"):
        one = rec(recs, f"A05/scan/lookback/{vendor}")
        three = rec(recs, f"A05/scan/reduce_then_scan/{vendor}")
        assert one["value"] < three["value"]  # "nevertheless slower, in CUDA ... and in Triton"
        assert pct(three) <= 100 * 2 / 3 * 1.05  # three passes cannot beat two thirds of a copy by much
    rts_cuda = rec(recs, "A05/scan/reduce_then_scan/cuda")["value"]
    assert all(rec(recs, f"A05/scan/{v}/cuda")["value"] <= rec(recs, "A05/scan/lookback/cuda")["value"]
               for v in LOOKBACKS)  # "every other CUDA look-back below it"
    assert rec(recs, "A05/scan/lookback/cuda")["value"] < rts_cuda
    cumsum = rec(recs, "A05/scan/torch_cumsum/triton")
    rts = rec(recs, "A05/scan/reduce_then_scan/triton")["value"]
    # the final reduce_then_scan is the candidate b4096_w8, timed again: that pair is the run's spread
    assert lab_int(r'"reduce_then_scan": dict\(BLOCK=(\d+), num_warps=8\)', SCAN_PY) == 4096
    spread = spreads(recs)["scan/reduce_then_scan"]
    gap = rts / cumsum["value"] - 1
    assert gap > 10 * spread  # "one kernel timed twice differs far less than the two scans do"
    assert 0 < gap < 0.07  # "faster than torch.cumsum, by a few percent"
    para = states("A05", "by a few percent", near="three-pass Triton scan", files="5-performance.md")
    assert "faster than `torch.cumsum`" in para and "One run on one GPU shows no more" in para
    states("A05", "passes by a few percent in the same run", near="three-pass Triton scan", files="module.yml")
    never_states("A05", "neither is shown faster")
    never_states("A05", "matches and where", files="module.yml")
    rts_cuda_pct = pct(rec(recs, "A05/scan/reduce_then_scan/cuda"))
    assert 0.95 * 100 * 2 / 3 <= rts_cuda_pct <= 100 * 2 / 3  # "comes close to it"
    states("A05", "comes close to it", near="two thirds of a copy", files="5-performance.md")
    assert pct(cumsum) < 80  # "far from the copy"
    tri = rec(recs, "A05/scan/lookback/triton")["value"]
    faster = [rec(recs, k)["value"] for k in ("A05/scan/torch_cumsum/triton", "A05/scan/reduce_then_scan/triton",
                                              "A05/scan/reduce_then_scan/cuda", "A05/scan/lookback/cuda",
                                              "A05/scan/lookback_backoff/cuda")]
    assert tri < min(faster)  # "slower than torch.cumsum, both three-pass scans and the CUDA look-backs with one
    # block per tile"; not slower than every scan: the persistent look-back with back-off is slower still
    states("A05", "the CUDA look-backs with one block per tile", near="The Triton look-back", files="5-performance.md")
    never_states("A05", "is the slowest of all")


def _ptxas_registers(source: Path) -> dict[str, int]:
    """Registers per thread of each kernel of a lab file, from ptxas (CUDA 13.0, sm_90a)."""
    need(shutil.which("nvcc") is not None, "nvcc is needed to read the kernels' register counts")
    out = subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-cubin", "-Xptxas", "-v",
                          "-I", str(ROOT / "labs/common/cuda"), "-o", "/dev/null", str(source)],
                         check=True, capture_output=True, text=True, cwd=ROOT).stderr
    return {name: int(used) for name, used in
            re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", out, re.S)}


def resident_blocks(regs: int, threads: int) -> int:
    """Blocks of `threads` threads an H200 SM holds at `regs` registers per thread: registers are allocated per
    warp in granules, from the file of the warp's own sub-partition (4 of them); warps and blocks are capped too."""
    lanes = int(hardware.value("h200", "lanes"))
    unit = int(hardware.value("h200", "reg_alloc_unit"))
    per_warp = -(-regs * lanes // unit) * unit
    warps = 4 * (int(hardware.value("h200", "regs_per_unit")) // 4 // per_warp)
    warps = min(warps, int(hardware.value("h200", "max_warps_per_unit")))
    return min(warps // (threads // lanes), int(hardware.value("h200", "max_blocks_per_unit")))


LOOKBACK_KERNEL = "_Z13scan_lookbackILb0EEvPKfPfmPy"  # scan_lookback<false>, the `lookback` variant
PERSISTENT_KERNEL = "_Z24scan_lookback_persistentILb0EEvPKfPfmPy"  # scan_lookback_persistent<false>
TILE_BYTES = 2 * FLOAT * TILE


def tiles_per_us(r) -> float:
    return r["value"] * 1e9 / TILE_BYTES / 1e6


def test_the_scan_is_bounded_by_tiles_in_flight_not_by_one_window_per_round_trip(recs):
    """Section 5: the lab's warp slides its window back when it holds only aggregates, so the bound "one window per
    round trip" is gone; Little's law on the tiles in flight, with the occupancy the compiled kernel allows, gives
    the rates and the block lifetimes."""
    assert "last -= tutor::kWarpSize" in SCAN_CU  # the window slides back
    need_rate = H200_BW / TILE_BYTES / 1e6  # tiles per microsecond to keep pace with the datasheet
    lb = rec(recs, "A05/scan/lookback/cuda")
    got = tiles_per_us(lb)
    regs = _ptxas_registers(ROOT / "labs/A05/cuda/scan.cu")[LOOKBACK_KERNEL]
    per_sm = resident_blocks(regs, SCAN_THREADS)
    assert per_sm < H200_THREADS_PER_SM // SCAN_THREADS  # registers, not threads, set the occupancy
    resident = H200_SMS * per_sm
    lifetime = resident / got
    at_copy = resident / (lb["ceiling"]["value"] * 1e9 / TILE_BYTES / 1e6)
    near = "Little's law on the tiles in flight"
    states("A05", f"{TILE_BYTES:,} bytes", near=near, files="5-performance.md")
    states("A05", f"{need_rate:.0f} per microsecond", near=near, files="5-performance.md")
    states("A05", f"{got:.0f} per", near=near, files="5-performance.md")
    para = states("A05", f"gives `scan_lookback` {regs} registers per thread", near=near, files="5-performance.md")
    lanes = int(hardware.value("h200", "lanes"))
    per_warp = -(-regs * lanes // 256) * 256
    assert f"{per_warp:,} per warp" in para
    assert f"holds {int(hardware.value('h200', 'regs_per_unit')) // 4 // per_warp} such" in para
    assert f"so {per_sm} blocks of {SCAN_THREADS // lanes} warps fit" in para
    assert f"not the {H200_THREADS_PER_SM // SCAN_THREADS} that" in para
    states("A05", f"{resident:,} tiles in flight", near=near, files="5-performance.md")
    states("A05", f"about {lifetime:.1f} µs", near=near, files="5-performance.md")
    states("A05", f"{at_copy:.1f} µs", near=near, files="5-performance.md")
    states("A05", f"up to {resident:,} warps poll", near="their predecessors' words", files="5-performance.md")
    card = states("A05", f"{resident:,} ({per_sm} blocks of {SCAN_THREADS} threads on each of {H200_SMS} SMs)",
                  near="tiles can the lab's CUDA look-back", files="cards")
    assert f"{regs} registers per thread" in card and f"{per_warp:,} per warp" in card
    assert f"holds {per_sm * SCAN_THREADS // lanes} of its warps, not {H200_THREADS_PER_SM // lanes}" in card
    para = states("A05", "not measured", near=near, files="5-performance.md")
    assert "hypothesis" in para
    never_states("A05", "0.22 µs")
    never_states("A05", "at most one window per round trip")
    never_states("A05", "1,056 tiles in flight")


def test_back_off_and_persistent_blocks_did_not_raise_the_rate(recs):
    """Section 5: the two candidates the lab tried. The pause between polls left lookback where it was; the
    persistent look-back, 4 blocks per SM at its register count, is slower, and slower per tile and block slot."""
    assert "__nanosleep(256)" in SCAN_CU and "__builtin_amdgcn_s_sleep(8)" in (
        ROOT / "labs/A05/hip/scan.hip").read_text(encoding="utf-8")
    assert "tickets" in SCAN_CU and "persistent" in SCAN_CU  # the ticket check and the persistent variant exist
    lb, back, pers, pers_back = (rec(recs, f"A05/scan/{v}/cuda") for v in LOOKBACKS)
    assert abs(back["value"] / lb["value"] - 1) < 0.01  # "left the rate where it was"
    assert pers["value"] < 0.9 * lb["value"]  # "Measured, it is slower"
    assert pers_back["value"] < pers["value"]  # the pause does not help the persistent form either
    para = states("A05", "left the rate where it was", near="up to 660 warps poll", files="5-performance.md")
    assert "Tried: the persistent form, which does, was slower" in para
    regs = _ptxas_registers(ROOT / "labs/A05/cuda/scan.cu")
    per_sm = resident_blocks(regs[PERSISTENT_KERNEL], SCAN_THREADS)
    per_sm_lb = resident_blocks(regs[LOOKBACK_KERNEL], SCAN_THREADS)
    assert per_sm < per_sm_lb  # "so 4 blocks of 8 warps fit on an SM, not 5"
    blocks, blocks_lb = H200_SMS * per_sm, H200_SMS * per_sm_lb
    assert N_SCAN // TILE > 100 * blocks  # every persistent block scans many tiles in the bench
    lanes = int(hardware.value("h200", "lanes"))
    near = "What persistent blocks changed"
    para = states("A05", f"as fit at once ({blocks:,} here)", near=near, files="5-performance.md")
    assert f"gives `scan_lookback_persistent` {regs[PERSISTENT_KERNEL]} registers per thread" in para
    assert f"{-(-regs[PERSISTENT_KERNEL] * lanes // 256) * 256:,} per warp" in para
    assert f"so {per_sm} blocks of {SCAN_THREADS // lanes} warps fit on an SM, not {per_sm_lb}" in para
    assert f"{blocks:,} blocks on {H200_SMS} SMs" in para
    per_tile = blocks / tiles_per_us(pers)
    per_tile_lb = blocks_lb / tiles_per_us(lb)
    assert per_tile > per_tile_lb  # "and each slower per tile"
    near = "Measured, it is slower"
    states("A05", f"{per_tile:.1f} µs", near=near, files="5-performance.md")
    states("A05", f"{per_tile_lb:.1f} µs", near=near, files="5-performance.md")
    para = states("A05", f"Each of its {blocks:,} blocks", near=near, files="5-performance.md")
    assert f"each of `lookback`'s {blocks_lb:,}" in para
    assert "Why is not measured. One hypothesis" in para
    assert "did not raise the rate" in para
    never_states("A05", "This lab has not measured it")
    never_states("A05", "What persistent blocks would change")
    states("A05", "nor do persistent blocks or a pause between polls", near="three-pass Triton scan",
           files="module.yml")
    para = states("A05", "neither raised the rate", near="What CUB does differently", files="5-performance.md")
    assert "are not measured here" in para


def test_cub_tiles_are_smaller_than_the_labs():
    cub_tile = 128 * 24  # threads x items of the sm_90 float tuning (cccl-tuning-scan)
    assert cub_tile < TILE
    para = states("A05", f"{cub_tile:,} elements", near="What CUB does differently", files="5-performance.md")
    assert f"{TILE:,}" in para and "bigger tiles are not what its tuning chose" in para
    never_states("A05", "Bigger tiles (more bytes per round trip)")


def test_the_one_address_queue_accounts_for_the_block_atomic_plateau(recs):
    """Section 5, (2) and (3): at atomic_each's rate per atomic, the 2^20 atomics of warp_shuffle account for most
    of its time; one 4-byte load per thread in flight would allow several times its rate at the idle latency."""
    each = rec(recs, "A05/reduce/atomic_each/cuda")
    shfl = rec(recs, "A05/reduce/warp_shuffle/cuda")
    per_atomic = each["ms"] / N_ATOMIC  # ms per atomic on one address
    queue = per_atomic * (N // K_BLOCK) / shfl["ms"]
    # the same share from the rates alone: (3) reads at most K_BLOCK times faster than (1) if the queue sets both
    assert queue == pytest.approx(shfl["value"] / each["value"] / K_BLOCK, rel=1e-3)
    assert queue > 0.9
    near = "The records point at"
    states("A05", f"{K_BLOCK} times faster", near=near, files="5-performance.md")
    states("A05", f"{100 * queue:.0f}%", near=near, files="5-performance.md")
    in_flight = H200_SMS * H200_THREADS_PER_SM * FLOAT
    latency = rec(recs, "A04/pointer_chase/ws_1GiB/cuda")
    assert latency["unit"] == "ns"
    sustained = in_flight / (latency["value"] * 1e-9)
    needed = in_flight / (shfl["value"] * 1e9)
    assert sustained > 3 * shfl["value"] * 1e9
    states("A05", f"{in_flight:,}", near=near, files="5-performance.md")
    states("A05", f"{sustained / 1e12:.1f} TB/s", near=near, files="5-performance.md")
    states("A05", f"{needed * 1e6:.1f} µs", near=near, files="5-performance.md")
    states("A05", f"{needed / (latency['value'] * 1e-9):.1f} times", near=near, files="5-performance.md")
    para = states("A05", "hypothesis", near=near, files="5-performance.md")
    assert "only 4 bytes per thread are in flight" not in para
    states("A05", f"{100 * queue:.0f}%", near="2^20 atomics on one address", files="cards")
    # section 2: the same count, and the latency it covers at the datasheet bandwidth
    states("A05", f"{in_flight:,}", near="a sixteenth of that", files="2-first-principles.md")
    states("A05", f"{in_flight / H200_BW * 1e6:.2f} µs", near="a sixteenth of that", files="2-first-principles.md")
    assert K_IN_FLIGHT * 16 // FLOAT == 16  # "a sixteenth"
    # (3) -> (4): two changes at once
    grid = H200_SMS * K_BLOCKS_PER_SM
    assert round((N // K_BLOCK) / grid, -3) == 1000 and (K_IN_FLIGHT * 16) // FLOAT == 16
    para = states("A05", f"{grid:,}", near="two things", files="5-performance.md")
    assert "a thousand times fewer atomics and sixteen times the bytes in flight" in para


def test_the_checks_reach_the_full_grid_and_the_bench_is_checked():
    """Section 4: the largest check sizes, the grid and loop rounds there, the scan's totals chunks and the
    persistent blocks; the bench checks and the ticket check."""
    def sizes(pattern, text):
        found = re.search(pattern, text)
        assert found, pattern
        return found.group(1)

    assert sizes(r"std::vector<size_t> sizes = \{([^}]*)\};", REDUCE_CU).strip().endswith(
        "1u << 21, (1u << 24) + 3")
    assert sizes(r"std::vector<size_t> sizes = \{([^}]*)\};", SCAN_CU).strip().endswith(
        "(1u << 21) - 1, (1u << 25) + 4099")
    assert sizes(r"    sizes = \[([^\]]*)\]\n    if args.quick", REDUCE_PY).strip().endswith("2**21, 2**24 + 3")
    assert sizes(r"    sizes = \[([^\]]*)\]\n    if args.quick", SCAN_PY).strip().endswith("2**20 + 7, 2**25 + 4099")
    near = "Sizes that are not multiples of anything"
    para = states("A05", "$2^{24} + 3$", near=near, files="4-labs.md")
    assert "$2^{25} + 4099$" in para and "$2^{21}$ and $2^{24} + 3$ (with 65536 in CUDA and HIP)" in para
    assert "$2^{20} + 7$ and $2^{25} + 4099$ (with $2^{21} - 1$ in CUDA and HIP)" in para
    # reduce at 2^24 + 3: the full grid, and 3 or 4 rounds of the 4-loads loop
    largest = (1 << 24) + 3
    per_block = K_BLOCK * 4 * K_IN_FLIGHT
    full = H200_SMS * K_BLOCKS_PER_SM
    grid = min(-(-largest // per_block), full)
    threads = grid * K_BLOCK
    n4 = largest // 4

    def rounds(tid):
        return max(0, -(-(n4 - (K_IN_FLIGHT - 1) * threads - tid) // (K_IN_FLIGHT * threads)))

    assert grid == full and (rounds(threads - 1), rounds(0)) == (3, 4)
    states("A05", f"full grid of {full:,} blocks", near=near, files="4-labs.md")
    states("A05", f"{K_IN_FLIGHT} loads in flight runs 3 or 4", near=near, files="4-labs.md")
    # Triton two_pass at 2^24 + 3 with its default configuration: full grid, several steps per program
    cfg = re.search(r'"two_pass": dict\(BLOCK=(\d+), num_warps=\d+, per_sm=(\d+)\)', REDUCE_PY)
    block, per_sm = int(cfg.group(1)), int(cfg.group(2))
    assert -(-largest // block) > 4 * H200_SMS * per_sm  # "several steps per program"
    # scan at 2^25 + 4099
    scan_n = (1 << 25) + 4099
    check_tiles = -(-scan_n // TILE)
    states("A05", f"{check_tiles:,} tiles", near=near, files="4-labs.md")
    states("A05", f"across {-(-check_tiles // TILE)} chunks of {TILE:,} tile totals", near=near, files="4-labs.md")
    persistent = H200_SMS * resident_blocks(
        _ptxas_registers(ROOT / "labs/A05/cuda/scan.cu")[PERSISTENT_KERNEL], SCAN_THREADS)
    assert check_tiles > 2 * persistent  # "every persistent block scans several tiles"
    totals_block = lab_int(r"TOTALS_BLOCK = (\d+)", SCAN_PY)
    rts_block = lab_int(r'"reduce_then_scan": dict\(BLOCK=(\d+)', SCAN_PY)
    states("A05", f"walks {-(-(-(-scan_n // rts_block)) // totals_block)} blocks of {totals_block:,} totals",
           near=near, files="4-labs.md")
    # the float check only while (n - 1) u < 1/2
    for text in (REDUCE_CU, SCAN_CU):
        assert "integers >= (ku < 0.5 ? 0 : 1)" in text
    for text in (REDUCE_PY, SCAN_PY):
        assert "for integers in (True, False) if ku < 0.5 else (True,):" in text
    assert (2 ** 23) * U == 0.5
    para = states("A05", "below $2^{23}$ elements", near="Two inputs per size", files="4-labs.md")
    assert "$(n - 1) u < 1/2$" in para
    # the bench checks and the ticket counter, in every language; the exercises number tiles without a ticket
    for text in (REDUCE_CU, SCAN_CU):
        assert '+ "_bench"' in text
    for text in (REDUCE_PY, SCAN_PY):
        assert 'name + "_bench"' in text
    assert '"torch_sum_bench"' in REDUCE_PY and '"torch_cumsum_bench"' in SCAN_PY
    assert '"_tickets"' in SCAN_CU and '"_tickets"' in SCAN_PY
    assert "(tiles(n) + (persistent(v) ? grid(v, n) : 0))" in SCAN_CU  # tiles, plus blocks for the persistent forms
    assert "s_tile = blockIdx.x;" in (ROOT / "labs/A05/cuda/scan_exercise.cu").read_text(encoding="utf-8")
    assert "tile = tl.program_id(0)" in (ROOT / "labs/A05/triton/scan_exercise.py").read_text(encoding="utf-8")
    assert "check_tickets" in (ROOT / "labs/A05/triton/scan_exercise.py").read_text(encoding="utf-8")
    para = states("A05", "`<variant>_tickets`", near="The ticket counter.", files="4-labs.md")
    assert "on a CPU as on a GPU" in para and "tiles plus blocks" in para
    para = states("A05", "`<variant>_bench`", near="With `--bench`", files="4-labs.md")
    assert "checked bit for bit" in para and "`torch.sum` and `torch.cumsum`" in para
    para = states("A05", "the ticket check fails", near="**The ticket** (`scan`", files="4-labs.md")
    assert "the counter is never advanced" in para
    # what is left unchecked
    para = states("A05", "No HIP run is recorded", near="What the checks do not cover", files="4-labs.md")
    assert "Above $2^{23}$ elements there is no float check" in para
    assert "caught only when one of them is not 0" in para
    never_states("A05", "leaves the counter at 0 and still passes")
    never_states("A05", "No check is larger than")


def test_the_profiler_counts_one_l2_update_per_atomic(recs):
    """Section 5: one RED instruction per warp, one L2 sector update per element, for atomic_each; one per block
    for the block-level variants."""
    def counter(kernel, metric):
        r = rec(recs, f"A05/reduce/{kernel}.{metric}/cuda")
        assert r.get("kind") == "counter"
        return r["value"]

    warp = int(hardware.value("h200", "lanes"))
    assert counter("atomic_each", "smsp__inst_executed_op_global_red.sum") == N_ATOMIC // warp
    assert counter("atomic_each", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum") == N_ATOMIC // warp
    assert counter("atomic_each", "lts__t_sectors_srcunit_tex_op_red.sum") == N_ATOMIC
    assert counter("warp_shuffle", "smsp__inst_executed_op_global_red.sum") == N // K_BLOCK
    assert counter("vec_grid", "smsp__inst_executed_op_global_red.sum") == H200_SMS * K_BLOCKS_PER_SM


# ---------------------------------------------------------------- the remaining typed numbers
def test_the_words_that_carry_numbers():
    n = 1 << 20
    tighter = reduction.sequential_bound(n) / reduction.pairwise_bound(n)
    assert 10_000 <= tighter < 100_000  # "tens of thousands of times tighter"
    states("A05", "tens of thousands", near="$n = 2^{20}$", files="2-first-principles.md")
    assert (3 - 2) / 2 == 0.5  # 3n elements moved against 2n
    states("A05", "50% more traffic", near="Reduce-then-scan has none of these problems", files="6-tradeoffs.md")


def test_the_silicon_table_reads_the_hardware_table():
    near = "| compute units |"
    states("A05", f"{H200_SMS} SMs", near=near, files="3-silicon.md")
    states("A05", f"{int(hardware.value('mi300x', 'units'))} CUs", near=near, files="3-silicon.md")
    near = "| on-chip memory per unit |"
    states("A05", f"{int(hardware.value('h200', 'shared_per_unit') // 1024)} KB", near=near, files="3-silicon.md")
    states("A05", f"{int(hardware.value('mi300x', 'shared_per_unit') // 1024)} KB", near=near, files="3-silicon.md")


def test_the_bench_method_as_stated():
    cuh = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    kit = (ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    timing = cuh[cuh.index("struct Timing {"):cuh.index("};", cuh.index("struct Timing {"))]
    assert "int warmup = 3;" in timing and "int reps = 20;" in timing
    assert "bool flush = true;" in timing and "bool queue_ahead = true;" in timing
    assert "def timed_ms(fn, warmup: int = 3, reps: int = 20, flush: bool = True, queue_ahead: bool = True)" in kit
    for lab in (REDUCE_CU, SCAN_CU, REDUCE_PY, SCAN_PY):  # the defaults: no Timing or keyword passed
        assert not re.search(r"timed_ms\([^;\n]*(Timing|warmup|reps|flush|queue_ahead)", lab)
    para = states("A05", "median of 20 runs after 3 warm-ups", near="With `--bench`", files="4-labs.md")
    assert "the L2 overwritten before it, all runs queued behind a spinning kernel before one wait" in para
    para = states("A05", "median of 20 timed runs", near="float32 values (1 GiB), median", files="5-performance.md")
    assert "after the L2 is overwritten, all queued behind a spinning kernel" in para


def test_determinism_nearly_for_free(recs):
    share = rec(recs, "A05/reduce/two_pass/cuda")["value"] / rec(recs, "A05/reduce/vec_grid/cuda")["value"]
    assert share >= 0.97  # "nearly for free"
    states("A05", "nearly for free", near="second launch reads", files="5-performance.md")


# ---------------------------------------------------------------- the read-only roof, the flush, the scan's bound
def test_the_best_sums_read_below_the_read_only_roof_of_a04(recs):
    """Section 5: the copy is not the roof of a read-only stream; A04's 2 GiB read, same GPU, is faster than its
    copy, and the best sums reach most of it without passing it."""
    for vendor, best in (("cuda", "A05/reduce/vec_grid/cuda"), ("triton", "A05/reduce/atomic/triton")):
        roof = rec(recs, f"A04/bandwidth/read_2GiB/{vendor}")
        assert roof["unit"] == "GB/s" and roof["value"] > roof["ceiling"]["value"]  # "faster than its run's copy"
        share = rec(recs, best)["value"] / roof["value"]
        assert 0.9 < share < 1  # "do not read faster than the memory can be read"; headline: "within a few percent"
    raw = _raw_paragraph("not the roof of a read-only stream")
    for k in ('value("A04/bandwidth/read_2GiB/cuda")', 'value("A04/bandwidth/read_2GiB/triton")',
              'share("A05/reduce/vec_grid/cuda", "A04/bandwidth/read_2GiB/cuda")',
              'share("A05/reduce/atomic/triton", "A04/bandwidth/read_2GiB/triton")'):
        assert k in raw
    para = states("A05", "below the read-only roof", near="This is the step that reaches the copy ceiling",
                  files="5-performance.md")
    assert "module A04" in para


def test_the_flush_hypothesis_and_its_direction():
    """Section 5: the kit overwrites the L2 with a write of twice its size before each timed kernel run; A04's
    2 GiB read and the copy are timed without it. Up to one L2 of dirty lines, against a 1 GiB read."""
    cuh = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    kit = (ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    flush = cuh[cuh.index("flush_l2"):cuh.index("flush_l2") + 1200]
    assert "cudaMemsetAsync" in flush
    assert "zero_()" in kit[kit.index("def flush_l2"):kit.index("def flush_l2") + 800]
    a04 = (ROOT / "labs/A04/cuda/bandwidth.cu").read_text(encoding="utf-8")
    sweep = a04[a04.index("One set streamed by the whole grid"):a04.index("The 1 GiB stream with K FMAs")]
    assert "set <= big" in sweep and "kWarm);" in sweep and "/*flush=*/false" in a04  # the 2 GiB read: no flush
    # the table gives the GH100's L2 under the H100; the H200 is the same chip (same SM count)
    assert hardware.value("h100-sxm", "units") == H200_SMS
    l2 = hardware.value("h100-sxm", "l2_bytes")
    near = "The kernels and the copy are also timed in different cache states"
    para = states("A05", f"{l2 / 1e6:.0f} MB", near=near, files="5-performance.md")
    states("A05", f"about {100 * l2 / (FLOAT * N):.0f}%", near=near, files="5-performance.md")
    assert "A hypothesis, not measured" in para and "the bias works against the kernels" in para
    assert "twice its size" in para


def test_the_bound_of_reduce_then_scan_with_a_read_only_first_pass(recs):
    """Section 5: 8n bytes counted; pass 1 reads 4n at the read-only rate, passes 2 and 3 move 8n at the copy's:
    8 / (4 / r + 8) of the copy, r = A04's read over its copy, about 68% in both vendors."""
    bounds = []
    for vendor in ("cuda", "triton"):
        roof = rec(recs, f"A04/bandwidth/read_2GiB/{vendor}")
        r = roof["value"] / roof["ceiling"]["value"]
        bounds.append(8 / (4 / r + 8))
    assert {round(100 * b) for b in bounds} == {68}
    assert pct(rec(recs, "A05/scan/reduce_then_scan/cuda")) <= 100 * min(bounds)  # "comes close to it"
    para = states("A05", "about 68%", near="two thirds of a copy", files="5-performance.md")
    assert "if every pass moves bytes at the copy's rate" in para and "The CUDA version comes close to it" in para
    para = states("A05", "66.7%", near="read twice", files="2-first-principles.md")
    assert "if every pass moves bytes at" in para


def test_the_block_tree_barriers():
    """Section 3: smem_tree executes one barrier after the stores and one after each of its 8 steps."""
    body = REDUCE_CU[REDUCE_CU.index("__global__ void smem_tree"):REDUCE_CU.index("// (3) warp_shuffle")]
    before_loop, loop = body.split("for (int half = kBlock / 2; half > 0; half /= 2)")
    assert before_loop.count("__syncthreads();") == 1 and loop.count("__syncthreads();") == 1
    steps = reduction.tree_steps(K_BLOCK)
    assert 1 + steps == 9
    para = states("A05", "eight", near="executes nine of them for 256 threads", files="3-silicon.md")
    assert "one after the stores and one after" in para
    never_states("A05", "needs eight of them")


def test_the_silicon_table_hbm_row():
    near = "| HBM bandwidth (datasheet) |"
    states("A05", f"{H200_BW / 1e12:.1f} TB/s", near=near, files="3-silicon.md")
    states("A05", f"{MI300X_BW / 1e12:.1f} TB/s", near=near, files="3-silicon.md")


def test_vec_grid_fills_every_thread_slot():
    """Section 2's 17,301,504 bytes in flight assume 8 resident blocks of 256 threads per SM (2,048 threads),
    which holds only while ptxas gives vec_grid and partial_sums few enough registers."""
    regs = _ptxas_registers(ROOT / "labs/A05/cuda/reduce.cu")
    for kernel in ("_Z8vec_gridPKfPfm", "_Z12partial_sumsPKfPfm"):
        assert kernel in regs, f"ptxas no longer names {kernel}"
        assert resident_blocks(regs[kernel], K_BLOCK) >= K_BLOCKS_PER_SM
    assert K_BLOCKS_PER_SM * K_BLOCK == H200_THREADS_PER_SM


def test_the_float_check_is_a_sanity_bound():
    """Section 4: the tolerance gamma(n - 1) sum |x| grows like n^2, a random sum like sqrt(n): from 100003
    elements on (of the sizes with a float check) it exceeds the sum's typical size, below it does not."""
    def tol(n):  # sum |x| of uniform [-1, 1) is about n / 2; the typical |sum| is sqrt(n / 3)
        return reduction.gamma(n - 1) * n / 2

    assert "float lo = -1.0f, float hi = 1.0f" in (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    assert tol(100003) > math.sqrt(100003 / 3)
    for n in (1000, 4097, 20011, 65536):
        assert tol(n) < math.sqrt(n / 3)
    para = states("A05", "100003", near="It is a sanity bound", files="4-labs.md")
    assert "a kernel that returned 0 would pass it" in para and "exact integer ones" in para


def test_what_the_cpu_does_not_check_and_the_timed_poison():
    para = states("A05", "`TODO 2`", near="The interpreter runs Triton programs one after another",
                  files="4-labs.md")
    assert "a look-back that stops at an aggregate" in para and "passes there and is recorded as done" in para
    assert 'TUTOR_CHECK(cudaMemset(dout, 0xFF, sizeof(float)));' in REDUCE_CU and 'out.fill_(float("nan"))' in REDUCE_PY
    para = states("A05", "(a NaN)", near="the timed runs of the atomic variants add into the poison",
                  files="4-labs.md")
    assert "not documented" in para


def test_the_hip_atomics_claim_is_limited_to_what_its_source_covers():
    states("A05", "CDNA 1 and 2", near="| float atomic add on global memory |", files="3-silicon.md")
    text = (sorted(ROOT.glob("modules/A05-*"))[0] / "3-silicon.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| float atomic add on global memory |"))
    assert "for gfx942 (MI300X) not inspected here" in row and "@amd-rocm-gpu-atomics" in row
    assert "@nvidia-cuda-guide" not in row  # the guide says nothing of L2: the counters carry that
    states("A05", "CDNA 1 and 2", near="HIP on CDNA", files="7-production.md")
    states("A05", "CDNA 1 and 2", near="munsafe-fp-atomics", files="cards")
    never_states("A05", "would be worse there than on Hopper")
    never_states("A05", "in a million runs")
    card = states("A05", "in L2", near="Atomics on one address are applied one after another", files="cards")
    assert "profiler" in card
    cards = (ROOT / "cards/A05.yml").read_text(encoding="utf-8")
    one = cards[cards.index("id: a05-one-address"):cards.index("id: a05-bytes-in-flight")]
    assert 'cite: "#performance"' in one


def test_the_cited_copy_claim_is_set_against_the_measurement(recs):
    assert pct(rec(recs, "A05/scan/torch_cumsum/triton")) < 80
    para = states("A05", "2016", near="Merrill and Garland report", files="5-performance.md")
    assert "on the H200 of these runs it does not" in para


def test_the_best_cuda_sum_matches_the_library_sum_of_the_same_run(recs):
    """Section 5: CUB's DeviceReduce::Sum on the same buffer in the same CUDA run is the library bar; vec_grid
    matches it (within the half-per-cent spread the page names) and two_pass is within 2% of it."""
    cub = rec(recs, "A05/reduce/library_sum/cuda")
    vec = rec(recs, "A05/reduce/vec_grid/cuda")
    two = rec(recs, "A05/reduce/two_pass/cuda")
    assert cub["ceiling"] == vec["ceiling"] == two["ceiling"]  # one run
    assert vec["value"] >= 0.995 * cub["value"], (vec["value"], cub["value"])
    assert 0.98 * cub["value"] <= two["value"] < cub["value"], (two["value"], cub["value"])
    behind = 1 - two["value"] / cub["value"]
    para = states("A05", 'share("A05/reduce/vec_grid/cuda", "A05/reduce/library_sum/cuda")',
                  near="its library bar is CUB's device-wide sum", files="5-performance.md")
    assert 'share("A05/reduce/two_pass/cuda", "A05/reduce/library_sum/cuda")' in para
    flat = " ".join(para.split())
    assert "the fastest hand-written sum matches the library's" in flat
    assert 0.005 < behind < 0.015 and "the fixed-order one sits about 1% behind it" in flat
    assert "The CUDA bench times each kernel once, so these margins have no spread of their own" in flat
    assert max(copy_spreads(recs).values()) > max(behind, abs(1 - vec["value"] / cub["value"]))
    states("A05", "whose best CUDA kernel matches CUB's DeviceReduce::Sum timed on the same buffer in the same run",
           near="headline:", files="module.yml")
    # the library bar is timed as the ladder is: scratch allocated outside the window, output poisoned, the
    # result checked bit for bit (tolerances 0, 0), in both vendors' files
    for path, ns, malloc in (("labs/A05/cuda/reduce.cu", "cub", "cudaMalloc(&scratch"),
                             ("labs/A05/hip/reduce.hip", "hipcub", "hipMalloc(&scratch")):
        src = (ROOT / path).read_text(encoding="utf-8")
        body = src[src.index("void bench_library("):src.index("#else", src.index("void bench_library("))]
        assert body.index(malloc) < body.index("timed_ms(") < body.index("check_close(")
        assert f"timed_ms([&] {{ TUTOR_CHECK({ns}::DeviceReduce::Sum(scratch, scratch_bytes, din, dout" in body
        assert '"library_sum_bench", std::to_string(n), &got, &want, 1, seed, 0, 0);' in body
        assert "0xFF" in body[:body.index("timed_ms(")]
        assert "bench_library(din, dout, n, total, ceiling, seed);" in src[src.index("void bench("):]
