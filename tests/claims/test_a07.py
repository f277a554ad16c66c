"""Claims of module A07 (tensor cores and matrix cores): derived here, then read from the module's own text.

The first half recomputes every number the prose derives (work per instruction, peak ratios and rates from
the one hardware table, the ldmatrix pass counts of the lab's own tile layout and launch geometry, the
error-bound factor, the arithmetic intensities and ridge points) and finds each in the paragraph that
states it. The constants of the lab (tile sizes, benchmark size, the largest checked K) are read from the
lab source, so a change there fails here too.

The second half reads the H200 records and checks the relations the prose draws from them: the headline's
goal (a Triton tl.dot kernel at 95% or more of cuBLAS bf16) is met by both optional TMA variants against the
torch.mm of their own run, narrowly, and by no record of the pointer kernel, and the page says both; the CUDA and the Triton records come from different runs and
are never set against each other; every mma.sync kernel sits at or under the mma.sync register-loop ceiling,
which itself sits under the datasheet peak; and the profiler's ldmatrix passes match the derivation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prose import never_states, sources, states
from tutor_build.measurements import records
from tutor_build.models import hardware
from tutor_build.models import mma_layout as L

ROOT = Path(__file__).parents[2]
LAB_CU = (ROOT / "labs/A07/cuda/mma_gemm.cu").read_text(encoding="utf-8")
LAB_PY = (ROOT / "labs/A07/triton/mma_gemm.py").read_text(encoding="utf-8")


def lab_int(pattern: str, text: str = LAB_CU) -> int:
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return int(found.group(1))


BM = lab_int(r"constexpr int kBM = (\d+), kBN = \d+, kBK = \d+, kThreads = \d+;")
BN = lab_int(r"constexpr int kBM = \d+, kBN = (\d+), kBK = \d+, kThreads = \d+;")
BK = lab_int(r"constexpr int kBM = \d+, kBN = \d+, kBK = (\d+), kThreads = \d+;")
THREADS = lab_int(r"constexpr int kBM = \d+, kBN = \d+, kBK = \d+, kThreads = (\d+);")
WM = lab_int(r"constexpr int kWM = (\d+), kWN = \d+;")
WN = lab_int(r"constexpr int kWM = \d+, kWN = (\d+);")
N_BENCH = lab_int(r'arg_int\(args, "--n", (\d+)\)')
K_MAX = max(int(k) for k in re.findall(r"\{\d+, \d+, (\d+)\}", LAB_CU))
BF16_BITS, FP32_BITS = 8, 24  # significant bits (google-bfloat16; IEEE 754 binary32)
WARP = int(hardware.value("h200", "lanes"))
WAVE = int(hardware.value("mi300x", "lanes"))
SMS = hardware.value("h200", "units")
CUS = hardware.value("mi300x", "units")
BF16 = hardware.peak("h200", "bf16")
FP32 = hardware.peak("h200", "fp32")


def g(x: float, nd: int = 0) -> str:
    return f"{x:,.{nd}f}"


def tex(n: int) -> str:
    """An integer as the page's math prints it: 2{,}048."""
    return f"{n:,}".replace(",", "{,}")


# ---------------------------------------------------------------- derived
def test_work_per_instruction():
    mma, mfma = L.macs_per_instruction(16, 8, 16), L.macs_per_instruction(32, 32, 8)
    states("A07", tex(mma), near="\\text{MAC} = 4{,}096")
    states("A07", tex(2 * mma), near="\\text{MAC} = 4{,}096")
    states("A07", tex(mfma), near="\\text{MAC} = 4{,}096")
    states("A07", tex(2 * mfma), near="\\text{MAC} = 4{,}096")
    states("A07", g(2 * mma // WARP), near="Per lane that is")
    states("A07", g(2 * mfma // WAVE), near="Per lane that is")
    states("A07", g(mma // WARP), near="Per lane that is")  # 64 times an FMA's 2 FLOP
    states("A07", g(2 * mfma // WAVE // 2), near="Per lane that is")
    states("A07", tex(2 * mma), near="FLOP and $2 \\cdot 32", files="9-self-assessment.md")
    states("A07", tex(2 * mfma), near="FLOP and $2 \\cdot 32", files="9-self-assessment.md")


def test_peak_ratio_and_rate_per_sm():
    states("A07", f"{BF16 / FP32:.1f}", near="dense bf16 Tensor Core peak is 989.5")
    per_sm = BF16 / SMS
    states("A07", f"{per_sm / 1e12:.2f}", near="Spread over the 132 SMs")
    rate = per_sm / (2 * L.macs_per_instruction(16, 8, 16))
    states("A07", f"{rate / 1e9:.2f}", near="Spread over the 132 SMs")
    states("A07", f"{rate / 1e9:.2f}", near="per SM per second. `mma_peak` keeps")
    states("A07", f"{BF16 / 1e12:.1f}", near="dense bf16 Tensor Core peak is")


def test_mi300x_per_cu_and_mfma_rate():
    mi = hardware.peak("mi300x", "bf16")
    states("A07", f"{mi / CUS / 1e12:.2f}", near="Per compute unit, the MI300X peak")
    states("A07", f"{BF16 / SMS / 1e12:.2f}", near="Per compute unit, the MI300X peak")
    rate = mi / CUS / (2 * L.macs_per_instruction(32, 32, 8))
    states("A07", f"{rate / 1e8:.2f}", near="MFMA per CU per second")


def test_ridge_points():
    h = BF16 / hardware.value("h200", "hbm_bw")
    m = hardware.peak("mi300x", "bf16") / hardware.value("mi300x", "hbm_bw")
    for near in ("The ridge point of the H200 is", ):
        states("A07", f"{h:.0f}", near=near)
    states("A07", f"{h:.0f}", near="The ridge points, peak over HBM")
    states("A07", f"{m:.0f}", near="The ridge points, peak over HBM")
    states("A07", f"{h:.0f}", near="ridge point, peak FLOP/s over HBM")
    states("A07", f"{m:.0f}", near="ridge point, peak FLOP/s over HBM")


def test_swizzle_conflict_degrees():
    plain = [max(L.bank_groups(range(r0, r0 + 8), c, False).values()) for r0 in range(0, BM, 8) for c in range(4)]
    swz = [max(L.bank_groups(range(r0, r0 + 8), c, True).values()) for r0 in range(0, BM, 8) for c in range(4)]
    assert set(plain) == {4} and set(swz) == {1}
    states("A07", "**4-way conflict**", near="Plain layout: chunk $c$ of row $r$")
    states("A07", "16", near="Plain layout: chunk $c$ of row $r$")
    states("A07", "**eight different groups**", near="Swizzled: store chunk")


def test_ldmatrix_counts_of_one_gemm():
    blocks = (N_BENCH // BM) * (N_BENCH // BN)
    warps = THREADS // WARP
    per_k16 = (WM // 16) + (WN // 8) // 2  # ldmatrix.x4 for A fragments, and one per two B fragments
    ldsm = blocks * warps * per_k16 * (BK // 16) * (N_BENCH // BK)
    swz = ldsm * L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, True))
    plain = ldsm * L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, False))
    states("A07", g(ldsm), near="For one 4096^3 GEMM of the lab")
    states("A07", g(swz), near="For one 4096^3 GEMM of the lab")
    states("A07", g(plain), near="For one 4096^3 GEMM of the lab")
    states("A07", g(plain), near="Plain to swizzled.")
    states("A07", g(swz), near="Plain to swizzled.")
    states("A07", tex(ldsm), near="The GEMM issues", files="9-self-assessment.md")
    states("A07", g(blocks), near="For one 4096^3 GEMM of the lab")
    states("A07", g(per_k16 * BK // 16), near="For one 4096^3 GEMM of the lab")


def test_error_bound_factor():
    assert 2 * BF16_BITS <= FP32_BITS  # products exact
    factor = (K_MAX - 1) * 2.0**-(FP32_BITS - 1)
    states("A07", f"{factor / 1e-4:.2f}", near="For the largest check, $K = 4095$")
    states("A07", str(K_MAX), near="For the largest check")
    states("A07", f"{factor / 1e-4:.2f}", near="the factor is", files="9-self-assessment.md")


def test_arithmetic_intensity():
    n = N_BENCH
    tile_flop, tile_bytes = 2 * BM * BN * BK, (BM + BN) * BK * 2
    states("A07", tex(tile_bytes), near="A block computing a $128 \\times 128$ tile")
    states("A07", tex(tile_flop), near="A block computing a $128 \\times 128$ tile")
    states("A07", g(tile_flop // tile_bytes), near="A block computing a $128 \\times 128$ tile")
    compulsory = 2 * n * n * 2 + 4 * n * n
    states("A07", tex(compulsory), near="The whole 4096^3 product needs")
    states("A07", g(2 * n**3 // compulsory), near="The whole 4096^3 product needs")
    states("A07", tex(2 * n**3), near="For $n = 4096$ the GEMM does")
    states("A07", tex(compulsory), near="For $n = 4096$ the GEMM does")


def test_triton_compulsory_traffic():
    n = N_BENCH
    assert "acc.to(tl.bfloat16)" in LAB_PY  # the Triton lab writes a bf16 C
    compulsory = 2 * n * n * 2 + 2 * n * n
    states("A07", tex(compulsory), near="The Triton lab writes a bf16 C")
    states("A07", g(2 * n**3 // compulsory), near="The Triton lab writes a bf16 C")


def test_fragments_per_k_step_and_registers():
    warps = THREADS // WARP
    a_frags, b_frags = WM // 16, WN // 8  # 16-row A fragments and 8-column B fragments of a warp's tile
    near = "The lab's block computes a"
    states("A07", g(warps), near=near)
    states("A07", f"${WM} \\times {WN}$", near=near)
    states("A07", f"{a_frags} A fragments", near=near)
    states("A07", f"{b_frags} B fragments", near=near)
    states("A07", f"{a_frags} + {b_frags}/2 = {a_frags + b_frags // 2}", near="one `ldmatrix.x4` loads two B")
    states("A07", g((a_frags + b_frags // 2) * (BK // 16)), near="one `ldmatrix.x4` loads two B")
    states("A07", g(BK // 16 * 16 // 2), near=near)  # a k-step of a row: 16 bf16 = 32 bytes
    # registers live at once: 64 accumulators, 4 per A fragment (8 bf16), 2 per B fragment (4 bf16)
    acc = (WM // 16) * (WN // 8) * 4
    assert acc == 64
    states("A07", g(a_frags * 4), near="64 fp32 accumulators per lane, plus the fragments")
    states("A07", g(b_frags * 2), near="64 fp32 accumulators per lane, plus the fragments")
    states("A07", g(acc + a_frags * 4 + b_frags * 2), near="64 fp32 accumulators per lane, plus the fragments")
    never_states("A07", "near 100 registers")


LAB_HIP = (ROOT / "labs/A07/hip/mma_gemm.hip").read_text(encoding="utf-8")


def test_warp_and_wavefront_tiles_of_section_3():
    # CUDA: the warp tile over the m16n8k16 instruction; HIP: the wave tile over the 32x32x8 MFMA
    frag_m, frag_n = WM // 16, WN // 8
    near = "Each warp owns a $%d \\times %d$ tile of C" % (WM, WN)
    states("A07", f"{frag_m} x {frag_n} `mma.sync` tiles", near=near)
    states("A07", f"{frag_m * frag_n * 16 * 8 // WARP} fp32 accumulators per lane", near=near)
    states("A07", f"{frag_m + frag_n // 2} `ldmatrix.x4` and {frag_m * frag_n} `mma.sync`", near=near)
    hip_wm = lab_int(r"constexpr int kWM = (\d+), kWN = \d+;", LAB_HIP)
    hip_wn = lab_int(r"constexpr int kWM = \d+, kWN = (\d+);", LAB_HIP)
    hip_threads = lab_int(r"constexpr int kBM = \d+, kBN = \d+, kBK = \d+, kThreads = (\d+);", LAB_HIP)
    near = "Each of the %d wavefronts owns a $%d \\times %d$ tile" % (hip_threads // WAVE, hip_wm, hip_wn)
    states("A07", f"{hip_wm // 32} x {hip_wn // 32} MFMA tiles", near=near)
    states("A07", f"again {(hip_wm // 32) * (hip_wn // 32) * 32 * 32 // WAVE} fp32", near=near)


def test_minimum_passes_of_one_ldmatrix_x4():
    bytes_x4 = 4 * 8 * 16  # four matrices of 8 rows of 16 bytes
    per_pass = int(hardware.value("h200", "shared_banks")) * 4
    assert L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, True)) == bytes_x4 // per_pass
    states("A07", g(bytes_x4), near="4 passes per `ldmatrix.x4`, the minimum")
    states("A07", g(per_pass), near="4 passes per `ldmatrix.x4`, the minimum")
    states("A07", g(bytes_x4 // per_pass), near="4 passes per `ldmatrix.x4`, the minimum")


def test_register_loop_chains():
    chains = lab_int(r"constexpr int kChains = (\d+);")
    blocks_per_sm = lab_int(r"multiProcessorCount \* (\d+), peak_iters")
    warps = blocks_per_sm * 128 // WARP
    assert "mma_peak<<<peak_blocks, 128>>>" in LAB_CU
    states("A07", g(chains), near="`mma_peak` keeps", files="9-self-assessment.md")
    near = "The register loop `mma_peak` settles"
    states("A07", g(chains), near=near)
    states("A07", g(warps), near=near)
    states("A07", g(chains * warps), near=near)


def test_lane_maps_of_q5():
    lane = 37
    rows = sorted({L.mfma32_c(lane, i)[0] for i in range(16)})
    assert {L.mfma32_c(lane, i)[1] for i in range(16)} == {lane % 32}
    spans = [f"{r}-{r + 3}" for r in rows[::4]]
    near = "MFMA: $x = 37"
    for s in spans:
        states("A07", s, near=near, files="9-self-assessment.md")
    states("A07", f"column {lane % 32}", near=near, files="9-self-assessment.md")
    l5 = [L.m16n8k16_c(5, i) for i in range(4)]
    for r in sorted({r for r, _ in l5}):
        states("A07", str(r), near="`mma.sync`, lane 5", files="9-self-assessment.md")
    states("A07", "columns {} and {}".format(*sorted({c for _, c in l5})), near="`mma.sync`, lane 5",
           files="9-self-assessment.md")


def test_precision_figures():
    import math
    states("A07", f"2^{{-{BF16_BITS - 1}}}", near="The Triton lab writes a bf16 result")
    digits = BF16_BITS * math.log10(2)
    assert 2 < digits < 3
    states("A07", "between two", near="Numbers with fewer digits")
    TF32_BITS = 11  # 10 stored fraction bits and the implicit one (NVIDIA's TF32: fp32's range, 10-bit mantissa)
    states("A07", f"{TF32_BITS} significant bits", near="Precision is chosen for you")
    never_states("A07", "about three significant decimal digits")


def test_quick_sizes_named_on_the_page():
    quick = re.search(r"if args.quick:\n\s+sizes = \[(.*)\]", LAB_PY).group(1)
    sizes = [tuple(int(x) for x in s) for s in re.findall(r"\((\d+), (\d+), (\d+)\)", quick)]
    biggest = max(sizes, key=lambda s: s[0] * s[1] * s[2])
    states("A07", "$%d \\times %d \\times %d$;" % biggest, near="smaller `--quick` sizes")
    states("A07", "mma_gemm_exercise.py", near="smaller `--quick` sizes")


# ---------------------------------------------------------------- measured
class Records(dict):
    def __missing__(self, key: str):
        raise AssertionError(f"no record for {key}: run `tutor labs bench A07 --course` on the H200")


@pytest.fixture(scope="module")
def recs() -> Records:
    return Records(records(ROOT))


def val(recs, variant: str, vendor: str = "cuda") -> float:
    return recs[f"A07/mma_gemm/{variant}/{vendor}"]["value"]


def _candidate_cfgs() -> list[tuple[int, ...]]:
    """(BM, BN, BK, GROUP_M, warps, stages) of every entry of the lab's CANDIDATES, in its order."""
    block = LAB_PY.split("CANDIDATES = ")[1].split("\n\n")[0]
    found = re.findall(r"dict\(BM=(\d+), BN=(\d+), BK=(\d+), GROUP_M=(\d+), num_warps=(\d+), num_stages=(\d+)\)", block)
    assert len(found) == block.count("dict("), "a CANDIDATES entry no longer matches the pattern"
    return [tuple(int(x) for x in c) for c in found]


def _name(cfg: tuple[int, ...]) -> str:
    """The record variant of one candidate, as the lab's shape_name writes it (a group size other than 8
    is appended)."""
    m, n, k, gm, w, st = cfg
    name = f"tile_{m}x{n}x{k}_w{w}_s{st}"
    return name if gm == 8 else f"{name}_g{gm}"


def _candidates() -> list[str]:
    return [_name(c) for c in _candidate_cfgs()]


GOAL = 0.95  # the module's goal: a Triton tl.dot kernel at 95% or more of cuBLAS bf16 at 4096^3
TMA = ("tma", "tma_persistent")  # the optional NVIDIA Hopper variants (TMA_CONFIGS of the lab)
POINTER = ("simple", "best")  # the pointer kernel's variants (CONFIGS of the lab)


def _share(rec: dict) -> float:
    assert rec["unit"] == rec["ceiling"]["unit"] == "TFLOP/s"
    return rec["value"] / rec["ceiling"]["value"]


def _tma_configs() -> dict[str, tuple[int, ...]]:
    block = LAB_PY.split("TMA_CONFIGS = {")[1].split("}\n")[0]
    found = re.findall(r'"(\w+)": dict\(BM=(\d+), BN=(\d+), BK=(\d+), GROUP_M=(\d+), num_warps=(\d+), '
                       r"num_stages=(\d+)\)", block)
    return {v: tuple(int(x) for x in rest) for v, *rest in found}


def test_headline_goal_met_by_the_tma_variant_and_said_so(recs):
    assert tuple(_tma_configs()) == TMA
    # the TMA variants reach the goal against the torch.mm of their own run; the page and headline say so
    for v in TMA:
        assert _share(recs[f"A07/mma_gemm/{v}/triton"]) >= GOAL, v
    states("A07", "95%", near="Goal met by the TMA variant", files="module.yml")
    states("A07", "optional NVIDIA-Hopper-only variant", near="Goal met by the TMA variant", files="module.yml")
    states("A07", "CDNA 3 (which has no TMA), misses it", near="Goal met by the TMA variant", files="module.yml")
    states("A07", "**95% or more**", near="The goal of this module was a Triton")
    states("A07", "**It is met by the TMA variant**", near="The goal of this module was a Triton")
    states("A07", "NVIDIA Hopper only", near="The goal of this module was a Triton")
    states("A07", "met by the TMA variant, on Hopper only", near="### The Triton kernel against its goal")
    for v in TMA:
        states("A07", f'measured("A07/mma_gemm/{v}/triton")', near="`tma`, one program per output tile")
    # the shape the page names for the TMA variants is the lab's
    for v, (m, n, k, _, w, st) in _tma_configs().items():
        states("A07", f"{m} x {n} x {k}, {w} warps, {st} stages", near="`tma`, one program per output tile")
    never_states("A07", "**It is not met.**")
    never_states("A07", "Goal not met")


def test_pointer_kernel_misses_the_goal_and_said_so(recs):
    names = _candidates()
    assert len(names) == 10
    states("A07", "ten tile shapes", near="Goal met by the TMA variant", files="module.yml")
    states("A07", "ten tile shapes", near="The goal of this module was a Triton")
    pointer = [recs[f"A07/mma_gemm/{v}/triton"] for v in names + list(POINTER)]
    assert all(_share(r) < GOAL for r in pointer)  # no record of the pointer kernel reaches the goal
    states("A07", "**The pointer kernel misses it**", near="The goal of this module was a Triton")
    states("A07", "Neither figure of the pointer kernel is within reach of 95%", near="Both TMA variants clear 95%")
    states("A07", "with the fastest of its ten tile shapes and with their winner re-timed",
           near="Goal met by the TMA variant", files="module.yml")


def test_the_tma_margin_is_narrow_and_the_two_tma_variants_alike(recs):
    winner = min(_candidates(), key=lambda v: recs[f"A07/mma_gemm/{v}/triton"]["ms"])
    spread = val(recs, winner, "triton") / val(recs, "best", "triton") - 1  # two timings of one shape
    margins = [_share(recs[f"A07/mma_gemm/{v}/triton"]) / GOAL - 1 for v in TMA]
    assert 0 <= max(margins) < spread
    states("A07", "by a narrow margin: less than the difference between the two timings",
           near="Both TMA variants clear 95%")
    states("A07", "narrowly", near="Goal met by the TMA variant", files="module.yml")
    tma, pers = val(recs, "tma", "triton"), val(recs, "tma_persistent", "triton")
    assert abs(pers / tma - 1) < 0.01
    states("A07", "The two measure alike", near="Both TMA variants clear 95%")
    states("A07", 'share("A07/mma_gemm/tma_persistent/triton", "A07/mma_gemm/tma/triton")',
           near="Both TMA variants clear 95%")


def test_same_tile_shape_through_pointers_and_through_tma(recs):
    shape = _tma_configs()["tma"]
    same = _name(shape)
    assert same in _candidates()  # the pointer kernel's candidate of the TMA variants' shape, warps, stages
    m, n, k, _, w, st = shape
    near = "The same tile shape, two ways of moving tiles"
    states("A07", f"({m} x {n} x {k}, {w} warps, {st} stages)", near=near)
    states("A07", f'ratio("A07/mma_gemm/tma/triton", "A07/mma_gemm/{same}/triton")', near=near)
    assert val(recs, "tma", "triton") > val(recs, same, "triton")
    assert val(recs, "tma", "triton") > val(recs, "best", "triton")
    states("A07", "is not measured here", near=near)


def test_best_is_the_sweep_winner_re_timed_and_the_page_quotes_both(recs):
    cfgs = dict(zip(_candidates(), _candidate_cfgs()))
    # `best` is the candidate with the least time (min over the sweep's ms), re-timed at the end of the run
    winner = min(cfgs, key=lambda v: recs[f"A07/mma_gemm/{v}/triton"]["ms"])
    assert winner == "tile_256x128x64_w8_s4_g16"
    states("A07", "256 x 128 x 64, 8 warps, 4 stages, groups of 16", near="the pointer kernel's result, `best`")
    states("A07", f'measured("A07/mma_gemm/{winner}/triton")', near="the same shape's own timing in the sweep")
    slowest = min(cfgs, key=lambda v: val(recs, v, "triton"))
    assert slowest == "tile_128x256x128_w8_s2"
    states("A07", "128 x 256 x 128 with 8 warps and 2 stages", near="the slowest of the ten")
    states("A07", f'ratio("A07/mma_gemm/{winner}/triton", "A07/mma_gemm/{slowest}/triton")',
           near="The tile shape matters")
    # re-timed below its own sweep figure: the page takes `best` as the result, the sweep as an upper estimate
    assert val(recs, "best", "triton") < val(recs, winner, "triton")
    states("A07", "upper estimate", near="biased upwards")
    states("A07", f'share("A07/mma_gemm/best/triton", "A07/mma_gemm/{winner}/triton")',
           near="The same kernel, timed twice, differs")
    states("A07", "measured, not explained", near="The same kernel, timed twice, differs")
    # the sweep: two shapes with BK = 128, one with groups of 16; the winner has BK = 64 and the groups of 16,
    # and both BK = 128 shapes are slower than it
    bk128 = [v for v, c in cfgs.items() if c[2] == 128]
    g16 = [v for v, c in cfgs.items() if c[3] == 16]
    assert len(bk128) == 2 and g16 == [winner] and cfgs[winner][2] == 64
    assert all(val(recs, v, "triton") < val(recs, winner, "triton") for v in bk128)
    near = "The tile shape matters"
    states("A07", "two shapes with $BK = 128$", near=near)
    states("A07", "groups of 16 block-rows instead of 8", near=near)
    states("A07", "both $BK = 128$ shapes are slower than it", near=near)
    states("A07", "Hypotheses, not measured here", near="hold it below the TMA variants")
    never_states("A07", "only seven were tried")


def test_check_sizes_named_in_the_lab_section():
    sizes = [tuple(int(x) for x in s) for s in re.findall(
        r"\((\d+), (\d+), (\d+)\)", re.search(r"    sizes = \[(.*?)\]\n", LAB_PY, re.S).group(1))]
    ragged = {tuple(int(x) for x in s) for s in re.findall(
        r"\((\d+), (\d+), (\d+)\)", re.search(r"ragged = \{(.*)\}", LAB_PY).group(1))}
    full_ragged = [s for s in sizes if s in ragged]
    assert (129, 264, 1000) in sizes
    near = "Each of the ten tile shapes of the benchmark's sweep is checked"
    for s in full_ragged:
        states("A07", "$%d \\times %d \\times %d$" % s, near=near)
    # a descriptor's rows start 16-byte aligned: K and N multiples of 8 bf16 (2 bytes each)
    tma_sizes = [s for s in sizes if (s[1] * 2) % 16 == 0 and (s[2] * 2) % 16 == 0]
    near = "The TMA variants are checked on the sizes whose"
    for s in tma_sizes:
        states("A07", "$%d \\times %d \\times %d$" % s, near=near)
    assert len(tma_sizes) == 3
    states("A07", "The last of the three", near=near)
    bm, bn, bk = _tma_configs()["tma"][:3]
    last = tma_sizes[-1]
    assert last[0] % bm and last[1] % bn and last[2] % bk  # ragged against the TMA tile in M, N and K
    states("A07", "ragged against their $%d \\times %d \\times %d$ tile in all three dimensions" % (bm, bn, bk),
           near=near)


def test_cuda_and_triton_records_are_different_runs_and_never_compared(recs):
    cuda = {r["ceiling"]["value"] for k, r in recs.items()
            if k.startswith("A07/mma_gemm/") and k.endswith("/cuda") and r.get("kind") != "counter"}
    triton = {r["ceiling"]["value"] for k, r in recs.items() if k.startswith("A07/mma_gemm/") and k.endswith("/triton")}
    assert len(cuda) == 1 and len(triton) == 1 and cuda != triton  # one run each, two different runs
    states("A07", "**two different runs**", near="The CUDA records and the Triton records come from")
    states("A07", "never as a ratio of the two", near="The CUDA records and the Triton records come from")
    for text in sources("A07").values():  # no placeholder forms a ratio or share of a CUDA and a Triton record
        for a, b in re.findall(r'(?:ratio|share)\("([^"]+)", "([^"]+)"\)', text):
            assert a.rsplit("/", 1)[1] == b.rsplit("/", 1)[1], (a, b)
    never_states("A07", "below the register loop too")
    never_states("A07", "equal within the timer's resolution")


def test_mma_sync_ceiling_bounds_the_kernels_and_sits_below_the_datasheet(recs):
    peak = val(recs, "mma_peak")
    assert peak * 1e12 < BF16
    for v in ("mma_plain", "mma_swizzle", "mma_pipelined"):
        assert val(recs, v) <= 1.02 * peak
    assert val(recs, "simt") * 1e12 < FP32
    assert val(recs, "simt") < val(recs, "mma_plain")
    assert val(recs, "mma_pipelined") > val(recs, "simt")


def test_ceilings_were_timed_in_the_same_run(recs):
    for key, rec in recs.items():
        if key.startswith("A07/mma_gemm/") and rec.get("kind") != "counter":
            assert rec["ceiling"]["unit"] == "TFLOP/s"
            name = rec["ceiling"]["name"]
            assert ("cuBLAS" in name) if key.endswith("/cuda") else ("torch.mm" in name)


def test_ldmatrix_counters_match_the_derivation(recs):
    blocks = (N_BENCH // BM) * (N_BENCH // BN)
    per_k16 = (WM // 16) + (WN // 8) // 2
    ldsm = blocks * (THREADS // WARP) * per_k16 * (BK // 16) * (N_BENCH // BK)
    wave = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"
    conf = "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
    plain = recs[f"A07/mma_gemm/mma_plain.{wave}/cuda"]["value"]
    swz = recs[f"A07/mma_gemm/mma_swizzle.{wave}/cuda"]["value"]
    assert plain == ldsm * L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, False))
    assert swz == ldsm * L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, True))
    assert recs[f"A07/mma_gemm/mma_plain.{conf}/cuda"]["value"] == plain - swz  # 3 extra passes per matrix
    assert recs[f"A07/mma_gemm/mma_swizzle.{conf}/cuda"]["value"] == 0
    states("A07", "exactly the", near="Plain to swizzled.")


def test_the_wgmma_library_beats_the_mma_sync_register_loop(recs):
    peak = recs["A07/mma_gemm/mma_peak/cuda"]
    assert peak["ceiling"]["value"] > peak["value"]  # cuBLAS, memory traffic and all, above the loop
    states("A07", "is faster than it", near="The register loop has no memory traffic at all")
    assert val(recs, "mma_plain") < val(recs, "mma_swizzle") < val(recs, "mma_pipelined")


# ---------------------------------------------------------------- instruction counts of the compiled labs
# labs/A07/isa-counts.json records, for the current lab sources, how many matrix instructions the compilers of
# this course emit per kernel (nvcc for sm_90a, read with cuobjdump -sass; hipcc for gfx940, read from the -S
# assembly). The page quotes them; the test checks the transcript belongs to the sources as they are, and
# recompiles and recounts wherever the toolchains are installed (they are on the course's build machines).
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

ISA = ROOT / "labs/A07/isa-counts.json"
SOURCES = {"cuda": "labs/A07/cuda/mma_gemm.cu", "hip": "labs/A07/hip/mma_gemm.hip"}
KERNELS = ("simt", "mma_plain", "mma_swizzle", "mma_pipelined", "mma_peak")


def _sha(rel: str) -> str:
    return hashlib.sha256((ROOT / rel).read_bytes()).hexdigest()


def _cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    import importlib.util
    spec = importlib.util.find_spec("triton")
    if spec and spec.submodule_search_locations:
        p = Path(list(spec.submodule_search_locations)[0]) / "backends/nvidia/bin/cuobjdump"
        return str(p) if p.is_file() else None
    return None


def count_cuda() -> dict | None:
    dump = _cuobjdump()
    if not shutil.which("nvcc") or not dump:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lab"
        subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-I", "labs/common/cuda", "-o", str(out),
                        SOURCES["cuda"]], cwd=ROOT, check=True, capture_output=True)
        sass = subprocess.run([dump, "-sass", str(out)], check=True, capture_output=True, text=True).stdout
    counts: dict[str, dict[str, int]] = {}
    name = ""
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = next((k for k in KERNELS if re.match(rf"_Z\d+{k}P", m.group(1))), "")
            continue
        for op in ("HMMA", "LDSM", "FFMA"):
            if name and re.search(rf"\b{op}\b", line):
                counts.setdefault(name, {}).setdefault(op, 0)
                counts[name][op] += 1
    return counts


def count_hip() -> dict | None:
    if not shutil.which("hipcc"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lab.s"
        subprocess.run(["hipcc", "-O3", "-std=c++17", "--offload-arch=gfx940", "--cuda-device-only", "-S", "-I",
                        "labs/common/hip", SOURCES["hip"], "-o", str(out)], cwd=ROOT, check=True, capture_output=True,
                       env=dict(os.environ, HIP_PLATFORM="amd"))
        asm = out.read_text()
    counts: dict[str, dict[str, int]] = {}
    name = ""
    for line in asm.splitlines():
        m = re.match(r"^(_Z\w+):", line)
        if m:
            name = next((k for k in KERNELS if re.match(rf"_Z\d+{k}P", m.group(1))), "")
            continue
        if name and "v_mfma_f32_32x32x8" in line:
            counts.setdefault(name, {}).setdefault("v_mfma_f32_32x32x8_bf16", 0)
            counts[name]["v_mfma_f32_32x32x8_bf16"] += 1
    return counts


def test_isa_transcript_is_current_and_quoted():
    isa = json.loads(ISA.read_text())
    for vendor, rel in SOURCES.items():
        assert isa[vendor]["source_sha256"] == _sha(rel), f"{rel} changed: regenerate {ISA.name} (see this test)"
    cu, hip = isa["cuda"]["counts"], isa["hip"]["counts"]
    # one k-tile's work: the loop over k-tiles is not unrolled, the loop over its 16-wide steps is
    for k in ("mma_plain", "mma_swizzle", "mma_pipelined"):
        assert cu[k]["HMMA"] == (BK // 16) * (WM // 16) * (WN // 8)
        assert cu[k]["LDSM"] == (BK // 16) * ((WM // 16) + (WN // 8) // 2)
    wm_h, wn_h = 64, 64  # the HIP wave tile: kWM, kWN of labs/A07/hip/mma_gemm.hip
    assert f"constexpr int kWM = {wm_h}, kWN = {wn_h};" in (ROOT / SOURCES["hip"]).read_text()
    for k in ("mma_plain", "mma_swizzle", "mma_pipelined"):
        assert hip[k]["v_mfma_f32_32x32x8_bf16"] == (BK // 8) * (wm_h // 32) * (wn_h // 32)
    states("A07", str(cu["mma_plain"]["HMMA"]), near="SASS of")
    states("A07", str(cu["mma_plain"]["LDSM"]), near="SASS of")
    states("A07", g(cu["simt"]["FFMA"]), near="SASS of")
    states("A07", str(hip["mma_plain"]["v_mfma_f32_32x32x8_bf16"]), near="Compiled here (clang 15")


_PTX_SCRIPT = r"""
import importlib.util, json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
spec = importlib.util.spec_from_file_location("lab", sys.argv[1])
lab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab)
cfg = dict(lab.CONFIGS["best"])
warps, stages = cfg.pop("num_warps"), cfg.pop("num_stages")
consts = dict(cfg, EVEN_K=True, UPCAST=False)
sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32"}
sig.update({k: "constexpr" for k in consts})
fn = triton.runtime.jit.JITFunction(lab.gemm_kernel.fn)
src = ASTSource(fn, sig, constexprs=consts, attrs={(i,): [["tt.divisibility", 16]] for i in range(6)})
k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
print(json.dumps({"version": triton.__version__, "ptx": k.asm["ptx"], "best": lab.CONFIGS["best"]}))
"""


def test_triton_loop_of_best_compiled_for_sm90():
    """The k-loop of the Triton lab's default `best` shape, compiled here for sm_90: its wgmma, their wait,
    cp.async and the block barriers, as the page states them (skipped where Triton cannot compile for sm_90)."""
    try:
        out = subprocess.run([sys.executable, "-c", _PTX_SCRIPT, str(ROOT / "labs/A07/triton/mma_gemm.py")],
                             cwd=ROOT, capture_output=True, text=True, timeout=600,
                             env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
        got = json.loads(out.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"Triton could not compile the lab for sm_90 here: {e}")
    near = "Compiled here with Triton"
    version = re.search(r"Compiled here with Triton (\d+\.\d+) for sm_90", "\n".join(sources("A07", "5-performance.md").values()))
    assert version, "the page no longer names the Triton version it compiled with"
    if not got["version"].startswith(version.group(1) + "."):
        pytest.skip(f"Triton {got['version']} here; the page's counts are of Triton {version.group(1)}")
    lines = got["ptx"].splitlines()
    head = next(i for i, line in enumerate(lines) if "Inner Loop Header" in line)
    label = lines[head].split(":")[0]
    end = next(i for i in range(head + 1, len(lines)) if re.search(rf"\bbra\s+{re.escape(label)};", lines[i]))
    loop = lines[head:end + 1]
    wgmma = [line for line in loop if "wgmma.mma_async" in line]
    waits = {int(m.group(1)) for line in loop for m in [re.search(r"wgmma\.wait_group\.sync\.aligned (\d+)", line)] if m}
    bars = sum("bar.sync" in line for line in loop)
    best = got["best"]
    assert all("ldmatrix" not in line for line in loop)  # both operands by shared-memory descriptor
    assert all(re.search(r"%rd\d+, %rd\d+, %p\d+", line) for line in wgmma)  # A and B as descriptors
    assert any("cp.async.cg" in line for line in loop) and "cp.async.bulk.tensor" not in got["ptx"]
    states("A07", f"{best['BM']} x {best['BN']} x {best['BK']}, {best['num_warps']} warps, "
           f"{best['num_stages']} stages", near=near)
    states("A07", f"`wgmma`, {len(wgmma)} per", near=near)
    assert waits == {1}
    states("A07", "waits for all but the last group", near=near)
    states("A07", f"passes {bars} barriers of the whole block", near=near)


def test_cuda_isa_counts_recomputed():
    if not shutil.which("nvcc") or not _cuobjdump():
        pytest.skip("nvcc or cuobjdump not found: the SASS counts of labs/A07/isa-counts.json are not recounted here")
    assert count_cuda() == json.loads(ISA.read_text())["cuda"]["counts"]


def test_hip_isa_counts_recomputed():
    if not shutil.which("hipcc"):
        pytest.skip("hipcc not found: the MFMA counts of labs/A07/isa-counts.json are not recounted here")
    assert count_hip() == json.loads(ISA.read_text())["hip"]["counts"]


if __name__ == "__main__":  # regenerate the transcript: python tests/claims/test_a07.py
    ISA.write_text(json.dumps({"cuda": {"source_sha256": _sha(SOURCES["cuda"]), "compiler": "nvcc -O3 -arch=sm_90a",
                                        "counts": count_cuda()},
                               "hip": {"source_sha256": _sha(SOURCES["hip"]), "compiler": "hipcc -O3 --offload-arch=gfx940",
                                       "counts": count_hip()}}, indent=1, sort_keys=True) + "\n")
