"""Claims of module A04 (the memory hierarchy and the roofline): derived here, then read from its own text.

The ridge points, the FMA stream's intensities, the pointer chase's line and hop counts, the bytes in
flight of the stream, the register and cache totals, and the answers of the self-assessment are recomputed
from the one hardware table (tutor_build.models.hardware), the hierarchy model built on it
(tutor_build.models.hierarchy), or the lab's own source, formatted as the page prints them and found in the
paragraph that states them (tests/claims/prose.py).

The second half reads the H200 records of the two labs and checks the relations the prose draws from them:
each cliff of the chase where the capacities put it, the bandwidth ordering of the levels, the FMA stream
flat below the ridge and on the FP32 roof above it. The labs run on one GPU, so a missing record fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from prose import never_states, states
from tutor_build.measurements import records
from tutor_build.models import hardware, hierarchy

ROOT = Path(__file__).parents[2]
CHASE_CU = (ROOT / "labs/A04/cuda/pointer_chase.cu").read_text(encoding="utf-8")
BW_CU = (ROOT / "labs/A04/cuda/bandwidth.cu").read_text(encoding="utf-8")
BW_HIP = (ROOT / "labs/A04/hip/bandwidth.hip").read_text(encoding="utf-8")
BW_TRITON = (ROOT / "labs/A04/triton/bandwidth.py").read_text(encoding="utf-8")

FLOAT = 4  # bytes of a float32
FLOAT4 = 16  # bytes of one float4 load
FMA_FLOP = 2  # a fused multiply-add is two floating-point operations
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def lab_int(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return int(found.group(1))


LINE = lab_int(r"constexpr unsigned kLine = (\d+);", CHASE_CU)
HOPS = 1 << lab_int(r'"--hops", 1 << (\d+)\)', CHASE_CU)
MAX_MIB = lab_int(r'"--max-mib", (\d+)\)', CHASE_CU)
SMALLEST = lab_int(r"const double l1 = time_chase\(\"global\", size_t\((\d+)\) << 10", CHASE_CU) * KIB
UNROLL = lab_int(r"constexpr int kUnroll = (\d+);", BW_CU)
THREADS = lab_int(r"constexpr int kThreads = (\d+);", BW_CU)
BLOCKS_PER_SM = lab_int(r"constexpr int kBlocksPerSM = (\d+);", BW_CU)
RESIDENT_CU = lab_int(r"constexpr int kResidentBytes = (\d+) \* 1024;", BW_CU) * KIB
RESIDENT_HIP = lab_int(r"constexpr int kResidentBytes = (\d+) \* 1024;", BW_HIP) * KIB
PASSES_L1 = lab_int(r"passes_l1 = (\d+);", BW_CU)
INTENSITIES = [int(k) for k in re.search(r"kIntensities\[\] = \{([\d, ]+)\}", BW_CU).group(1).split(",")]
SMS = int(hardware.value("h200", "units"))
# the L2 size the lab's H200 reports to the CUDA runtime (cudaDevAttrL2CacheSize), from the device transcript
DEVICE_TXT = (ROOT / "measurements/transcripts/h200-device.txt").read_text(encoding="utf-8")
L2_REPORTED = lab_int(r"L2_cache_size (\d+)", DEVICE_TXT)
REFS_TXT = (ROOT / "references.yml").read_text(encoding="utf-8")


def ridge(device: str, precision: str) -> float:
    return hierarchy.ridge(device, precision)


# =============================================================================================
# The roofline: ridge points and the FMA stream
# =============================================================================================


@pytest.mark.parametrize("device,row", [("h200", "| H200 |"), ("mi300x", "| MI300X |")])
def test_ridge_table(device, row):
    bw = hardware.value(device, "hbm_bw")
    para = states("A04", f"{bw / 1e12:.1f} TB/s", near=row)
    for precision in ("fp32", "bf16", "fp8"):
        peak = hardware.peak(device, precision)
        assert f"{peak / 1e12:,.0f} TFLOP/s, $I^{{*}}$ = {ridge(device, precision):.0f}" in para, (device, precision, para)


def test_ridge_points_wherever_the_page_uses_them():
    h = {p: f"{ridge('h200', p):.0f}" for p in ("fp32", "bf16", "fp8")}
    m = {p: f"{ridge('mi300x', p):.0f}" for p in ("fp32", "bf16", "fp8")}
    states("A04", h["fp8"], near="An FP8 kernel on an H200 must do")
    para = states("A04", h["fp32"], near="The ridge points of section 2, from the datasheets")
    for number in (m["fp32"], h["bf16"], m["bf16"], h["fp8"], m["fp8"]):
        assert re.search(rf"(?<![\d,]){number}(?!\d)", para), number
    states("A04", h["fp32"], near="FP32 on CUDA\n  cores".replace("\n  ", " "))
    states("A04", h["bf16"], near="BF16 on Tensor Cores")
    states("A04", h["fp8"], near="FP8 and the ridge")
    states("A04", h["fp32"], near="BF16's 990 TFLOP/s are Tensor Core rates")
    para = states("A04", h["fp32"], near="Count its FLOP and its HBM bytes")
    assert f"BF16\n    {h['bf16']}".split()[1] in para and h["fp8"] in para
    states("A04", f"{ridge('h200', 'fp32'):.0f} FLOP per byte for FP32", near="67 / 4.8", files="cards")
    states("A04", f"{ridge('mi300x', 'fp8'):.0f} for FP8", near="163.4 / 5.3", files="cards")


def test_fma_stream_intensity_and_the_k_at_the_ridge():
    assert INTENSITIES == [2 ** i for i in range(9)]
    lo, hi = hierarchy.fma_intensity(INTENSITIES[0]), hierarchy.fma_intensity(INTENSITIES[-1])
    states("A04", f"$k$ = {INTENSITIES[0]} is {lo:g} FLOP per byte", near="The lab's `fma_k` stream loads")
    states("A04", f"$k$ = {INTENSITIES[-1]} is {hi:g}", near="The lab's `fma_k` stream loads")
    states("A04", f"from {lo:g} to {hi:g}", near="The `fma_k` stream moves the same 1 GiB")
    kh = hierarchy.fmas_at_ridge(ridge("h200", "fp32"))
    km = hierarchy.fmas_at_ridge(ridge("mi300x", "fp32"))
    para = states("A04", f"$k$ = {kh:.0f} FMAs per float on the H200", near="It meets the FP32 ridge")
    assert f"{km:.0f} on the\n   MI300X".split()[0] in para
    below = max(k for k in INTENSITIES if k < kh)
    above = min(k for k in INTENSITIES if k > kh)
    states("A04", f"between {below} and {above} on the\n   H200".split("\n")[0], near="Then predict the $k$")
    states("A04", f"k = {kh:.0f}", near="A stream loads 4-byte floats", files="cards")


def test_fp32_peak_from_lanes_and_clock():
    f = hierarchy.hopper_fp32_clock("h200")
    states("A04", f"$f$ = {f / 1e9:.2f} GHz", near="The FP32 peak is a count of lanes and clocks")
    assert hierarchy.HOPPER_FP32_LANES.value == lab_int(r"constexpr int kFp32PerSM = (\d+);", BW_CU)
    p = hierarchy.cdna3_fp32_peak()
    assert p == pytest.approx(hardware.peak("mi300x", "fp32"), rel=1e-3)
    states("A04", f"{p / 1e12:.1f} TFLOP/s of its datasheet", near="On the MI300X, 304 CUs")


# =============================================================================================
# The pointer chase
# =============================================================================================


def test_lines_hops_and_the_cost_of_the_launch():
    assert LINE == 128 and SMALLEST == 16 * KIB and MAX_MIB * MIB == 4 * GIB
    para = states("A04", f"A 16 KiB set has $n$ = {hierarchy.chase_footprint(SMALLEST, LINE)} lines", near="**The chain.**")
    assert f"a 4 GiB set has {hierarchy.chase_footprint(MAX_MIB * MIB, LINE):,}" in para
    launch = 5e-6  # seconds: "a few microseconds", the figure the step assumes
    states("A04", f"$H$ = {HOPS:,} hops", near="**The overhead is negligible.**")
    states("A04", f"adds {launch / HOPS * 1e9:.2f} ns", near="**The overhead is negligible.**")
    sizes = int(math.log2(MAX_MIB * MIB // SMALLEST)) + 1
    states("A04", f"{sizes} sizes doubling from 16 KiB", near="| `pointer_chase` | `ws_16KiB`")
    lines = hierarchy.chase_footprint(MAX_MIB * MIB, LINE)
    states("A04", f"{lines / 1e6:.1f}\nmillion lines".split("\n")[0], near="On an H200 the CUDA benchmark of `pointer_chase`")


def test_one_sm_one_l1():
    l1 = hierarchy.level("h200", "l1")
    states("A04", f"{l1.total / 1e6:.1f} MB together", near="why the 16 MiB set")
    states("A04", f"{l1.total / 1e6:.1f} MB together", near="The 132 L1s of an H200")
    per_sm = 16 * MIB / SMS
    states("A04", f"{per_sm / KIB:.0f} KiB per SM", near="spread over all SMs could keep a 16 MiB set")
    per_sm4 = 4 * MIB / SMS
    states("A04", f"about {per_sm4 / 1e3:.0f} KB per SM", near="ld.global.cg (__ldcg)", files="cards")
    shared_chase = 16 * KIB // LINE
    states("A04", f"a cycle of {shared_chase} lines in shared memory", near="`shared`,")


# =============================================================================================
# The stream: bytes in flight and bytes per launch
# =============================================================================================


def test_bytes_in_flight_of_the_stream():
    threads = BLOCKS_PER_SM * THREADS
    assert threads == hardware.value("h200", "max_warps_per_unit") * hardware.value("h200", "lanes")
    per_sm = threads * UNROLL * FLOAT4
    para = states("A04", f"{threads:,} threads per SM: {per_sm // KIB} KiB in flight", near="To sustain $B$ the whole GPU")
    assert f"all {SMS} SMs" in para
    states("A04", f"{threads:,} threads per SM and {per_sm // KIB} KiB", near="Little's law: $N = B")


def threads_for(n: int, blocks: int) -> int:
    """The lab's threads_for: the block size, a multiple of 32 up to kThreads, at which each thread has kUnroll
    loads of a pass over n float4s."""
    return max(32, min(THREADS, n // (UNROLL * blocks) // 32 * 32))


def test_the_grid_is_sized_to_the_set():
    assert "int threads_for(size_t n, int blocks)" in BW_CU and "threads_for(set / sizeof(float4), blocks)" in BW_CU
    assert "n / ((size_t)kUnroll * blocks) / 32 * 32" in BW_CU
    blocks = BLOCKS_PER_SM * SMS
    reach = UNROLL * blocks * THREADS * FLOAT4  # the full grid's one pass: every thread four loads
    assert reach / MIB == pytest.approx(16.5) and f"{reach / MIB:.1f} MiB on {SMS} SMs" in BW_CU
    threads = {mib: threads_for(mib * MIB // FLOAT4, blocks) for mib in (4, 8, 16, 32)}
    assert threads == {4: 224, 8: 480, 16: 992, 32: THREADS}
    para = states("A04", f"The grid's {blocks}\n   blocks keep that".split("\n")[0], near="To sustain $B$ the whole GPU")
    assert f"blocks of {THREADS:,} threads keep that" in para
    assert f"({threads[4]} threads at 4 MiB,\n   {threads[8]} at 8, {threads[16]} at 16)".replace("\n   ", " ") in para
    for mib in (4, 8, 16):
        t = threads[mib]
        assert t * UNROLL * blocks * FLOAT4 <= mib * MIB  # every thread has its four loads
        assert threads_for(mib * MIB // FLOAT4, blocks) < THREADS
    flight = {mib: BLOCKS_PER_SM * threads[mib] * UNROLL * FLOAT4 // KIB for mib in (4, 8, 16, 32)}
    assert f"{BLOCKS_PER_SM} blocks × {threads[4]} threads × {UNROLL * FLOAT4} bytes = {flight[4]} KiB at 4 MiB" in para
    assert f"{flight[8]} KiB\n   at 8 MiB and {flight[16]} KiB at 16 MiB, against {flight[32]} KiB from 32 MiB".replace("\n   ", " ") in para
    para = states("A04", f"({flight[4]}, {flight[8]} and {flight[16]} KiB)", near="**L2:")
    # the Triton grid: min(16 x SMs, cdiv(n, BLOCK)) programs, one BLOCK of floats each a pass at 4 MiB
    programs = lab_int(r"programs, block = (\d+) \* sms, \d+", BW_TRITON) * SMS
    block = lab_int(r"programs, block = \d+ \* sms, (\d+)", BW_TRITON)
    assert "grid = min(programs, triton.cdiv(xs.numel(), block))" in BW_TRITON
    grid4 = min(programs, -(-4 * MIB // FLOAT // block))
    assert grid4 * block * FLOAT == 4 * MIB
    assert f"whose {grid4:,} programs at 4 MiB each read one {block * FLOAT // KIB} KiB block a pass, {4 * MIB / SMS / KIB:.0f} KiB per SM" in para


def test_the_small_sets_fall_short_of_the_l2_rate():
    bw = {(s, v): rec(f"A04/bandwidth/read_{s}/{v}")["value"] for s in ("4MiB", "8MiB", "16MiB", "32MiB") for v in ("cuda", "triton")}
    share = {s: bw[(s, "cuda")] / bw[("32MiB", "cuda")] for s in ("4MiB", "8MiB", "16MiB")}
    assert share["4MiB"] < share["8MiB"] < share["16MiB"] <= 1.0  # in the order of their bytes in flight
    assert share["8MiB"] < 0.98  # "still loses rate below 16 MiB", with room for the run-to-run spread of this bar
    # the fifth load, a hypothesis: the share of threads that make one more load a pass than the unrolled four
    blocks = BLOCKS_PER_SM * SMS
    fifth = {}
    for mib in (4, 8, 16):
        n, t = mib * MIB // FLOAT4, threads_for(mib * MIB // FLOAT4, blocks) * blocks
        assert n // t == UNROLL  # four loads for every thread, then a tail
        fifth[mib] = (n - UNROLL * t) / t
    assert fifth[4] > fifth[8] > fifth[16] > 0  # the same order as the shortfall
    para = states("A04", f"{fifth[4]:.0%} of the\n  threads at 4 MiB".replace("\n  ", " "), near="**L2:")
    assert f"{fifth[8]:.0%} at 8 MiB and {fifth[16]:.1%} at 16 MiB" in para and "a hypothesis" in para
    assert "for (; i < n; i += T) acc += work<K>(load_l2(in + i), a, b);" in BW_CU  # the tail, after the four
    states("A04", "some threads make a fifth", near="so that every thread still issues four loads a pass")
    # not bytes in flight alone: Triton, with as many bytes in flight per SM at 4 MiB, gets much closer
    assert bw[("4MiB", "triton")] > 1.1 * bw[("4MiB", "cuda")]
    assert bw[("4MiB", "triton")] / bw[("32MiB", "triton")] > share["4MiB"] + 0.05
    para = states("A04", "lower bound on what the L2 delivers", near="**L2:")
    assert "the lab does not measure" in para


def test_fma_count_leaves_out_the_sum():
    # work<K>: 4K FMAs, then 3 additions and the accumulation, per float4: one uncounted FLOP per float
    assert "return (v.x + v.y) + (v.z + v.w);" in BW_CU and "acc += work<K>" in BW_CU
    para = states("A04", f"{1 / (FMA_FLOP * 1):.0%} on top of it at\n$k$ = 1".replace("\n", " "), near="counting only\nthe FMAs".replace("\n", " "))
    assert 1 / (FMA_FLOP * 64) < 0.01 and "under 1% from $k$ = 64 on" in para
    states("A04", "and counts only those", near="The lab's `fma_k` stream loads")


def test_l1_variant_bytes_and_sets():
    per_sm = BLOCKS_PER_SM * RESIDENT_CU
    assert per_sm < hierarchy.HOPPER_L1_SHARED.value
    states("A04", f"two blocks per SM hold {per_sm // KIB} KiB", near="**Keeping a set in one level.**")
    blocks = BLOCKS_PER_SM * SMS
    launch = blocks * RESIDENT_CU * PASSES_L1
    para = states("A04", f"On {blocks} blocks that is {launch / 1e9:.1f} GB per launch", near="**Keeping a set in one level.**")
    assert f"1/{PASSES_L1}" in para
    states("A04", f"about {launch / 1e9:.1f} GB read", near="| `bandwidth` | `read_l1`")
    triton_bytes = rec("A04/bandwidth/read_l1/triton")["bytes"]
    states("A04", f"the Triton grid, {triton_bytes / 1e9:.1f} GB", near="| `bandwidth` | `read_l1`")
    assert rec("A04/bandwidth/read_l1/cuda")["bytes"] == launch
    assert BLOCKS_PER_SM * RESIDENT_HIP < hierarchy.CDNA3_L1.value
    states("A04", f"HIP and Triton {RESIDENT_HIP // KIB} KiB", near="| `bandwidth` | `read_l1`")
    ratio = hierarchy.HOPPER_L1_SHARED.value / hierarchy.CDNA3_L1.value
    assert ratio == 8
    states("A04", "an eighth of\n  Hopper's array".split("\n")[0], near="On CDNA 3 the 32 KiB L1")
    states("A04", f"an {RESIDENT_HIP // KIB} KiB set where the CUDA lab gives {RESIDENT_CU // KIB} KiB", near="On CDNA 3 the 32 KiB L1")


# =============================================================================================
# Capacities: the ladder and the silicon table
# =============================================================================================


def test_register_files_and_caches():
    regs = hierarchy.register_file("h200")
    states("A04", f"{int(hardware.value('h200', 'regs_per_unit')):,} × 4 bytes = {regs // KIB} KiB per SM", near="| registers |")
    states("A04", f"{hierarchy.register_file('mi300x') // KIB} KiB of vector general-purpose registers", near="| registers |")
    states("A04", f"{hierarchy.CDNA3_L2_PER_XCD.value / 1e6:.0f} MB per XCD, {hierarchy.CDNA3_XCDS.value:.0f} XCDs", near="| L2 |")
    total_l2 = hierarchy.level("mi300x", "l2").total
    states("A04", f"the\n  {total_l2 / 1e6:.0f} MB that all eight hold".split("\n")[1].split()[0], near="One L2, or eight.")


# =============================================================================================
# Self-assessment
# =============================================================================================


def test_q1_saxpy():
    flop, nbytes = FMA_FLOP, 3 * FLOAT
    i = flop / nbytes
    roof = i * hardware.value("h200", "hbm_bw")
    para = states("A04", f"= {i:.2f} FLOP per\n    byte".split("\n")[0], near="One FMA, 2 FLOP, per element; 12 bytes")
    assert f"{roof / 1e12:.1f} TFLOP/s" in para
    assert f"{roof / hardware.peak('h200', 'fp32'):.1%}" in para
    assert f"ridge of {ridge('h200', 'fp32'):.0f}" in para


def test_q2_bytes_in_flight():
    latency = 700e-9  # the question's assumption
    n = hierarchy.bytes_in_flight(hardware.value("h200", "hbm_bw"), latency)
    per_sm = n / SMS
    per_thread = UNROLL * FLOAT4
    threads = per_sm / per_thread
    warps = math.ceil(threads / hardware.value("h200", "lanes"))
    para = states("A04", f"= {n / 1e6:.2f} MB for the GPU", near="Little's law: $N = B")
    assert f"{per_sm / 1e3:.1f} KB on each of its {SMS}" in para
    assert f"{per_thread} bytes per thread that is {threads:.0f} threads, about {warps} warps" in para
    lab_in_flight = BLOCKS_PER_SM * THREADS * per_thread
    assert round(lab_in_flight / per_sm) == 5
    assert "five times more than needed" in para


def test_q5_square_gemm():
    # I = n/3 passes the ridge at the first whole n above 3 x the unrounded ridge
    n_h = math.floor(3 * ridge("h200", "bf16")) + 1
    n_m = math.floor(3 * ridge("mi300x", "bf16")) + 1
    assert (n_h - 1) / 3 <= ridge("h200", "bf16") < n_h / 3 and (n_m - 1) / 3 <= ridge("mi300x", "bf16") < n_m / 3
    para = states("A04", f"from $n$ = {n_h}", near="$2n^3$ FLOP over")
    assert f"from $n$ = {n_m}" in para
    assert f"ridge of {ridge('h200', 'bf16'):.0f}" in para and f"MI300X's {ridge('mi300x', 'bf16'):.0f}" in para
    assert f"{ridge('h200', 'bf16'):.1f} and" in para and f"= {ridge('mi300x', 'bf16'):.1f}" in para
    assert f"at $n$ = {n_h - 1}, $n/3$ = {(n_h - 1) / 3:.1f} is still below it" in para
    never_states("A04", f"{n_m - 1}")  # the off-by-one crossover the page once gave


def test_drill3_decode_ratio():
    r = hardware.value("h200", "hbm_bw") / hardware.value("h100-sxm", "hbm_bw")
    states("A04", f"at most {r:.2f}× faster", near="Decode at small batch loads every weight")
    states("A04", f"{hardware.value('h100-sxm', 'hbm_bw') / 1e12:.2f} TB/s", near="Decode at small batch loads every weight")


# =============================================================================================
# The records of the H200 (the labs run on one GPU: a missing record is a failure)
# =============================================================================================

RECS = records(ROOT)


def rec(key: str) -> dict:
    assert key in RECS, f"no record {key}: run `tutor labs bench A04 --course` on the H200"
    return RECS[key]


def chase(size: str, vendor: str = "cuda") -> float:
    return rec(f"A04/pointer_chase/ws_{size}/{vendor}")["value"]


def warm_dram(size: str) -> float:
    """HBM bytes of the first timed chase of a set, profiled with the caches as the warm lap leaves them."""
    return rec(f"A04/pointer_chase/chase_{size}_warm.dram__bytes_read.sum/cuda")["value"]


def test_chase_records_are_complete_and_checked():
    sizes = []
    b = SMALLEST
    while b <= MAX_MIB * MIB:
        sizes.append(b)
        b *= 2
    for vendor in ("cuda", "triton"):
        for b in sizes:
            name = f"{b >> 30}GiB" if b >= GIB else f"{b >> 20}MiB" if b >= MIB else f"{b >> 10}KiB"
            r = rec(f"A04/pointer_chase/ws_{name}/{vendor}")
            assert r["unit"] == "ns" and r["ceiling"]["unit"] == "ns"
            assert r["ceiling"]["value"] == pytest.approx(chase("16KiB", vendor))
    rec("A04/pointer_chase/shared/cuda")


def test_bandwidth_records_are_complete():
    for vendor in ("cuda", "triton"):
        for v in ("read_l1", "read_4MiB", "read_16MiB", "read_2GiB"):
            r = rec(f"A04/bandwidth/{v}/{vendor}")
            assert r["unit"] == "GB/s" and r["ceiling"]["name"] == "device-to-device copy"
        for k in INTENSITIES:
            r = rec(f"A04/bandwidth/fma_k{k}/{vendor}")
            assert r["flops"] == pytest.approx(FMA_FLOP * k * r["bytes"] / FLOAT)


def test_the_chase_climbs_the_ladder():
    l1, l2, hbm = chase("16KiB"), chase("16MiB"), chase("1GiB")
    assert l1 < l2 < hbm
    for vendor in ("cuda", "triton"):  # three plateaus, flat to within 5% (4% across L1's four sets)
        assert chase("128KiB", vendor) < 1.05 * chase("16KiB", vendor)
        assert chase("16MiB", vendor) < 1.02 * chase("512KiB", vendor)
        assert chase("4GiB", vendor) < 1.02 * chase("128MiB", vendor)
        assert chase("16MiB", vendor) < chase("32MiB", vendor) < chase("64MiB", vendor) < chase("128MiB", vendor)


def test_the_chase_numbers_the_page_derives():
    l1, l2 = chase("16KiB"), chase("1MiB")
    hit = (l2 - chase("256KiB")) / (l2 - l1)  # t = h t_hit + (1 - h) t_miss, solved for h
    assert 0.4 < hit < 0.6
    states("A04", "about half the hops still hit", near="**L1, 16 to 128 KiB:**")
    states("A04", f"factor of {16 * MIB // (512 * KIB)} in size", near="**L2, 512 KiB to 16 MiB:**")
    para = states("A04", f"about {32 * MIB / 1e6:.0f} MB", near="**Out of L2 at 32 MiB.**")
    assert L2_REPORTED / 2 < 32 * MIB < L2_REPORTED  # fits the whole reported L2, not half of it
    assert f"{L2_REPORTED:,} bytes ({L2_REPORTED // MIB} MiB)" in para and "little more than half" in para
    assert "measurements/transcripts/h200-device.txt" in para
    states("A04", f"{L2_REPORTED:,} bytes ({L2_REPORTED // MIB} MiB)", near="| L2 |")
    # the first step: well above the L2 plateau; the second, 32 -> 128 MiB, a large part of the HBM hop
    assert chase("32MiB") > 1.3 * chase("16MiB") and chase("128MiB") > 1.3 * chase("32MiB")
    # The 32 MiB paragraph: the warm profile's HBM bytes against the cold one's give the share of hops that miss
    para = states("A04", "about half its hops still hit the L2", near="**Out of L2 at 32 MiB.**")
    miss32 = warm_dram("32MiB") / rec("A04/pointer_chase/chase_32MiB.dram__bytes_read.sum/cuda")["value"]
    assert 0.4 < miss32 < 0.6
    hit32 = (chase("64MiB") - chase("32MiB")) / (chase("64MiB") - chase("16MiB"))  # t(W) with 64 MiB's miss cost
    hit32_128 = (chase("128MiB") - chase("32MiB")) / (chase("128MiB") - chase("16MiB"))
    assert 0.55 < hit32 < 0.65 and "about three hops in five" in para
    assert 0.6 < hit32_128 < 2 / 3 and "at the 128 MiB cost, nearly two in three" in para
    assert 1 - miss32 < min(hit32, hit32_128) and "had put more in the L2" in para
    miss_cost32 = (chase("32MiB") - (1 - miss32) * chase("16MiB")) / miss32  # t(W) solved for the miss cost
    states("A04", f"about {miss_cost32:.0f} ns", near="**Out of L2 at 32 MiB.**")
    states("A04", f"{chase('128MiB'):.0f} ns of a hop at 128 MiB", near="**Out of L2 at 32 MiB.**")
    assert miss_cost32 < 0.9 * chase("128MiB")
    # The chase profiles on record: the first timed launch of the 32 MiB, 64 MiB and 1 GiB sets (35 launches in
    # the checks, then 7 per set from 16 KiB: a warm lap, a warm-up, five timed), each profiled cold.
    near = "**Into HBM from 32 to 128 MiB, the last step small.**"
    para = states("A04", f"{HOPS:,} hops", near=near)
    for label, size in (("chase_32MiB", 32 * MIB), ("chase_64MiB", 64 * MIB), ("chase", GIB)):
        skip = 35 + 7 * int(math.log2(size // SMALLEST)) + 2
        dram_rec = rec(f"A04/pointer_chase/{label}.dram__bytes_read.sum/cuda")
        assert f"after {skip} skipped" in dram_rec["note"], (label, dram_rec["note"])
        assert "caches as the program left them" not in dram_rec["note"]  # cold: flushed before the launch
        assert HOPS < size // LINE  # a launch touches each line at most once: after a flush every hop misses
        # a cold L2 reads every line from HBM, whatever the L2 could hold: two 32-byte sectors a hop at every size
        assert 63 < dram_rec["value"] / HOPS < 66, (label, dram_rec["value"] / HOPS)
        assert f'value("A04/pointer_chase/{label}.dram__bytes_read.sum/cuda")' in para
    assert "about 64 bytes a hop at each" in para
    # the same bytes a hop at three sizes whose timed hops differ by far more: the profiles are not the timed state
    assert chase("32MiB") < 0.7 * chase("1GiB")
    for size in ("32MiB", "64MiB", "1GiB"):
        assert f'value("A04/pointer_chase/ws_{size}/cuda")' in para
    assert "`--cache-control all`" in para
    # The warm profiles (`--cache-control none`): the profiled launch is the first timed one. Whether it
    # stands for the timed hops depends on the warm lap: where the lap covers the whole cycle every timed
    # launch comes back to lines a lap old; where it stops short, the first timed launch touches new lines.
    for label in ("chase_32MiB_warm", "chase_64MiB_warm", "chase_128MiB_warm"):
        note = rec(f"A04/pointer_chase/{label}.dram__bytes_read.sum/cuda")["note"]
        assert "caches as the program left them" in note, (label, note)
    warm_cap = 1 << lab_int(r"const long long warm = std::min<long long>\(n, 1 << (\d+)\);", CHASE_CU)
    def comes_back(size: int) -> list[bool]:  # for each of the warm-up's and five timed launches' first hop
        n = size // LINE
        done, touched, out = min(n, warm_cap), min(n, warm_cap), []
        for _ in range(6):
            out.append(done % n < touched)  # its first line was visited before
            done += HOPS
            touched = min(n, max(touched, done))
        return out
    assert comes_back(32 * MIB) == [True] * 6
    assert comes_back(64 * MIB) == [False, False, True, True, True, True]  # warm-up and first timed new
    assert comes_back(128 * MIB) == [False] * 6
    assert min(32 * MIB // LINE, warm_cap) + 6 * HOPS == 128 * MIB // LINE  # one lap of the 128 MiB set
    states("A04", f"{warm_cap:,} hops, short of a lap", near=near)
    states("A04", f"{128 * MIB // LINE:,} hops, one lap of the set", near=near)
    assert "the four timed launches after the first walk lines touched one lap" in para
    assert "no timed hop comes round to a line at all" in para
    cold = {"64MiB": rec("A04/pointer_chase/chase_64MiB.dram__bytes_read.sum/cuda")["value"],
            "128MiB": rec("A04/pointer_chase/chase.dram__bytes_read.sum/cuda")["value"]}
    miss = {w: warm_dram(w) / cold[w] for w in cold}
    hit128 = 1 - miss["128MiB"]
    assert 13.5 < 1 / hit128 < 14.5 and "about one hop in fourteen served without HBM" in " ".join(para.split())
    # one miss cost cannot fit all three sets: t(W) solved with each warm share gives costs apart by > 10%
    costs = [(chase(w) - (1 - m) * chase("16MiB")) / m
             for w, m in (("32MiB", miss32), ("64MiB", miss["64MiB"]), ("128MiB", miss["128MiB"]))]
    assert max(costs) > 1.1 * min(costs) and "No single miss cost fits" in para
    assert "keeps both candidate causes" in " ".join(para.split()) and "describe first touches" in para
    for name, text in prose_sources().items():
        flat = " ".join(text.split())
        for gone in ("one in twenty", "is not needed to explain", "account for more than the whole step",
                     "awaits a profile", "until a profile with warm caches", "lost hits already explain"):
            assert gone not in flat, (name, gone)
    step = chase("128MiB") / chase("64MiB") - 1
    assert 0.02 < step < 0.08
    states("A04", f"{step:.0%} more", near=near)
    rise = chase("4GiB") / chase("128MiB") - 1
    assert rise < 0.02
    states("A04", "under 2%", near="**No further step from 128 MiB to 4 GiB.**")
    for name, text in prose_sources().items():
        assert "No TLB cliff" not in text and "none from address translation" not in text, name


def prose_sources() -> dict[str, str]:
    from prose import sources
    return {**sources("A04"), **sources("A04", "module.yml"), **sources("A04", "cards")}


def test_headline_states_what_the_chase_shows():
    para = states("A04", "128 MiB", near="headline:", files="module.yml")
    assert "no further step from 128 MiB to 4 GiB" in para and "the last in steps from 32 to 128 MiB" in para
    assert "stays open, since the warm profiles on record of those two sets catch first touches of lines" in para
    assert "the L2's last hits running out or the translation caches" in para
    dram = rec("A04/pointer_chase/chase_64MiB.dram__bytes_read.sum/cuda")["value"]
    assert 63 < dram / HOPS < 66 and chase("64MiB") < chase("128MiB")
    # the cold profiles no longer stand as evidence that the chase is in HBM at 64 MiB, anywhere
    for name, text in prose_sources().items():
        flat = " ".join(text.split())
        for wrong in ("already in HBM at 64 MiB", "already in HBM on both sides", "at 64 MiB already reads from HBM",
                      "at 64 MiB it reads from HBM", "a step where HBM already serves every hop is not the L2",
                      "cannot be the L2, since both sides"):
            for negated in ("cannot show whether the chase is already in HBM at 64 MiB",
                            "not show the chase already in HBM at 64 MiB"):  # said only to deny it
                flat = flat.replace(negated, "")
            assert wrong not in flat, (name, wrong)


def test_chase_gpu_time_of_the_benchmark():
    warm_cap = 1 << lab_int(r"std::min<long long>\(n, 1 << (\d+)\)", CHASE_CU)
    runs = re.search(r"const int warmup = (\d+), reps = (\d+);", CHASE_CU)
    launches = int(runs[1]) + int(runs[2])
    total, b = 0.0, SMALLEST
    while b <= MAX_MIB * MIB:
        name = f"{b >> 30}GiB" if b >= GIB else f"{b >> 20}MiB" if b >= MIB else f"{b >> 10}KiB"
        total += (min(b // LINE, warm_cap) + launches * HOPS) * chase(name) * 1e-9  # a warm lap, then the launches
        b *= 2
    states("A04", f"about {total:.1f} s of GPU time", near="On an H200 the CUDA benchmark of `pointer_chase`")
    never_states("A04", "10 s")


def test_cycles_and_littles_law_from_the_records():
    clock = rec("A04/bandwidth/sweep_k256.sm__cycles_elapsed.avg.per_second/cuda")["value"]
    para = states("A04", f"{clock / 1e9:.2f} GHz top clock", near="In cycles of the")
    assert f"{clock / 1e9:.2f}" == f"{hierarchy.hopper_fp32_clock('h200') / 1e9:.2f}"
    states("A04", f"the {hierarchy.hopper_fp32_clock('h200') / 1e9:.2f} GHz the FP32 rate implies", near="**Compute-bound, $k$ = 64 to 256.**")
    assert "nothing records\nthe clock during the chase".replace("\n", " ") in para
    note = re.search(r"H100 SXM\s+L1 (\d+), L2 (\d+), main memory (\d+) cycles", REFS_TXT)
    assert note, "the dewing-gpu-latency-2026 note no longer states the H100 SXM cycles"
    assert f"reports {note[1]}, {note[2]} and {note[3]} cycles" in para and "[@dewing-gpu-latency-2026]" in para
    for key, name in (("ws_16KiB", "an L1 hit\nis"), ("shared", "a shared-memory load"), ("ws_1MiB", "an L2 hit"),
                      ("ws_1GiB", "an HBM load")):
        cycles = rec(f"A04/pointer_chase/{key}/cuda")["value"] * 1e-9 * clock
        assert f"{cycles:.0f}" in para, (key, cycles)
    lat = chase("1GiB") * 1e-9
    n = hierarchy.bytes_in_flight(hardware.value("h200", "hbm_bw"), lat)
    para = states("A04", f"{n / 1e6:.2f} MB in flight", near="**Little's law with the measured latency.**")
    assert f"{n / SMS / 1e3:.1f} KB per SM" in para
    lab = BLOCKS_PER_SM * THREADS * UNROLL * FLOAT4
    assert 10 < lab / (n / SMS) < 11 and "more than ten times that" in para
    assert clock == pytest.approx(hierarchy.hopper_fp32_clock("h200"), rel=0.01)  # at the top clock: no throttling


def counter(metric: str, k: int = 256) -> dict:
    return rec(f"A04/bandwidth/sweep_k{k}.{metric}/cuda")


STALLS = ("no_instruction", "long_scoreboard", "wait", "math_pipe_throttle", "not_selected", "selected",
          "short_scoreboard", "dispatch_stall")


def test_the_k256_profile_against_its_k128_control():
    profiles = {}
    for k in (128, 256):
        stalls = {m: counter(f"smsp__warp_issue_stalled_{m}_per_warp_active.pct", k) for m in STALLS}
        others = {m: counter(m, k) for m in ("sm__cycles_elapsed.avg.per_second",
                                             "smsp__issue_active.avg.pct_of_peak_sustained_active",
                                             "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")}
        for r in (*stalls.values(), *others.values()):  # every one of them from the launch at this k
            assert f"sweep<{k}>" in r["note"], r["note"]
        profiles[k] = ({m: r["value"] for m, r in stalls.items()}, {m: r["value"] for m, r in others.items()})
    stalls, other = profiles[256]
    clock = other["sm__cycles_elapsed.avg.per_second"]
    issue = other["smsp__issue_active.avg.pct_of_peak_sustained_active"]
    pipe = other["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"]
    assert stalls["no_instruction"] > 50  # the k = 256 kernel waits for instructions most of the time
    ranked = sorted(stalls, key=lambda m: -stalls[m])
    assert ranked[:2] == ["no_instruction", "not_selected"]
    para = states("A04", "more than any other reason", near="**Compute-bound, $k$ = 64 to 256.**")
    assert "smsp__warp_issue_stalled_not_selected_per_warp_active.pct" in para
    assert 0.15 < 1 - pipe / 100 < 0.25 and "about a fifth of the cycles the arithmetic waits" in para
    assert abs(issue - pipe) < 5  # the FMAs are nearly every instruction issued
    assert clock == pytest.approx(hierarchy.hopper_fp32_clock("h200"), rel=0.01)  # no throttling
    # the control: at k = 128 the same clock, few no-instruction stalls, the FMA pipe nearly always busy;
    # only the no-instruction stall grows with the loop's length
    stalls128, other128 = profiles[128]
    assert other128["sm__cycles_elapsed.avg.per_second"] == pytest.approx(clock, rel=0.01)
    assert stalls128["no_instruction"] < 10 < 50 < stalls["no_instruction"]
    assert other128["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"] > 90
    grew = [m for m in STALLS if stalls[m] > stalls128[m] + 1]
    assert grew == ["no_instruction"], grew
    assert "only the stall for want of an instruction grew" in para.replace("\n  ", " ").replace("\n", " ")
    assert "it is an inference, not shown" in para and "waiting their turn to fetch an instruction" in para
    assert "a warp that was ready while its scheduler issued another warp's instruction" in para
    never_states("A04", "waiting for the scheduler to pick another ready warp")
    # the body: k FMAs on each of 4 floats of each of kUnroll float4s; k = 128 has half of it
    assert 128 * 4 * UNROLL * 2 == 256 * 4 * UNROLL and f"{256 * 4 * UNROLL:,}-instruction body" in para


def test_the_levels_deliver_in_order():
    l1 = rec("A04/bandwidth/read_l1/cuda")["value"]
    l2 = rec("A04/bandwidth/read_16MiB/cuda")["value"]
    hbm = rec("A04/bandwidth/read_2GiB/cuda")
    assert l1 > l2 > hbm["value"]
    assert hbm["value"] < hardware.value("h200", "hbm_bw") / 1e9  # below the datasheet


def test_the_fma_stream_bends_at_the_ridge():
    k = {x: rec(f"A04/bandwidth/fma_k{x}/cuda") for x in INTENSITIES}
    ms = {x: r["ms"] for x, r in k.items()}
    kr = hierarchy.fmas_at_ridge(ridge("h200", "fp32"))
    below = [x for x in INTENSITIES if x <= kr / 2]
    assert max(ms[x] for x in below) < 1.3 * min(ms[x] for x in below)  # memory-bound: the time barely moves
    assert ms[INTENSITIES[-1]] > 4 * ms[INTENSITIES[0]]  # compute-bound at the top


def test_bandwidth_numbers_the_page_derives_from_the_records():
    l1 = rec("A04/bandwidth/read_l1/cuda")["value"] * 1e9
    per_sm = l1 / SMS
    clock = hierarchy.hopper_fp32_clock("h200")
    para = states("A04", f"Per SM that is {per_sm / 1e9:.0f} GB/s", near="**L1:")
    assert f"at most {clock / 1e9:.2f} GHz" in para and f"at least {per_sm / clock:.0f} bytes per clock" in para
    hbm = rec("A04/bandwidth/read_2GiB/cuda")
    para = states("A04", f"{hbm['value'] * 1e9 / hardware.value('h200', 'hbm_bw'):.0%}", near="**HBM:")
    assert f"copy reaches {hbm['ceiling']['value'] * 1e9 / hardware.value('h200', 'hbm_bw'):.0%}" in para


def test_fma_numbers_the_page_derives_from_the_records():
    ms = {k: rec(f"A04/bandwidth/fma_k{k}/cuda")["ms"] for k in INTENSITIES}
    flat = [ms[k] for k in INTENSITIES if k <= 16]
    para = states("A04", f"{min(flat):.3f} to {max(flat):.3f} ms", near="**Memory-bound, $k$ = 1 to 16.**")
    over = [rec(f"A04/bandwidth/fma_k{k}/cuda") for k in INTENSITIES if k <= 16]
    assert all(1.0 < r["value"] / r["ceiling"]["value"] < 1.02 for r in over) and "about 1% above it" in para
    # the unflushed read set (k = 0, the same 1 GiB a launch) against the flushed fma_k stream
    unflushed = rec("A04/bandwidth/read_512MiB/cuda")
    assert unflushed["bytes"] == GIB == over[0]["bytes"]
    assert GIB // (512 * MIB) == 2 and "reading its set twice, the same bytes per launch" in para
    assert "const int passes = (int)std::max<size_t>(1, (size_t(1) << 30) / set);" in BW_CU
    cost = min(flat) / unflushed["ms"] - 1
    assert 0.02 < cost < 0.08
    assert f"takes {unflushed['ms']:.3f} ms, {cost:.0%} less" in para and "a hypothesis" in para
    k32 = rec("A04/bandwidth/fma_k32/cuda")
    roof = k32["ceiling"]["value"]
    slant = hierarchy.fma_intensity(32) * k32["ceiling"]["value"]  # the ceiling is min(P, I B): here P
    copy = rec("A04/bandwidth/fma_k1/cuda")["ceiling"]["value"] / hierarchy.fma_intensity(1)  # I B at k = 1, TB/s
    assert abs(hierarchy.fma_intensity(32) * copy - roof) / roof < 0.02 and slant > 0
    states("A04", "within 2% of each other", near="**The bend, $k$ = 32.**")
    body = INTENSITIES[-1] * 4 * UNROLL  # k FMAs on each of 4 floats of each of kUnroll float4s
    states("A04", f"{body:,} FMA instructions", near="**Compute-bound, $k$ = 64 to 256.**")
    best = max(rec(f"A04/bandwidth/fma_k{k}/cuda")["value"] for k in INTENSITIES)
    measured_ridge = best / copy
    states("A04", f"{measured_ridge:.1f} FLOP per byte", near="The measured roof bends where the measured limits meet")
    states("A04", f"datasheet's {ridge('h200', 'fp32'):.0f}", near="The measured roof bends where the measured limits meet")


def test_headline_ridge_points():
    para = states("A04", f"{ridge('h200', 'fp32'):.0f} FLOP per byte on the H200", near="headline:", files="module.yml")
    assert f"{ridge('mi300x', 'fp32'):.0f} on the MI300X" in para
    assert f"(BF16, {ridge('h200', 'bf16'):.0f} and {ridge('mi300x', 'bf16'):.0f})" in para


def test_profile_numbers_the_page_derives():
    sectors = rec("A04/bandwidth/resident.l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/cuda")["value"]
    launch = BLOCKS_PER_SM * SMS * RESIDENT_CU * PASSES_L1
    assert sectors * 32 == launch  # every byte the L1 run loads goes through the L1 as a 32-byte sector
    sets = BLOCKS_PER_SM * SMS * RESIDENT_CU
    dram = rec("A04/bandwidth/resident.dram__bytes_read.sum/cuda")["value"]
    assert sets <= dram < 1.01 * sets  # each set once from HBM
    para = states("A04", f"{sets / 1e6:.2f} MB, once", near="The profiler confirms where the bytes come from")
    assert f"{launch / 1e9:.1f} GB" in para and f"the {BLOCKS_PER_SM * SMS} blocks'" in para
    swept = rec("A04/bandwidth/sweep.l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/cuda")["value"] * 32
    assert swept == GIB
    dram16 = rec("A04/bandwidth/sweep.dram__bytes_read.sum/cuda")["value"]
    assert 16 * MIB <= dram16 < 1.01 * 16 * MIB
    assert f"{dram16 / swept:.1%}" in para


def test_the_timing_note_matches_the_kit_and_the_labs():
    # 4-labs.md: the kit's timed_ms flushes the L2 before every run unless told not to; A04 turns that off
    # for the chase and the read sets, keeps it for the fma_k stream, and times after warm-ups.
    para = states("A04", "three warm-ups", near="The course's timer (`timed_ms` in the lab kit", files="4-labs.md")
    assert "warm lap and warm-up" in para and "`flush=False`" in para and "`kWarm`" in para
    assert "The `fma_k` stream keeps the flush" in para
    assert lab_int(r"const int warmup = (\d+), reps = \d+;", CHASE_CU) == 1
    assert re.search(r"warm, warmup, reps = min\(n, 1 << 18\), 1, \d+", (ROOT / "labs/A04/triton/pointer_chase.py").read_text(encoding="utf-8"))
    for kit, folder, ext in (("labs/common/cuda/tutor_lab.cuh", "cuda", "cu"), ("labs/common/hip/tutor_lab.hip.h", "hip", "hip")):
        text = (ROOT / kit).read_text(encoding="utf-8")
        # the kit's timer: Timing{warmup = 3, reps, flush = true, ...}, timed_ms the median of times_ms
        assert re.search(r"struct Timing \{\s*int warmup = 3;\s*int reps = 20;\s*bool flush = true;", text), kit
        assert re.search(r"float timed_ms\(F&& launch, Timing how = \{\}\)", text), kit
        assert "if (how.flush) flush_l2();" in text, kit
        for lab in ("bandwidth", "pointer_chase"):
            src = (ROOT / f"labs/A04/{folder}/{lab}.{ext}").read_text(encoding="utf-8")
            assert "median_ms" not in src, f"{lab}.{ext} no longer times with timed_ms"
            timed = re.findall(r"tutor::timed_ms\(", src)
            assert timed, f"{lab}.{ext} does not call timed_ms"
        bw = (ROOT / f"labs/A04/{folder}/bandwidth.{ext}").read_text(encoding="utf-8")
        assert "const tutor::Timing kWarm = {3, 20, /*flush=*/false};" in bw  # three warm-ups, no flush
        assert len(re.findall(r"\}, kWarm\);", bw)) == 2  # the L1 run and the read sets
        assert "timed_ms([&] { launch_sweep(k, blocks, kThreads, in, n, 1, out); });" in bw  # fma_k: the default, flushed
        chase_src = (ROOT / f"labs/A04/{folder}/pointer_chase.{ext}").read_text(encoding="utf-8")
        assert "{warmup, reps, /*flush=*/false}" in chase_src
    py = (ROOT / "labs/common/python/tutor_lab.py").read_text(encoding="utf-8")
    assert re.search(r"def timed_ms\(fn, warmup: int = 3, reps: int = 20, flush: bool = True", py)
    assert re.search(r"def times_ms\(fn, warmup: int = 3, reps: int = 20, flush: bool = True", py)
    bw = (ROOT / "labs/A04/triton/bandwidth.py").read_text(encoding="utf-8")
    assert len(re.findall(r"tutor_lab\.timed_ms\(lambda: (?:resident|sweep)\([^)]*\), flush=False\)", bw)) == 2
    assert re.search(r"tutor_lab\.timed_ms\(lambda: sweep\(xs, out, 1, k, programs, block\)\)", bw)
    chase_py = (ROOT / "labs/A04/triton/pointer_chase.py").read_text(encoding="utf-8")
    assert re.search(r"tutor_lab\.timed_ms\(lambda: chase\([^)]*\), warmup=warmup, reps=reps,\s*flush=False\)", chase_py)
    for src in (bw, chase_py):
        assert "median_ms" not in src


def test_smaller_statements_of_the_page():
    # the shared-memory chase is timed with its copy: one 16 KiB cycle of 128 lines against the launch's hops
    shared_slots = 16384 // FLOAT
    assert "constexpr unsigned kSharedSlots = 16384 / sizeof(unsigned);" in CHASE_CU
    assert "for (unsigned i = threadIdx.x; i < slots; i += blockDim.x) s[i] = buf[i];" in CHASE_CU
    lines = shared_slots * FLOAT // LINE
    para = states("A04", f"{lines} lines against {HOPS:,} dependent hops", near="The lab times the copy with the chase")
    never_states("A04", "time only the part after the copy")
    never_states("A04", "time only the chase after the copy", files="cards")
    states("A04", f"{HOPS:,} dependent hops", near="the lab times the copy with", files="cards")
    # 128 bytes is the line the caches tag; they move 32-byte sectors
    states("A04", "32-byte sectors", near="**The chain.**")
    never_states("A04", "the unit the L1\n   and L2 caches move".replace("\n   ", " "))
    # the MI300X FP32 roof is the packed rate: 304 CUs x 128 FMAs x 2 FLOP x 2.1 GHz
    para = states("A04", "`v_pk_fma_f32`", near="The FP32 roof uses 128 FMAs per CU per clock")
    assert "not checked here" in para and "half of it" in para
    # Dewing's chase: line i links to tmp[i] for a random permutation tmp, a set of cycles
    states("A04", "linked by a random permutation", near="An independent pointer chase of the same kind")
    # only HBM is held against a published peak; shared memory's bandwidth is not measured
    para = states("A04", "only the last is held against a published peak", near="Three plateaus, one per level")
    assert "measures no bandwidth of shared memory" in para
    states("A04", "held against a published peak for HBM only", near="headline:", files="module.yml")
    # the chain holds slot indices: a line's number times its 4-byte slots
    assert LINE // FLOAT == 32 and "kStride = kLine / sizeof(unsigned);" in CHASE_CU
    states("A04", f"that line's number times {LINE // FLOAT}", near="**The chain.**")
    states("A04", f"its line number times {LINE // FLOAT}", near="**Link the cycle**", files="4-labs.md")


def test_capacities_and_clocks_of_the_silicon_table():
    shared = hardware.value("h200", "shared_per_unit")
    states("A04", f"up to {shared // KIB} KB of that array", near="| shared memory / LDS |")
    mi_l2 = hardware.value("mi300x", "l2_bytes")
    mi_ic = hardware.value("mi300x", "infinity_cache_bytes")
    states("A04", f"{mi_l2 / 8 / MIB:.0f} MB per XCD, 8 XCDs", near="| L2 |")
    states("A04", f"{mi_ic / MIB:.0f} MB Infinity Cache", near="| memory-side cache |")
    # the clock drop of the H100 PCIe and the GH100 die's L2, as the cited source's note records them
    note = re.search(r"chipsandcheese-h100-2023:.*?note: (.*?)\n\S", REFS_TXT, re.S)[1]
    boost, low = re.search(r"the (\d+) MHz boost to as low as (\d+) MHz", " ".join(note.split())).groups()
    states("A04", f"from {int(boost):,} MHz to as low as {int(low):,} MHz", near="**Nanoseconds move with the clock.**")
    die = re.search(r"(\d+) MB of L2", note)[1]
    states("A04", f"{die} MB on the GH100 die", near="| L2 |")


def test_what_each_timing_state_is():
    # the copy ceiling is still timed by the kit's older median_ms, in every kit
    for kit in ("labs/common/cuda/tutor_lab.cuh", "labs/common/hip/tutor_lab.hip.h", "labs/common/python/tutor_lab.py"):
        text = (ROOT / kit).read_text(encoding="utf-8")
        body = text[text.index("copy_ceiling"):][:1200]
        assert "median_ms(" in body and "timed_ms(" not in body, kit
    para = states("A04", "`median_ms`", near="The copy that sets the ticks (`copy_ceiling`)", files="4-labs.md")
    assert "empties the caches before the launch it profiles unless told not to" in para
    # the 64 MiB read set, just past the reported L2, still reads far above the HBM stream: the warm start helps it
    assert 64 * MIB > L2_REPORTED and rec("A04/bandwidth/read_64MiB/cuda")["value"] > 1.5 * rec("A04/bandwidth/read_2GiB/cuda")["value"]
    assert "a 64 MiB set, just past the L2's size, still gains" in para
    states("A04", "copy that sets the tick is timed by the\n  kit's older timer".replace("\n  ", " "), near="**Memory-bound, $k$ = 1 to 16.**")
