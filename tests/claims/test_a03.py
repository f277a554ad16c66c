"""Claims of module A03 (warps, wavefronts and occupancy): derived here, then read from the module's own text.

Every number the prose derives (register budgets, resident blocks and their limiters, the shared-memory and
LDS requests that pin the lab's occupancy, bytes in flight per SM, Little's law, the passes of a branch,
the self-assessment's worked answers, ridge points) is recomputed from the one hardware table
(tutor_build.models.hardware), the course's models (occupancy, latency_hiding) or the lab's own source,
formatted as the page prints it, and looked up in the paragraph that states it (tests/claims/prose.py).

The second half reads the H200 measurement records and checks the relations the prose draws from them:
the headline pair, the crossover of Little's law from the measured copy ceiling and latency, the chase's
L2-hit ceiling, the timers the page names, the profiler's achieved occupancy and register counts, the
divergence ratios and the Triton copies against their ceiling. The labs run on one GPU, so a missing
record is a failure, not a skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prose import never_states, paragraphs, sources, states
from tutor_build.measurements import records
from tutor_build.models import hardware, latency_hiding as lh, occupancy

ROOT = Path(__file__).parents[2]
LAB_CU = (ROOT / "labs/A03/cuda/occupancy.cu").read_text(encoding="utf-8")
LAB_HIP = (ROOT / "labs/A03/hip/occupancy.hip").read_text(encoding="utf-8")
DIV_CU = (ROOT / "labs/A03/cuda/divergence.cu").read_text(encoding="utf-8")
KIB = 1024


def spec(device: str, field: str) -> float:
    return hardware.value(device, field)


# ---- the two units, from the hardware table --------------------------------------------------------
LANES = int(spec("h200", "lanes"))
WAVE = int(spec("mi300x", "lanes"))
MAX_WARPS = int(spec("h200", "max_warps_per_unit"))
THREADS_SM = MAX_WARPS * LANES
REGS = int(spec("h200", "regs_per_unit"))
REG_UNIT = int(spec("h200", "reg_alloc_unit"))
SUB = occupancy.SUB_PARTITIONS  # SM sub-partitions, each with its own quarter of the register file
REGS_SUB = REGS // SUB  # 16,384
SMEM = int(spec("h200", "shared_per_unit"))
RESERVED = int(spec("h200", "shared_reserved_per_block"))
SMS = int(spec("h200", "units"))
CUS = int(spec("mi300x", "units"))
WAVES_SIMD = int(spec("mi300x", "max_waves_per_simd"))
SIMDS = int(spec("mi300x", "simds_per_unit"))
VGPRS = int(spec("mi300x", "vgprs_per_simd_lane"))
LDS = int(spec("mi300x", "shared_per_unit"))
THREADS_CU = WAVES_SIMD * SIMDS * WAVE

# ---- the lab, from its source ---------------------------------------------------------------------
K_THREADS = int(re.search(r"constexpr int kThreads = (\d+);", LAB_CU).group(1))
VARIANTS = [(name, int(ilp), int(blocks)) for name, ilp, blocks in
            re.findall(r"TUTOR_VARIANT\((occ\d+_ilp\d+), (\d+), (\d+)\)", LAB_CU)]
WARPS_PER_BLOCK = K_THREADS // LANES
LOAD_BYTES = 16  # one float4, the lab's access
assert "2 * d.smem_per_sm / (2 * blocks + 1) - d.reserved) / 128 * 128" in LAB_CU
assert "2 * d.smem_per_sm / (2 * blocks + 1) - d.reserved) / 128 * 128" in LAB_HIP
CHASE_SLOT = int(re.search(r"constexpr unsigned kChaseSlot = (\d+);", LAB_CU).group(1)) * 4
CHASE_LINKS = 1 << int(re.search(r"const unsigned links = 1u << (\d+);", LAB_CU).group(1))
CHASE_STEPS = 1 << int(re.search(r"const int steps = 1 << (\d+);", LAB_CU).group(1))
K_STEPS = int(re.search(r"constexpr int kSteps = (\d+);", DIV_CU).group(1))


def fmt(n: float) -> str:
    return f"{n:,.0f}"


def tex(n: int) -> str:
    """A whole number as the page's math writes it: 64{,}512."""
    return f"{n:,}".replace(",", "{,}")


def pct(x: float) -> str:
    return f"{100 * x:g}%"


def request(blocks: int) -> int:
    return lh.smem_request(SMEM, RESERVED, blocks, K_THREADS, THREADS_SM)


def lds_request(blocks: int) -> int:
    return lh.smem_request(LDS, 0, blocks, K_THREADS, THREADS_CU)


def in_flight_kib(name: str) -> float:
    _, ilp, blocks = next(v for v in VARIANTS if v[0] == name)
    return lh.bytes_in_flight(blocks * WARPS_PER_BLOCK, LANES, LOAD_BYTES, ilp) / KIB


# =============================================================================================
# Section 1: the analogy's numbers are the timeline's
# =============================================================================================


def test_one_row_keeps_the_corridor_busy_3_ticks_in_48():
    t = lh.timeline(1, 15, 48, 1)
    busy = sum(1 for w in t.issue if w >= 0)
    states("A03", str(busy), near="ticks in 48", files="1-analogy.md")
    assert busy == 3
    states("A03", "15", near="ticks in 48", files="1-analogy.md")


# =============================================================================================
# Section 2: occupancy and its limiters
# =============================================================================================


def test_register_budget_of_full_occupancy():
    budget = REGS // THREADS_SM
    states("A03", str(budget), near="so at most", files="2-first-principles.md")
    states("A03", fmt(THREADS_SM), near="so at most", files="2-first-principles.md")
    vgpr_budget = VGPRS // WAVES_SIMD
    states("A03", str(vgpr_budget), near="full occupancy needs at", files="2-first-principles.md")
    assert occupancy.hopper("h200", K_THREADS, budget, 0)["occupancy"] == 1
    assert occupancy.hopper("h200", K_THREADS, budget + 1, 0)["occupancy"] < 1
    assert occupancy.cdna3("mi300x", K_THREADS, vgpr_budget, 0)["occupancy"] == 1
    assert occupancy.cdna3("mi300x", K_THREADS, vgpr_budget + 8, 0)["occupancy"] < 1


def regs_per_warp(r: int) -> int:
    return -(-r * LANES // REG_UNIT) * REG_UNIT


def blocks_by_registers(threads: int, r: int) -> int:
    """First principles (cuda_occupancy.h, cudaOccMaxBlocksPerSMRegsLimit): warps per sub-partition from its
    own quarter of the file, times the sub-partitions, then whole blocks."""
    w = -(-threads // LANES)
    return SUB * (REGS_SUB // regs_per_warp(r)) // w


def test_one_register_more_costs_a_quarter():
    r = REGS // THREADS_SM + 1
    per_warp = regs_per_warp(r)
    res = occupancy.hopper("h200", K_THREADS, r, 0)
    para = states("A03", fmt(per_warp), near="One register more", files="2-first-principles.md")
    per_sub = REGS_SUB // per_warp
    for token in (str(r), str(per_sub), fmt(REGS_SUB), str(SUB * per_sub), str(res["blocks"]), pct(res["occupancy"])):
        assert re.search(rf"(?<![\d.,]){re.escape(token)}(?![\d])", para), token
    assert res["limit"] == "registers" and res["warps"] == SUB * per_sub
    # the pooled count (the whole file at once) was the corrected figure: it must be gone everywhere
    never_states("A03", str(REGS // per_warp))
    never_states("A03", str(REGS // per_warp), files="cards")


def test_sub_partitions_change_the_blocks_of_3_warp_blocks():
    res = occupancy.hopper("h200", 96, 40, 0)
    pooled = (REGS // regs_per_warp(40)) // 3
    assert res["blocks"] == blocks_by_registers(96, 40) == 16 and pooled == 17
    para = states("A03", f"fit {res['blocks']} per SM", near="blocks of 96 threads", files="2-first-principles.md")
    assert pct(res["occupancy"]) in para and f"would give {pooled}" in para
    states("A03", fmt(REGS_SUB), near="one per SM sub-partition", files="2-first-principles.md")
    assert "4\\,\\lfloor 16384 / \\lceil 32R" in (ROOT / "modules/A03-warps-occupancy/2-first-principles.md").read_text()


def test_the_model_counts_registers_per_sub_partition():
    # the model of the player, figure and tests against the first-principles count, over every block size
    for threads in range(32, 1025, 32):
        for r in range(1, 256):
            assert occupancy.hopper("h200", threads, r, 0)["limits"]["registers"] == blocks_by_registers(threads, r), (threads, r)
    # examples where pooling the file would over-report
    assert blocks_by_registers(64, 48) == 20 and blocks_by_registers(32, 104) == 16


def test_shared_memory_requests_pin_the_blocks():
    for blocks in (8, 4, 2, 1):
        req = request(blocks)
        states("A03", fmt(req), near="the requests for 8, 4, 2 and 1 blocks", files="2-first-principles.md")
        for r in (18, 26, 28, 46):  # any register count the lab's kernels may have at these block counts
            if occupancy.hopper("h200", K_THREADS, r, 0)["limits"]["registers"] >= blocks:
                assert occupancy.hopper("h200", K_THREADS, r, req)["blocks"] == blocks
    assert request(16) == 0
    states("A03", "16 blocks need none", near="the requests for 8, 4, 2 and 1 blocks", files="2-first-principles.md")


def test_the_lab_uses_the_derived_occupancies():
    by_blocks = {16: "occ100", 8: "occ50", 4: "occ25", 2: "occ12", 1: "occ6"}
    assert len(VARIANTS) == 19
    for name, ilp, blocks in VARIANTS:
        assert name == f"{by_blocks[blocks]}_ilp{ilp}"
    # ilp 8 is absent at 16 blocks: eight float4 are 32 registers of data, the whole budget
    assert ("occ100_ilp8", 8, 16) not in VARIANTS
    assert 8 * LOAD_BYTES // 4 == REGS // THREADS_SM


def test_bytes_in_flight_of_the_derivation_and_the_lab_table():
    full = lh.bytes_in_flight(MAX_WARPS, LANES, LOAD_BYTES, 1) // KIB
    low = lh.bytes_in_flight(MAX_WARPS // 8, LANES, LOAD_BYTES, 8) // KIB
    assert full == low
    states("A03", f"{full} KiB", near="At full occupancy, $W = 64$", files="2-first-principles.md")
    labs = (ROOT / "modules/A03-warps-occupancy/4-labs.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(occ\d+_ilp\d+)` \| (\d+) \| ([\d.]+)% \| (\d+) \| (\d+) \|$", labs, re.M)
    assert len(rows) == 8
    for name, warps, occ, ilp, kib in rows:
        _, vilp, blocks = next(v for v in VARIANTS if v[0] == name)
        assert int(warps) == blocks * WARPS_PER_BLOCK and int(ilp) == vilp
        assert float(occ) == 100 * blocks * WARPS_PER_BLOCK / MAX_WARPS
        assert int(kib) == in_flight_kib(name)


def test_littles_law_at_the_datasheet_peak():
    latency = 500e-9  # the round latency the page assumes, as A01 does, before the lab measures it
    per_sm = lh.needed_in_flight(spec("h200", "hbm_bw") / 2, latency, SMS) / KIB
    states("A03", f"{per_sm:.1f} KiB", near="round latency of 500 ns, that is about", files="2-first-principles.md")
    per_cu = lh.needed_in_flight(spec("mi300x", "hbm_bw") / 2, latency, CUS) / KIB
    para = states("A03", f"{per_cu:.1f} KiB", near="a CU must keep only about", files="3-silicon.md")
    assert f"{per_sm:.1f} KiB" in para
    states("A03", str(SMS), near="round latency of 500 ns", files="2-first-principles.md")


def test_divergence_passes():
    assert lh.split_passes(1, LANES) == lh.split_passes(1, WAVE) == 2
    assert lh.split_passes(32, LANES) == 1 and lh.split_passes(32, WAVE) == 2
    assert lh.split_passes(64, LANES) == lh.split_passes(64, WAVE) == 1
    states("A03", "2a", near="so every wavefront issues", files="2-first-principles.md")


# =============================================================================================
# Section 3: the two units, and the MI300X sweep derived
# =============================================================================================


def test_silicon_examples():
    # 40 registers in blocks of 128 threads: 75% on Hopper, 100% on CDNA 3
    h = occupancy.hopper("h200", K_THREADS, 40, 0)
    a = occupancy.cdna3("mi300x", K_THREADS, 40, 0)
    para = states("A03", pct(h["occupancy"]), near="kernel at 40 registers", files="3-silicon.md")
    assert pct(a["occupancy"]) in para
    # a 32 KiB tile per block: 6 blocks on an H200 SM, 2 on an MI300X CU
    hb = occupancy.hopper("h200", K_THREADS, 16, 32 * KIB)["blocks"]
    ab = occupancy.cdna3("mi300x", K_THREADS, 16, 32 * KIB)["blocks"]
    para = states("A03", f"{hb} blocks", near="a 32 KiB tile per", files="3-silicon.md")
    assert f"{ab} on an" in para


def test_lds_requests_pin_the_workgroups():
    for blocks in (8, 4, 2, 1):
        req = lds_request(blocks)
        states("A03", fmt(req), near="bytes of LDS leave 8", files="3-silicon.md")
        assert occupancy.cdna3("mi300x", K_THREADS, 42, req)["blocks"] == blocks
    full = lh.bytes_in_flight(WAVES_SIMD * SIMDS, WAVE, LOAD_BYTES, 1) // KIB
    states("A03", f"{full} KiB", near="A full CU with one 16-byte load per lane", files="3-silicon.md")


def test_the_vgpr_counts_fit_full_occupancy():
    para = states("A03", "42", near="`.vgpr_count`", files="3-silicon.md")
    for v in (12, 18, 26, 42):
        assert str(v) in para
        assert occupancy.cdna3("mi300x", K_THREADS, v, 0)["occupancy"] == 1


# =============================================================================================
# Sections 6, 7, 9: the worked numbers
# =============================================================================================


def test_shared_memory_per_block_at_full_occupancy():
    blocks = MAX_WARPS // WARPS_PER_BLOCK
    per_block = (SMEM / blocks - RESERVED) / KIB
    states("A03", f"{per_block:g} KiB", near="a tiled kernel at 100% occupancy", files="6-tradeoffs.md")


def test_cutlass_register_arithmetic():
    # CUTLASS sm90 cooperative GEMM (a03-cutlass-sm90-cooperative): LoadRegisterRequirement = 40,
    # MmaRegisterRequirement = 232, one load warpgroup and NumMMAThreads = 256, one block per SM
    load, mma, wg = 40, 232, 128
    total = load * wg + mma * 2 * wg
    assert total <= REGS
    warps = 3 * wg // LANES
    para = states("A03", f"{100 * warps / MAX_WARPS:g}%", near="of the SM's 65,536 registers", files="7-production.md")
    assert f"= {tex(total)}$" in para and f"{warps} warps of {MAX_WARPS}" in para
    para = states("A03", f"{100 * warps / MAX_WARPS:g}%", near="384 threads are", files="9-self-assessment.md")
    assert f"= {tex(total)}" in para and f"{warps} warps of {MAX_WARPS}" in para


def test_q1_one_kernel_two_occupancies():
    h = occupancy.hopper("h200", 256, 40, 20 * KIB)
    a = occupancy.cdna3("mi300x", 256, 40, 20 * KIB)
    para = states("A03", pct(h["occupancy"]), near="limited by registers**", files="9-self-assessment.md")
    assert h["limit"] == "registers" and a["limit"] == "shared memory"
    assert f"= {tex(40 * LANES)}$ per warp" in para
    per_sub = REGS_SUB // (40 * LANES)
    assert f"{tex(REGS_SUB)} / {tex(40 * LANES)} \\rfloor = {per_sub}$ warps in each of the {SUB} sub-partitions" in para
    assert f"{SUB} \\times {per_sub} = {SUB * per_sub}$ warps" in para
    assert f"= {h['limits']['registers']}$ blocks" in para and f"= {h['limits']['shared memory']}$ blocks" in para
    assert f"{h['blocks']} blocks, {h['warps']} warps" in para
    assert f"{a['blocks']} workgroups, {a['warps']} waves" in para and pct(a["occupancy"]) in para


def test_q2_warps_a_copy_needs():
    need = lh.needed_in_flight(spec("h200", "hbm_bw") / 2, 500e-9, SMS)
    para = states("A03", fmt(need), near="bytes per SM**", files="9-self-assessment.md")
    assert f"about {round(need / 512)} warps" in para
    assert f"about {round(need / 128)} warps" in para
    assert round(need / 128) > MAX_WARPS


def test_q5_launch_bounds_register_cap():
    blocks, threads = 4, 256
    warps = blocks * threads // LANES
    cap = REGS_SUB // (warps // SUB * LANES)
    assert cap == REGS // (warps * LANES)  # 32 warps split evenly over the sub-partitions
    para = states("A03", str(cap), near="registers low enough for 4 such blocks", files="9-self-assessment.md")
    assert f"{tex(REGS_SUB)} / ({warps // SUB} \\times 32) = {cap}$" in para
    # HIP: the same 4 read as waves per SIMD; what the CUDA text meant, counted on a CDNA 3 CU
    waves = blocks * (threads // WAVE)
    per_simd = waves // SIMDS
    assert per_simd == blocks  # the coincidence the answer names, at 256 threads
    assert f"{waves} waves over {SIMDS} SIMDs, {per_simd} per SIMD" in para
    assert (blocks * 128 // WAVE) // SIMDS * 2 == blocks  # at 128 threads the same 4 asks for twice the waves
    assert "blocks of 128 threads the same 4 would ask for twice" in para
    # HIP's current porting guide (CU mode) and its earlier /32
    doc = blocks * threads // (WAVE * 2)
    assert f"{blocks} \\times {threads} / {WAVE * 2} = {doc}$ waves per SIMD" in para and doc == WAVES_SIMD
    old = blocks * threads // 32
    assert f"which would give {old}, beyond the {WAVES_SIMD}" in para and old > WAVES_SIMD
    assert "much weaker" not in para


# =============================================================================================
# Section 5: ridge points and intensity
# =============================================================================================


def test_ridge_points_and_intensities():
    h = spec("h200", "hbm_bw")
    a = spec("mi300x", "hbm_bw")
    states("A03", f"{hardware.peak('h200', 'fp32') / h:.1f}", near="ridge point", files="5-performance.md")
    states("A03", f"{hardware.peak('mi300x', 'fp32') / a:.1f}", near="ridge point", files="5-performance.md")
    states("A03", str(2 * K_STEPS // 8), near="FLOP per byte", files="5-performance.md")


# =============================================================================================
# Measurement records (NVIDIA H200): every one exists, and the prose's relations hold
# =============================================================================================

TRITON = ["w4_b512", "w4_b1024", "w4_b2048", "w4_b4096", "w8_b1024", "w8_b8192", "w16_b2048"]
PROFILED = ["occ100_ilp1", "occ50_ilp1", "occ25_ilp8", "occ12_ilp8", "occ6_ilp1"]


class Records(dict):
    """The course records; a missing A03 record fails the test that needs it, with what to run."""

    def __missing__(self, key: str):
        raise AssertionError(f"no record for {key}: run `tutor labs bench A03 --course` and "
                             f"`tutor labs profile A03 --course` on the H200")


@pytest.fixture(scope="module")
def recs() -> Records:
    return Records(records(ROOT))


def bw(recs: dict, variant: str, vendor: str = "cuda") -> float:
    return recs[f"A03/occupancy/{variant}/{vendor}"]["value"] * 1e9  # bytes/s


def counter(recs: dict, lab: str, kernel: str, metric: str) -> float:
    return recs[f"A03/{lab}/{kernel}.{metric}/cuda"]["value"]


def test_every_record_exists_and_is_below_its_ceiling(recs):
    for name, _, _ in VARIANTS:
        rec = recs[f"A03/occupancy/{name}/cuda"]
        assert rec["unit"] == rec["ceiling"]["unit"] == "GB/s"
        assert rec["value"] <= 1.05 * rec["ceiling"]["value"]
    for name in TRITON:
        assert recs[f"A03/occupancy/{name}/triton"]["value"] <= 1.05 * recs[f"A03/occupancy/{name}/triton"]["ceiling"]["value"]
    assert recs["A03/occupancy/chase_latency/cuda"]["unit"] == "ns"
    for v in ("no_branch", "warp_split", "wave_split", "lane_split"):
        assert recs[f"A03/divergence/{v}/cuda"]["unit"] == "GFLOP/s"
    for v in ("no_branch", "where_lane", "if_program"):
        assert recs[f"A03/divergence/{v}/triton"]["unit"] == "GFLOP/s"


def test_the_headline_pair(recs):
    # lower occupancy, more loads in flight per thread, faster: the pair the headline and section 5 name
    assert bw(recs, "occ12_ilp8") > bw(recs, "occ25_ilp1")
    assert bw(recs, "occ6_ilp8") > bw(recs, "occ25_ilp1")
    assert in_flight_kib("occ12_ilp8") > in_flight_kib("occ25_ilp1")
    headline = (ROOT / "modules/A03-warps-occupancy/module.yml").read_text(encoding="utf-8")
    assert "12.5% occupancy with eight loads in flight per thread beats the same copy at 25% with one" in headline


def test_bandwidth_sorts_by_bytes_in_flight(recs):
    # every variant with at least twice the bytes in flight of another, below the crossover, is faster
    below = [(in_flight_kib(n), bw(recs, n), n) for n, _, _ in VARIANTS if in_flight_kib(n) <= 16]
    for ka, ra, na in below:
        for kb, rb, nb in below:
            if ka >= 2 * kb:
                assert ra > rb, f"{na} ({ka} KiB) is not faster than {nb} ({kb} KiB)"
    para = states("A03", "16 KiB", near="every point with at least twice the bytes in flight", files="5-performance.md")
    assert "sorts, below its crossover, by bytes in flight per SM" in (ROOT / "modules/A03-warps-occupancy/module.yml").read_text(encoding="utf-8")
    # past 16 KiB the rows overlap: the example the page names
    assert in_flight_kib("occ50_ilp1") == 16 and in_flight_kib("occ12_ilp8") == 32
    assert bw(recs, "occ50_ilp1") > bw(recs, "occ12_ilp8")
    assert "`occ50_ilp1`, at 16 KiB, is faster than `occ12_ilp8` at 32" in para
    # and the rows are not in order of bytes in flight past 16 KiB (so the page must not say they are)
    assert any(bw(recs, a) < bw(recs, b) for a, _, _ in VARIANTS for b, _, _ in VARIANTS
               if in_flight_kib(a) >= 2 * in_flight_kib(b) >= 32)
    never_states("A03", "The order of the rows is the order of the bytes in flight")


def test_the_fastest_point_leads_by_about_one_percent(recs):
    rates = sorted(((bw(recs, n), n) for n, _, _ in VARIANTS), reverse=True)
    (first, n1), (second, n2) = rates[0], rates[1]
    assert (n1, n2) == ("occ100_ilp1", "occ50_ilp2")
    margin = first / second - 1
    assert round(100 * margin) == 1
    para = states("A03", "1%", near="ahead of the next, `occ50_ilp2`", files="5-performance.md")
    assert "a small margin" in para


def implied_latency_ns(recs: dict, variant: str) -> float:
    return 2 * SMS * in_flight_kib(variant) * KIB / bw(recs, variant) * 1e9


def test_littles_law_with_the_measured_latency(recs):
    ceiling = recs["A03/occupancy/occ100_ilp1/cuda"]["ceiling"]["value"] * 1e9
    latency = recs["A03/occupancy/chase_latency/cuda"]["value"] * 1e-9
    need = lh.needed_in_flight(ceiling / 2, latency, SMS) / KIB
    states("A03", f"{need:.1f}", near="(copy ceiling / 2) × latency / 132 SMs", files="5-performance.md")
    # "at 8 KiB per SM, already more than Little's law asks with this latency, no point passes 75% of the
    # ceiling, and only from 32 KiB does every point pass 90%": the knee is not where the idle latency puts it
    assert need < 8
    share = {n: bw(recs, n) / ceiling for n, _, _ in VARIANTS}
    assert all(share[n] < 0.75 for n in share if in_flight_kib(n) <= 8)
    assert all(share[n] > 0.90 for n in share if in_flight_kib(n) >= 32)
    assert not all(share[n] > 0.90 for n in share if in_flight_kib(n) == 16)
    para = states("A03", "75%", near="idle latency does not locate the knee", files="5-performance.md")
    assert "90%" in para and "8 KiB" in para and "32 KiB" in para
    assert "not measured here" in para and "predicts no crossover" in para
    # the headline says the latency under load is not measured, and no longer that it was
    headline = (ROOT / "modules/A03-warps-occupancy/module.yml").read_text(encoding="utf-8")
    assert "the lab does not measure the latency under load, so this is a hypothesis" in headline
    never_states("A03", "with the latency measured in the same lab)", files="module.yml")
    never_states("A03", "The reason is that the latency in")


def test_the_latency_each_point_saw(recs):
    text = (ROOT / "modules/A03-warps-occupancy/5-performance.md").read_text(encoding="utf-8")
    seen = []
    for name in ("occ6_ilp1", "occ12_ilp1", "occ25_ilp1", "occ50_ilp1", "occ100_ilp1"):
        lat = implied_latency_ns(recs, name)
        row = re.search(rf"^\| `{name}` \| (\d+) \| ([\d,]+) ns \|$", text, re.M)
        assert row, name
        assert int(row.group(1)) == in_flight_kib(name)
        assert row.group(2) == f"{lat:,.0f}", (name, row.group(2), lat)
        seen.append(lat)
    assert seen == sorted(seen)  # the latency grows with the load
    lat = implied_latency_ns(recs, "occ50_ilp8")
    states("A03", f"{lat:,.0f} ns", near="at 64 and 128 KiB per SM the", files="5-performance.md")
    # even the lightest point sees more than the chase's idle latency, "about one and a half times it"
    chase = recs["A03/occupancy/chase_latency/cuda"]["value"]
    assert 1.4 < seen[0] / chase < 1.6
    assert SMS * in_flight_kib("occ6_ilp1") == 264
    assert 0.225 < bw(recs, "occ6_ilp1") / (recs["A03/occupancy/occ6_ilp1/cuda"]["ceiling"]["value"] * 1e9) < 0.275
    para = states("A03", "264 KiB", near="Even at the lightest point", files="5-performance.md")
    assert "a quarter of its ceiling" in para and "one and a half times" in para and "tells them apart for no point" in para
    states("A03", "one latency per point", near="The hypothesis is that", files="5-performance.md")


def test_profiler_agrees_with_the_occupancy_model(recs):
    for name in PROFILED:
        _, ilp, blocks = next(v for v in VARIANTS if v[0] == name)
        regs = int(counter(recs, "occupancy", name, "launch__registers_per_thread"))
        model = occupancy.hopper("h200", K_THREADS, regs, request(blocks))
        assert model["blocks"] == blocks, name
        assert int(counter(recs, "occupancy", name, "launch__occupancy_limit_registers")) == model["limits"]["registers"]
        if blocks < MAX_WARPS // WARPS_PER_BLOCK:
            assert int(counter(recs, "occupancy", name, "launch__occupancy_limit_shared_mem")) == blocks
        achieved = counter(recs, "occupancy", name, "sm__warps_active.avg.pct_of_peak_sustained_active")
        assert achieved <= 100 * model["occupancy"] * 1.02 and achieved >= 100 * model["occupancy"] * 0.8, name


def test_the_ilp8_kernel_cannot_run_at_full_occupancy(recs):
    regs = int(counter(recs, "occupancy", "occ25_ilp8", "launch__registers_per_thread"))
    res = occupancy.hopper("h200", K_THREADS, regs, 0)
    assert regs > REGS // THREADS_SM and res["limit"] == "registers"
    para = states("A03", f"{res['limits']['registers']} blocks", near="cannot run at 100%", files="5-performance.md")
    assert pct(res["occupancy"]) in para and str(regs) not in para  # the count itself is a placeholder
    assert res["limits"]["registers"] >= 8  # still enough for occ50_ilp8


def test_divergence_ratios(recs):
    base = recs["A03/divergence/no_branch/cuda"]["value"]
    share = {v: recs[f"A03/divergence/{v}/cuda"]["value"] / base for v in ("warp_split", "wave_split", "lane_split")}
    assert share["warp_split"] > 0.97 and share["wave_split"] > 0.97
    assert 0.45 < share["lane_split"] < 0.55
    peak = hardware.peak("h200", "fp32")
    states("A03", f"{100 * base * 1e9 / peak:.0f}%", near="TFLOP/s FP32 peak of the datasheet", files="5-performance.md")


def test_threads_per_instruction(recs):
    ratio = {k: counter(recs, "divergence", k, "smsp__thread_inst_executed.sum")
             / counter(recs, "divergence", k, "smsp__inst_executed.sum") for k in ("branch_none", "branch_warp", "branch_lane")}
    assert ratio["branch_none"] > 30 and ratio["branch_warp"] > 30
    assert 15 < ratio["branch_lane"] < 18
    para = states("A03", f"{ratio['branch_lane']:.1f}", near="threads per executed warp instruction", files="5-performance.md")
    assert f"{ratio['branch_none']:.1f}" in para and f"{ratio['branch_warp']:.1f}" in para


def test_triton_where_could_not_have_run_both_chains(recs):
    where = recs["A03/divergence/where_lane/triton"]["value"] * 1e9
    both = 2 * where  # the FLOP rate executed if both chains ran for every element
    peak = hardware.peak("h200", "fp32")
    assert both > peak
    states("A03", f"{both / 1e12:.1f}", near="twice the useful rate", files="5-performance.md")
    base = recs["A03/divergence/no_branch/triton"]["value"] * 1e9
    assert 0.5 < where / base < 1
    # "the program-level if_program ... still reaches only": a gap to the branch-free kernel remains
    assert recs["A03/divergence/if_program/triton"]["value"] * 1e9 < 0.95 * base
    # so no text may say that tl.where pays for both chains everywhere; it asks for both in its source
    for files in ("*.md", "cards"):
        never_states("A03", "`tl.where` always does", files=files)
        never_states("A03", "both a and b are computed for every element", files=files)
    states("A03", "asks for both in its source", near="Making a branch warp-uniform", files="6-tradeoffs.md")


def test_triton_copies_near_the_ceiling(recs):
    share = {}
    for name in TRITON:
        rec = recs[f"A03/occupancy/{name}/triton"]
        assert rec["value"] > 0.85 * rec["ceiling"]["value"]
        share[name] = rec["value"] / rec["ceiling"]["value"]
    # "from w4_b4096 ... to w4_b512": the slowest and the fastest of the seven
    assert min(share, key=share.get) == "w4_b4096" and max(share, key=share.get) == "w4_b512"
    para = states("A03", "4,096 elements", near="Every Triton configuration is near", files="5-performance.md")
    assert para.index('w4_b4096/triton") }}') < para.index('w4_b512/triton") }}')
    # "the fastest configurations measure a little above that ceiling" (and none by more than W706 allows)
    assert sum(1 for s in share.values() if s > 1) >= 2 and max(share.values()) < 1.05
    assert "The fastest configurations measure a little above that ceiling" in para
    assert "is a hypothesis; it was not measured" in para


def test_the_timers_the_page_names_are_the_ones_the_lab_uses():
    # the variants and the chase with timed_ms (L2 flushed before each run, runs queued behind a spin) ...
    assert "tutor::timed_ms([&] { launch(v, d, din, dout, n); });" in LAB_CU
    assert "float base_ms = tutor::timed_ms(" in DIV_CU
    kit = (ROOT / "labs/common/cuda/tutor_lab.cuh").read_text(encoding="utf-8")
    assert re.search(r"bool flush = true;\s*bool queue_ahead = true;", kit)
    assert re.search(r"int reps = 20;", kit)
    # ... and the copy ceiling with the first timer, median_ms
    ceiling = kit[kit.index("inline Ceiling copy_ceiling"):]
    assert "float ms = median_ms(copy);" in ceiling[:ceiling.index("\n}\n")]
    para = states("A03", "20", near="(the lab kit's `timed_ms`)", files="5-performance.md")
    assert "the L2 is overwritten before each run" in para and "queued behind a spinning kernel" in para
    assert "(`median_ms`: each run waited for, no flush)" in para


def test_the_chase_ceiling_is_an_l2_hit_of_the_same_chase(recs):
    rec = recs["A03/occupancy/chase_latency/cuda"]
    assert rec["unit"] == rec["ceiling"]["unit"] == "ns"
    assert "L2-hit latency of the same chase" in rec["ceiling"]["name"]
    # a load from HBM is a few L2 hits: below 1.5 the small cycle did not stay in the L2 or the big one did
    assert 1.5 < rec["value"] / rec["ceiling"]["value"] < 4
    para = states("A03", fmt(CHASE_STEPS), near="An L2 hit of the same chase, in the same run, takes",
                  files="5-performance.md")
    assert '{{ ceiling("A03/occupancy/chase_latency/cuda") }}' in para and "median of five launches" in para
    assert "tutor::timed_ms([&] { chase<<<1, 1>>>(chain, steps, cursor); }, {1, 5});" in LAB_CU
    assert "}, {1, 5, /*flush=*/false});" in LAB_CU
    # the cycle of the ceiling: one page's links, one 128-byte line each
    page = int(re.search(r"constexpr unsigned kChasePage = (\d+);", LAB_CU).group(1))
    assert "chase_init<<<(kChasePage + 255) / 256, 256>>>(chain, kChasePage);" in LAB_CU
    assert page * CHASE_SLOT == 2 * KIB * KIB and CHASE_LINKS * CHASE_SLOT == 512 * KIB * KIB
    para = states("A03", fmt(page), near="relinked into a cycle of their own", files="4-labs.md")
    assert f"{page * 128 // (KIB * KIB)} MiB of 128-byte lines" in para and "timed again without a flush" in para


def test_no_low_occupancy_point_beats_full_occupancy(recs):
    # the headline's caveat and section 5's: the fastest of the 19 is the copy at full occupancy
    rates = {n: bw(recs, n) for n, _, _ in VARIANTS}
    assert max(rates, key=rates.get) == "occ100_ilp1"
    headline = (ROOT / "modules/A03-warps-occupancy/module.yml").read_text(encoding="utf-8")
    assert "no low-occupancy point beats the copy at full occupancy, the fastest of the sweep" in headline
    para = states("A03", str(len(VARIANTS)), near="the fastest of all", files="5-performance.md")
    assert "`occ100_ilp1`" in para and "`occ50_ilp8`" in para
    # the ILP-8 kernel's register limit, and its 50% point is slower than full occupancy
    assert rates["occ50_ilp8"] < rates["occ100_ilp1"]
    regs = int(counter(recs, "occupancy", "occ25_ilp8", "launch__registers_per_thread"))
    res = occupancy.hopper("h200", K_THREADS, regs, 0)
    assert f"could run at {pct(res['occupancy'])} ({res['blocks']} blocks" in para


def test_more_warps_win_by_much_more_than_a_few_percent_below_the_crossover(recs):
    # at equal bytes in flight, the most-warps point beats the fewest-warps point by more than 10%
    assert in_flight_kib("occ25_ilp1") == in_flight_kib("occ6_ilp4") == 8
    assert in_flight_kib("occ50_ilp1") == in_flight_kib("occ6_ilp8") == 16
    assert bw(recs, "occ25_ilp1") / bw(recs, "occ6_ilp4") > 1.1
    assert bw(recs, "occ50_ilp1") / bw(recs, "occ6_ilp8") > 1.1
    para = states("A03", "8 KiB", near="more warps still win", files="5-performance.md")
    assert "by much more than a few percent" in para and "16 KiB" in para


def test_past_the_crossover_the_bandwidth_falls(recs):
    best32 = max(bw(recs, n) for n, _, _ in VARIANTS if in_flight_kib(n) == 32)
    beyond = [bw(recs, n) for n, _, _ in VARIANTS if in_flight_kib(n) >= 64]
    assert beyond and max(beyond) < best32
    para = states("A03", "128 KiB", near="it falls a little below the best 32 KiB point", files="5-performance.md")
    assert "64 and 128 KiB" in para


def test_the_latency_column_is_an_upper_bound():
    text = (ROOT / "modules/A03-warps-occupancy/5-performance.md").read_text(encoding="utf-8")
    assert "| time per round of loads, $2 \\cdot 132 \\cdot B / \\text{rate}$ (an upper bound on the latency the loads saw) |" in text
    assert "| latency the loads saw," not in text


def test_achieved_occupancy_is_a_point_or_two_under(recs):
    for name in PROFILED:
        _, ilp, blocks = next(v for v in VARIANTS if v[0] == name)
        theoretical = 100 * blocks * WARPS_PER_BLOCK / MAX_WARPS
        achieved = counter(recs, "occupancy", name, "sm__warps_active.avg.pct_of_peak_sustained_active")
        assert 0 <= theoretical - achieved < 2, name
    states("A03", "a point or two under", near="runs at the occupancy its name says", files="5-performance.md")


def test_the_profiler_register_limits_are_per_sub_partition(recs):
    # ncu's launch__occupancy_limit_registers for the two register counts the lab's kernels have (18, 46)
    for name in PROFILED:
        regs = int(counter(recs, "occupancy", name, "launch__registers_per_thread"))
        limit = int(counter(recs, "occupancy", name, "launch__occupancy_limit_registers"))
        assert limit == blocks_by_registers(K_THREADS, regs), (name, regs, limit)


def test_the_triton_paragraphs_call_the_unmeasured_a_hypothesis(recs):
    both = 2 * recs["A03/divergence/where_lane/triton"]["value"] * 1e9
    para = states("A03", f"{both / 1e12:.1f}", near="twice the useful rate", files="5-performance.md")
    assert "was not examined" in para and "One hypothesis" in para and "ptxas" not in para
    assert "its cause was not measured" in para
    para = states("A03", "4 warps", near="Every Triton configuration is near", files="5-performance.md")
    assert "was not profiled" in para and "hypothesis" in para
    assert "a few percent" not in para


def test_the_analogy_figure_caption_counts_a_round_trip_of_16_ticks():
    t = lh.timeline(1, 15, 48, 1)
    busy = sum(1 for w in t.issue if w >= 0)
    round_trip = 48 // busy
    assert round_trip == 15 + 1
    para = states("A03", str(round_trip), near="round trip of", files="figures.yml")
    assert "requests in flight} / " + str(round_trip) + ")" in para
    for rows, requests in ((4, 1), (1, 4), (16, 1)):
        t = lh.timeline(rows, 15, 48, requests)
        assert sum(1 for w in t.issue if w >= 0) / 48 >= min(1, rows * requests / round_trip) - 1 / 48


def test_cards_state_the_sub_partition_rule_and_hip_conversion():
    states("A03", fmt(REGS_SUB), near="sub-partition", files="cards")
    para = states("A03", str(SIMDS), near="waves per SIMD for the target", files="cards")
    assert "(warpSize x 2)" in para and ") / 32" not in para


# =============================================================================================
# The analogy's second-order effect, the figure's alt text, the CDNA 3 workgroup cap
# =============================================================================================


def test_one_row_with_four_requests_falls_a_little_behind():
    # equal in the figure's 48 ticks ...
    busy48 = {(rows, req): sum(1 for w in lh.timeline(rows, 15, 48, req).issue if w >= 0) for rows, req in ((1, 4), (4, 1))}
    assert busy48[(1, 4)] == busy48[(4, 1)] == 12
    bursts = [i for i, w in enumerate(lh.timeline(1, 15, 48, 4).issue) if w >= 0][::4]
    assert bursts[1] - bursts[0] == 19
    # ... but not over 480: the row waits for the last of its four
    one_row, four_rows = lh.timeline(1, 15, 480, 4).busy, lh.timeline(4, 15, 480, 1).busy
    assert one_row < four_rows
    para = states("A03", f"{100 * one_row:.0f}%", near="falls a little behind", files="1-analogy.md")
    assert f"{100 * four_rows:.0f}%" in para and "12 busy ticks in" in para
    never_states("A03", "exactly as busy", files="1-analogy.md")
    para = states("A03", f"{100 * one_row:.0f}% of 480 ticks", near="falls a little behind", files="figures.yml")
    assert f"against {100 * four_rows:.0f}%" in para
    states("A03", "19 ticks", near="25% of these 48 ticks", files="figures.yml")
    para = states("A03", f"{100 * one_row:.0f}% of 480 ticks", near="was not measured; one hypothesis",
                  files="5-performance.md")
    assert f"{100 * four_rows:.0f}%" in para


def test_the_register_figure_alt_text_names_the_model_steps():
    steps, prev = [], None
    for r in range(1, 257):
        occ = occupancy.hopper("h200", 128, r, 0)["occupancy"]
        if occ != prev:
            steps.append((r, occ))
            prev = occ
    para = states("A03", "56.25% from 49", near="Two step plots of occupancy", files="figures.yml")
    for r, occ in steps[1:5]:
        assert f"{pct(occ)} from {r}" in para, (r, occ)
    assert (169, 0.125) in steps and "12.5% from 169" in para
    assert steps[-1] == (256, 0) and int(spec("h200", "max_regs_per_thread")) == 255 and "255" in para
    mi = occupancy.cdna3("mi300x", 128, 256, 0)
    assert mi["occupancy"] == 0.25 and VGPRS // 256 == 2
    assert "to 25%, two waves per SIMD, at 256" in para
    never_states("A03", "down to one wave per SIMD at 512", files="figures.yml")


def test_the_cdna3_workgroup_cap_does_not_bind_below_full():
    cap = 16  # AMDGPUBaseInfo.cpp getMaxWorkGroupsPerCU: multi-wave workgroups, CU mode
    waves_per_wg = K_THREADS // WAVE
    assert waves_per_wg == 2 and WAVES_SIMD * SIMDS // waves_per_wg == cap
    para = states("A03", f"{WAVES_SIMD * SIMDS} / {waves_per_wg} = {cap}", near="block slots", files="3-silicon.md")
    assert f"{cap} per CU for workgroups of more than one wave" in para


def test_the_amd_register_facts_cite_the_backend_not_the_tool_example():
    # llvm-calc-occupancy's documentation has only a gfx90a example: the register arithmetic cites the backend
    for files in ("2-first-principles.md", "3-silicon.md", "figures.yml"):
        for para in paragraphs("\n\n".join(sources("A03", files).values())):
            if "512" in para or "8 per SIMD" in para or "SIMDs [" in para:
                assert "@llvm-calc-occupancy]" not in para or "`llvm-calc-occupancy`" in para, para[:120]
    states("A03", "512", near="[@a03-llvm-amdgpu-baseinfo] LLVM's code generator for AMD GPUs", files="8-sources.md")


def test_the_mi300x_asks_about_half_the_bytes_per_unit():
    per_cu = spec("mi300x", "hbm_bw") / CUS
    per_sm = spec("h200", "hbm_bw") / SMS
    assert 0.45 < per_cu / per_sm < 0.55
    states("A03", "304 CUs", near="asks about\nhalf the bytes in flight per CU".replace("\n", " "), files="5-performance.md")


# =============================================================================================
# The divergence lab, exercise and solution: its CPU reference does not call the takes_b it checks
# =============================================================================================


def solution_takes_b(split: int, t: int) -> bool:
    # the solution's takes_b, labs/A03/cuda/divergence.cu, line for line
    return {1: (t // 32) % 2 == 1, 2: (t // 64) % 2 == 1, 3: t % 2 == 1}.get(split, False)


@pytest.mark.parametrize("path", ["labs/A03/cuda/divergence_exercise.cu", "labs/A03/hip/divergence_exercise.hip",
                                  "labs/A03/cuda/divergence.cu", "labs/A03/hip/divergence.hip"])
def test_the_divergence_exercise_reference_is_its_own(path):
    src = (ROOT / path).read_text(encoding="utf-8")
    # solution_takes_b is the solutions' takes_b, read from both files for all three splits
    for sol in ("labs/A03/cuda/divergence.cu", "labs/A03/hip/divergence.hip"):
        body = (ROOT / sol).read_text(encoding="utf-8")
        body = body[body.index("inline bool takes_b"):body.index("template <Split S>")]
        rules = dict(re.findall(r"if \(split == k(\w+)\) return (.+?);", body))
        assert set(rules) == {"Warp", "Wave", "Lane"}, (sol, rules)
        for split, name in ((1, "Warp"), (2, "Wave"), (3, "Lane")):
            as_python = rules[name].replace("/", "//")
            assert [eval(as_python, {"t": t}) for t in range(K_THREADS)] == \
                [solution_takes_b(split, t) for t in range(K_THREADS)], (sol, name, rules[name])
    verify = src[src.index("void verify("):src.index("\n}\n", src.index("void verify("))]
    assert "takes_b(" not in verify  # a reference built from the learner's own function checks nothing
    bits = [int(b) for b in re.search(r"const unsigned kRefBit\[\] = \{(\d+)u, (\d+)u, (\d+)u, (\d+)u\};", src).groups()]
    assert "kRefBit[v.split]" in verify
    # the reference's table is the solution's split for every thread of a block ...
    for split in range(4):
        assert [bool(t & bits[split]) for t in range(K_THREADS)] == [solution_takes_b(split, t) for t in range(K_THREADS)]
    # ... so the untouched exercise (takes_b returns false) fails warp_split, wave_split and lane_split,
    # and so do the wrong groups a learner might write: (t / 64) for kWarp, kWarp and kLane swapped
    if "_exercise" in path:
        assert "return false;" in src[src.index("inline bool takes_b"):src.index("template <Split S>")]
    for split in (1, 2, 3):
        assert any(bits[split] & t for t in range(K_THREADS))
    assert [bool(t & bits[1]) for t in range(K_THREADS)] != [solution_takes_b(2, t) for t in range(K_THREADS)]
    assert [bool(t & bits[1]) for t in range(K_THREADS)] != [solution_takes_b(3, t) for t in range(K_THREADS)]


# =============================================================================================
# The players this module derives: their pages state its formula and link here
# =============================================================================================


def test_the_player_pages_state_the_sub_partition_formula_and_link_the_module():
    occ = (ROOT / "docs/players/occupancy.md").read_text(encoding="utf-8")
    assert "4\\,\\lfloor 16384/\\lceil 32R\\rceil_{256}\\rfloor" in occ and "65536/\\lceil" not in occ
    js = (ROOT / "docs/assets/js/players/occupancy.js").read_text(encoding="utf-8")
    assert "var SUB_PARTITIONS = 4;" in js and occupancy.SUB_PARTITIONS == 4 and REGS_SUB == 16384
    assert occupancy.hopper("h200", 96, 40, 0)["blocks"] == 16  # what the player prints for T=96, R=40
    div = (ROOT / "docs/players/divergence.md").read_text(encoding="utf-8")
    for page in (occ, div):
        assert "](../modules/A03-warps-occupancy.md)" in page and "not written yet" not in page.split("## Derived in")[1]


def test_the_hip_sweep_lacks_a_point_cdna3_could_run():
    hip_variants = re.findall(r"TUTOR_VARIANT\((occ\d+_ilp\d+), (\d+), (\d+)\)", LAB_HIP)
    assert len(hip_variants) == len(VARIANTS) == 19 and ("occ100_ilp8", "8", "16") not in hip_variants
    assert VGPRS // WAVES_SIMD == 64 and occupancy.cdna3("mi300x", K_THREADS, 42, 0)["occupancy"] == 1
    para = states("A03", f"{len(VARIANTS)} variants", near="The HIP sweep keeps", files="3-silicon.md")
    assert "`occ100_ilp8`" in para and "64 VGPRs fit at full occupancy" in para and "counts 42" in para


def test_the_cpu_learner_checks_the_request_by_hand():
    para = states("A03", fmt(request(4)), near="gets no check of the CUDA and HIP TODOs", files="4-labs.md")
    assert f"{fmt(lds_request(4))} for 4 workgroups on an MI300X" in para and "4 blocks on an H200" in para
