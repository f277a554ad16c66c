"""Claims of module A02 (memory coalescing): derived here, then read from the module's own text.

Every count the prose derives (sectors and cache lines a warp or wavefront touches, L2 requests of the
naive kernels at the lab's size, banks hit by a tile access with and without padding or an XOR swizzle,
the padding's bytes, bytes in flight, ridge points) is recomputed by enumerating addresses, from the one
hardware table, or from the lab's own source, formatted as the page prints it, and looked up in the
paragraph that states it (tests/claims/prose.py). A change to the prose or to the derivation alone fails.

The second half reads the measurement records of the H200 and checks the relations the prose draws from
them (orderings, bounds, the 90% target, the Triton tuning). The transpose runs on one GPU, so a missing
record is a failure, not a skip.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from prose import never_states, paragraphs, sources, states
from tutor_build.measurements import records
from tutor_build.models import coalescing, hardware

ROOT = Path(__file__).parents[2]
LAB_CU = (ROOT / "labs/A02/cuda/transpose.cu").read_text(encoding="utf-8")
LAB_TRITON = (ROOT / "labs/A02/triton/transpose.py").read_text(encoding="utf-8")

# ---- constants of the method, each from its source ------------------------------------------------
SECTOR = 32  # bytes in an L1/L2 sector (nvidia-nsight-compute-profiling-guide)
LINE = 128  # bytes in an NVIDIA L1/L2 cache line, four sectors (same guide)
MI300_L1_LINE = 128  # bytes in an MI300 vector L1 line, every access one whole line (amd-rocprof-compute-vl1d)
WORD = 4  # bytes per bank word (nvidia-cuda-guide; amd-rocm-blog-lds-bank-conflicts)
FLOAT = 4  # bytes per float32 element
WARP = int(hardware.value("h200", "lanes"))
WAVE = int(hardware.value("mi300x", "lanes"))
BANKS = int(hardware.value("h200", "shared_banks"))
assert BANKS == hardware.value("mi300x", "shared_banks")
# The H200's L2 as the lab's device reports it to the CUDA runtime (cudaDevAttrL2CacheSize, also
# torch.cuda.get_device_properties(0).L2_cache_size), on an NVIDIA H200 with CUDA 13.0. No cited document
# gives the H200's L2 size; the page states it as the device's report.
H200_L2_REPORTED = 62_914_560


def lab_int(pattern: str, text: str = LAB_CU) -> int:
    """An integer the lab source defines, e.g. its benchmark size or a tile constant."""
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return int(found.group(1))


BENCH_M = lab_int(r'arg_int\(args, "--m", (\d+)\)')
BENCH_N = lab_int(r'arg_int\(args, "--n", (\d+)\)')
K_TILE = lab_int(r"constexpr int kTile = (\d+);")
K_ROWS = lab_int(r"constexpr int kRows = (\d+);")
K_BEST = lab_int(r"constexpr int kBest = (\d+);")
K_BEST_X = lab_int(r"constexpr int kBestX = (\d+);")
K_BEST_Y = lab_int(r"constexpr int kBestY = (\d+);")
NAIVE_THREADS = lab_int(r"constexpr int kNaiveY = (\d+) / tutor::kWarpSize;")


def words(n: int) -> str:
    return {2: "two", 3: "three", 4: "four", 8: "eight"}[n]


# =============================================================================================
# Global memory: sectors, lines and requests of one warp or wavefront
# =============================================================================================


def touched(byte_addresses: list[int], elem: int, granule: int) -> int:
    """Distinct aligned `granule`-byte chunks covered by the bytes the lanes access."""
    return len({b // granule for a in byte_addresses for b in range(a, a + elem)})


def lanes(stride: int, base: int = 0, elem: int = FLOAT, width: int = WARP) -> list[int]:
    return [base + lane * stride * elem for lane in range(width)]


def sectors(stride: int, base: int = 0, elem: int = FLOAT) -> int:
    return touched(lanes(stride, base, elem), elem, SECTOR)


def test_enumeration_matches_the_players_model():
    for elem in (1, 2, 4, 8, 16):
        for stride in range(0, 65):
            assert sectors(stride, elem=elem) == coalescing.sectors(stride, elem), (stride, elem)


def test_unit_stride_four_sectors_one_line():
    assert touched(lanes(1), FLOAT, LINE) == 1
    n = sectors(1)
    states("A02", f"= {n}$ sectors, one cache line", near="**Unit stride**")
    states("A02", f"{n} sectors, nothing wasted", near="Memory instructions are issued per warp, and the memory system moves aligned")
    states("A02", f"{n} sectors", near="A warp reads 32 consecutive 4-byte floats", files="cards")


def test_small_strides_touch_four_sectors_per_element_of_stride():
    for s in range(1, 8):
        assert sectors(s) == 4 * s
    states("A02", f"Stride 2 touches {sectors(2)} sectors", near="the example the Best Practices Guide gives")
    states("A02", f"stride 4 touches {sectors(4)}", near="the example the Best Practices Guide gives")
    useful = WARP * FLOAT
    states("A02", f"({useful / (sectors(2) * SECTOR):.0%} efficiency", near="the example the Best Practices Guide gives")


def test_stride_of_eight_or_more_is_32_sectors_factor_8():
    threshold = min(s for s in range(1, 64) if sectors(s) == WARP)
    assert all(sectors(s) == WARP for s in (threshold, 9, 33, 1000, BENCH_M))
    moved, useful = sectors(threshold) * SECTOR, WARP * FLOAT
    factor = sectors(threshold) // sectors(1)
    para = states("A02", f"**{sectors(threshold)} sectors** for the warp", near="**Stride $s \\ge 8$**")
    assert f"$s \\ge {threshold}$" in para
    states("A02", f"= {moved}$ for {useful} useful bytes", near="The moved bytes are then")
    states("A02", f"= {factor}, \\qquad", near="\\text{efficiency}")
    states("A02", f"{useful / moved:.1%}".replace("%", "\\%"), near="\\text{efficiency}")
    states("A02", f"stops growing at stride {threshold}", near="The multiplier stops growing")
    states("A02", f"{moved:,} bytes handled for {useful} used, {factor}x", near="Memory instructions are issued per warp, and the memory system moves aligned")
    states("A02", f"{sectors(threshold)} sectors (each lane in its own sector), {moved:,} bytes", near="stride of 8 or more", files="cards")


def test_misaligned_and_vector_counts():
    misaligned = sectors(1, base=FLOAT)
    states("A02", f"touches {misaligned} sectors instead of {sectors(1)}, a {misaligned / sectors(1) - 1:.0%} tax",
           near="misaligned unit-stride warp")
    vec = touched([lane * 16 for lane in range(WARP)], 16, SECTOR)
    states("A02", f"{WARP * 16} contiguous bytes: {vec} sectors", near="(a `float4`)")


def test_q1_stride_six_floats_and_doubles():
    s = 6
    n = sectors(s)
    states("A02", f"**{n} sectors**", near="Lane $i$ reads bytes $24i")
    states("A02", f"{WARP * FLOAT / (n * SECTOR) * 100:.1f}\\%", near="Lane $i$ reads bytes $24i")
    d = sectors(s, elem=8)
    states("A02", f"{d} sectors, {d * SECTOR} bytes moved for {WARP * 8} useful, {WARP * 8 / (d * SECTOR):.0%}",
           near="With 8-byte elements")


def test_mi300_wavefront_lines():
    unit = touched(lanes(1, width=WAVE), FLOAT, MI300_L1_LINE)
    threshold = min(s for s in range(1, 128) if touched(lanes(s, width=WAVE), FLOAT, MI300_L1_LINE) == WAVE)
    strided = touched(lanes(BENCH_M, width=WAVE), FLOAT, MI300_L1_LINE)
    useful = WAVE * FLOAT
    para = states("A02", f"= {unit}$ lines, both fully used", near="Unit stride from an aligned base")
    assert f"{useful} / {MI300_L1_LINE}" in para
    states("A02", f"with $s \\ge {threshold}$ floats", near="Unit stride from an aligned base")
    states("A02", f"own: {strided} lines", near="Unit stride from an aligned base")
    states("A02", f"{useful / (strided * MI300_L1_LINE):.1%} efficiency", near="Unit stride from an aligned base")
    states("A02", f"a factor of {strided // unit} against unit stride", near="Unit stride from an aligned base")
    states("A02", f"{strided * MI300_L1_LINE:,} bytes of lines for {useful} useful bytes", near="On the MI300X the roof")
    states("A02", f"two lines and a strided one {strided}", near="and the vector L1 line is 128 bytes on the MI300")
    states("A02", f"{useful} bytes = {words(unit)} lines", near="vector L1 cache line on the MI300", files="cards")
    # the silicon table: 128-byte lines, not "no single granule"
    states("A02", f"{MI300_L1_LINE}-byte vector L1 line on MI300", near="| global-memory granule |")
    never_states("A02", "no single granule")


def test_naive_kernels_l2_requests_and_sectors_at_the_lab_size():
    """One L2 request per 128-byte line a warp instruction touches, carrying that line's sectors."""
    elements = BENCH_M * BENCH_N
    assert NAIVE_THREADS == 256 and NAIVE_THREADS % WARP == 0
    warp_instructions = elements // WARP
    coalesced = lanes(1)
    strided = lanes(BENCH_M)  # naive_row's store out[j][i]: lanes take consecutive j, M floats apart
    req_coalesced, req_strided = touched(coalesced, FLOAT, LINE), touched(strided, FLOAT, LINE)
    sec_coalesced, sec_strided = touched(coalesced, FLOAT, SECTOR), touched(strided, FLOAT, SECTOR)
    row_requests, row_sectors = warp_instructions * req_strided, warp_instructions * sec_strided
    col_requests, col_sectors = warp_instructions * req_coalesced, warp_instructions * sec_coalesced
    near = "Count it for the lab's size"
    para = states("A02", f"$2^{{{elements.bit_length() - 1}}}$ elements", near=near)
    assert 1 << (elements.bit_length() - 1) == elements
    states("A02", f"= {warp_instructions:,} warp instructions", near=near)
    states("A02", f"{col_requests:,} write requests carrying {col_sectors:,} sectors", near=near)
    states("A02", f"sends {row_requests:,}", near=near)
    states("A02", f"carrying {row_sectors:,} sectors", near=near)
    rq, sc = row_requests // col_requests, row_sectors // col_sectors
    states("A02", f"{rq} times the write requests and {sc} times the write", near=near)
    states("A02", f"becomes {req_strided} L2 write requests", near="strided *write* side")
    states("A02", f"{rq} times the write requests and {sc} times the write sectors", near="the 8 warps of a block touch the 8 floats")
    states("A02", f"{row_requests:,} write requests for `naive_row` against {col_requests:,}", near="the 8 warps of a block touch the 8 floats")
    states("A02", f"{rq} times the write requests and {sc} times the write sectors", near="strided writes", files="cards")
    assert "lts__t_requests_srcunit_tex_op_write" in para
    for files in ("*.md", "cards"):
        never_states("A02", "8 times the write requests", files=files)
        never_states("A02", "8x in requests", files=files)


# =============================================================================================
# Shared memory / LDS: banks hit by a tile access
# =============================================================================================


def bank(word: int) -> int:
    return word % BANKS


def degree(word_indices) -> int:
    """Largest number of distinct words one bank must serve (1 = conflict-free; broadcasts merged)."""
    return max(Counter(bank(w) for w in set(word_indices)).values())


def word(r: int, c: int, pitch: int) -> int:
    return r * pitch + c


def swizzled(r: int, c: int) -> int:
    return r * K_TILE + (c ^ r)


def column(c: int, pitch: int) -> list[int]:
    return [word(r, c, pitch) for r in range(K_TILE)]


def test_enumeration_matches_the_players_bank_model():
    for pad in range(0, 9):
        assert degree(column(0, K_TILE + pad)) == coalescing.conflict_degree(K_TILE, pad, FLOAT)


def test_unpadded_column_read_is_a_32_way_conflict():
    assert all(degree([word(r, c, K_TILE) for c in range(K_TILE)]) == 1 for r in range(K_TILE))
    assert all({bank(w) for w in column(c, K_TILE)} == {c} for c in range(K_TILE))
    d = degree(column(5, K_TILE))
    states("A02", f"a **{d}-way conflict**, {d} serialized passes", near="**Unpadded, $P = 32$.**")
    states("A02", f"a {d}-way conflict", near="In float tile[32][32]", files="cards")
    states("A02", f"a {d}-way conflict", near="Shared memory has 32 four-byte banks, and word")


def test_padded_and_swizzled_tiles_are_conflict_free_both_phases():
    pitch = K_TILE + 1
    for r in range(K_TILE):
        for c in range(K_TILE):
            assert bank(word(r, c, pitch)) == (r + c) % BANKS
    assert all(degree(column(c, pitch)) == 1 for c in range(K_TILE))
    assert all(degree([word(r, c, pitch) for c in range(K_TILE)]) == 1 for r in range(K_TILE))
    # the swizzle: a permutation of each row, conflict-free rows and columns
    for r in range(K_TILE):
        assert sorted(swizzled(r, c) - r * K_TILE for c in range(K_TILE)) == list(range(K_TILE))
        assert degree([swizzled(r, c) for c in range(K_TILE)]) == 1
    assert all(degree([swizzled(r, c) for r in range(K_TILE)]) == 1 for c in range(K_TILE))
    states("A02", f"\\equiv {pitch % BANKS} \\pmod{{{BANKS}}}", near="**Padded, $P = 33$.**")
    states("A02", "bank} = c \\oplus r", near="Physical word: $32r + (c \\oplus r)$")


def test_q3_which_pitches_work():
    deg = {p: degree(column(0, p)) for p in range(K_TILE, 41)}
    free = [p for p, d in deg.items() if d == 1]
    para = states("A02", "$P = " + ", ".join(map(str, free)) + "$ are", near="For a fixed column the banks are $rP")
    for p in (34, 36):
        assert f"**{deg[p]}-way**" in para, p
    states("A02", f"give {deg[32]}-way and {deg[40]}-way", near="For a fixed column the banks are $rP")
    assert min(free) == K_TILE + 1


def test_padding_costs_128_bytes_and_breaks_16_byte_rows():
    plain, padded = K_TILE * K_TILE * WORD, K_TILE * (K_TILE + 1) * WORD
    extra = padded - plain
    states("A02", f"{extra / plain:.1%} more", near="The padded tile is $32 \\times 33")
    states("A02", f"{extra} bytes,", near="The padded tile is $32 \\times 33")
    states("A02", f"{plain:,} bytes instead of {padded:,}", near="The physical word is $32r")
    states("A02", f"{padded:,} instead of {plain:,} bytes (+{extra}", near="padding a 32 x 32 float tile", files="cards")
    assert (K_TILE + 1) * WORD % 16 != 0 and K_TILE * WORD % 16 == 0
    states("A02", f"{(K_TILE + 1) * WORD}-byte pitch breaks 16-byte alignment", near="Shared memory has 32 four-byte banks, and word")


def test_wavefront_column_read_bounds():
    """A 64-lane wavefront of a 32 x 8 block holds two values of threadIdx.y: two tile columns."""
    floor = WAVE * WORD // (BANKS * WORD)
    assert (K_TILE * K_ROWS) // WAVE == 4 and WAVE // K_TILE == 2

    def wave(word_of):
        ty = 4
        return [word_of(tx, ty + lane // K_TILE) for lane, tx in zip(range(WAVE), list(range(K_TILE)) * 2)]

    unpadded = degree(wave(lambda r, c: word(r, c, K_TILE)))
    padded = degree(wave(lambda r, c: word(r, c, K_TILE + 1)))
    assert degree(wave(swizzled)) == padded == floor
    states("A02", f"at least **{unpadded} cycles**", near="Unpadded $\\text{tile}[32][32]$")
    states("A02", f"**{padded} cycles**, the floor", near="Padded $\\text{tile}[32][33]$")
    states("A02", f"at least {unpadded} cycles", near="The LDS has 32 banks of 4 bytes, 128 bytes per cycle")
    states("A02", f"bound falls to {padded}", near="The LDS has 32 banks of 4 bytes, 128 bytes per cycle")
    states("A02", f"{words(floor)} cycles", near="Why does a conflict-free 4-byte LDS access", files="cards")


def test_best_tile_conflict_free_in_both_phases():
    pitch = K_BEST + 1
    assert K_BEST_X * K_BEST_Y == 256
    for ty0 in range(0, K_BEST_Y, 4):
        for b in range(K_BEST // 4 // K_BEST_X):
            for q in range(4):
                store = [word(ty0 + dy, 4 * (tx + K_BEST_X * b) + q, pitch) for dy in range(4) for tx in range(K_BEST_X)]
                load = [word(4 * (tx + K_BEST_X * b) + q, ty0 + dy, pitch) for dy in range(4) for tx in range(K_BEST_X)]
                assert degree(store) == 1 and degree(load) == 1


def test_best_tile_occupancy_and_lds_arithmetic():
    tile = K_BEST * (K_BEST + 1) * WORD
    per_sm = int(hardware.value("h200", "max_warps_per_unit") * WARP)
    blocks = per_sm // (K_BEST_X * K_BEST_Y)
    states("A02", f"{words(blocks)} 256-thread blocks", near="In this lab neither limits occupancy")
    states("A02", f"at most {blocks * tile / 1000:.0f} KB", near="In this lab neither limits occupancy")
    states("A02", f"{hardware.value('h200', 'shared_per_unit') / 1024:.0f} KB", near="In this lab neither limits occupancy")
    lds_blocks = int(hardware.value("mi300x", "shared_per_unit")) // tile
    states("A02", f"at most {words(lds_blocks)} resident blocks per CU", near="In this lab neither limits occupancy")


# =============================================================================================
# Arithmetic of sections 2, 5 and 9 from the hardware table and the lab's size
# =============================================================================================


def test_littles_law_bytes_in_flight():
    bw, sms = hardware.value("h200", "hbm_bw"), hardware.value("h200", "units")
    per_100ns = bw * 100e-9
    states("A02", f"= {per_100ns / 1e3:.0f}\\ \\text{{KB per }} 100", near="ns of latency")
    states("A02", f"about {per_100ns / sms / 1e3:.1f} KB per SM per 100 ns on {sms:.0f} SMs", near="(the H100 SXM5 count")
    (q9,) = sources("A02", "9-self-assessment.md").values()
    q6 = next(p for p in paragraphs(q9) if "Suppose the loaded memory latency is" in p)
    latency = float(re.search(r"latency is (\d+) ns", q6).group(1)) * 1e-9
    total = bw * latency
    para = states("A02", f"= {total / 1e6:.2f}$ MB across the GPU", near="MB across the GPU, about")
    assert f"**{total / sms / 1e3:.1f} KB per SM**" in para
    threads = int(hardware.value("h200", "max_warps_per_unit") * WARP)
    assert f"${threads} \\times 16 = {threads * 16 // 1024}$ KB" in para
    assert f"up to {threads * 64 // 1024} KB per SM" in para


def test_ridge_points_from_the_hardware_table():
    for dev, near in (("h200", "| H200 |"), ("mi300x", "| MI300X |")):
        peak, bw = hardware.peak(dev, "fp32"), hardware.value(dev, "hbm_bw")
        para = states("A02", f"\\approx {peak / bw:.0f}$ FLOP/byte", near=near)
        assert f"{peak / 1e12:g} TFLOP/s" in para and f"{bw / 1e12:g} TB/s" in para
    states("A02", f"{hardware.peak('h200', 'fp32') / hardware.value('h200', 'hbm_bw'):.0f} FLOP/byte) and MI300X "
           f"(about {hardware.peak('mi300x', 'fp32') / hardware.value('mi300x', 'hbm_bw'):.0f}",
           near="Bytes, FLOPs and arithmetic intensity", files="cards")


def test_transpose_bytes_ideal_time_and_l2_ratio():
    assert BENCH_M == BENCH_N
    n = BENCH_M
    traffic = 2 * FLOAT * n * n
    assert traffic == 1 << 31
    near = "For the benchmark size $n = 16384$"
    states("A02", f"$n = {n}$", near=near)
    states("A02", f"{traffic / 1e9:.2f} GB per transpose", near=near)
    states("A02", f"reports {H200_L2_REPORTED:,} bytes ({H200_L2_REPORTED / 2**20:.0f} MiB)", near=near)
    states("A02", f"about {traffic / H200_L2_REPORTED:.0f} times that L2", near=near)
    states("A02", f"about {traffic / 2 / H200_L2_REPORTED:.0f} times", near=near)
    states("A02", f"{H200_L2_REPORTED:,} bytes ({H200_L2_REPORTED / 2**20:.0f} MiB)", near="| last-level caches |")
    never_states("A02", "more than 40")
    ideal_ms = traffic / hardware.value("h200", "hbm_bw") * 1e3
    states("A02", f"{ideal_ms:.2f}$ ms", near="Its ideal time is")


def test_the_unrecorded_reference_figures_and_claims_are_gone():
    for text in ("3,400", "700 GB/s", "4.8x", "measured faster"):
        never_states("A02", text)
    for path in ("labs/A02/cuda/transpose.cu", "labs/A02/hip/transpose.hip", "labs/A02/hints/transpose.yml"):
        assert "measured faster" not in (ROOT / path).read_text(encoding="utf-8")
        assert "measured speed choice" not in (ROOT / path).read_text(encoding="utf-8")


def test_lab_steps_ask_for_what_the_exercise_asks():
    exercise = (ROOT / "labs/A02/cuda/transpose_exercise.cu").read_text(encoding="utf-8")
    todos = sorted({int(t) for t in re.findall(r"TODO (\d+):", exercise)})
    assert todos == list(range(1, 8))
    assert "write the five kernels" in exercise
    (text,) = sources("A02", "4-labs.md").values()
    assert "**Read the two naive kernels**" not in text
    states("A02", "**Write the two naive kernels** (`TODO 1` and `TODO 2`)", near="Write the two naive kernels")
    states("A02", "all five kernels", near="the driver (`launch`, the check")


# =============================================================================================
# Measurement records (NVIDIA H200): every one exists, and the prose's relations hold
# =============================================================================================

CUDA = ["naive_row", "naive_col", "tiled", "tiled_padded", "best"]


def triton_candidates() -> list[str]:
    """The Triton tuning candidates as the lab records them, read from its CANDIDATES list."""
    block = re.search(r"CANDIDATES = \[(.*?)\]\n", LAB_TRITON, re.S).group(1)
    shapes = re.findall(r"dict\(BM=(\d+), BN=(\d+), num_warps=(\d+)\)", block)
    assert len(shapes) == 6
    return [f"shape_{bm}x{bn}_w{w}" for bm, bn, w in shapes]


class Records(dict):
    """The course records; a missing A02 record fails the test that needs it, with what to run."""

    def __missing__(self, key: str):
        raise AssertionError(f"no record for {key}: run `tutor labs bench A02 --course` on the H200")


@pytest.fixture(scope="module")
def recs() -> Records:
    return Records(records(ROOT))


def value(recs: dict, variant: str, vendor: str = "cuda") -> float:
    return recs[f"A02/transpose/{variant}/{vendor}"]["value"]


def test_every_record_of_the_ladder_exists(recs):
    for v in CUDA:
        assert recs[f"A02/transpose/{v}/cuda"]
    for v in ["simple", "best", *triton_candidates()]:
        assert recs[f"A02/transpose/{v}/triton"]


def test_every_record_below_its_ceiling(recs):
    for key, rec in recs.items():
        if key.startswith("A02/transpose/") and rec.get("kind") != "counter":  # counters have no ceiling
            assert rec["unit"] == rec["ceiling"]["unit"] == "GB/s"
            assert rec["value"] <= 1.05 * rec["ceiling"]["value"], f"{key} exceeds its ceiling by more than 5%"


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_best_reaches_ninety_percent_of_copy(recs, vendor):
    rec = recs[f"A02/transpose/best/{vendor}"]
    states("A02", "at least 90% of the copy", near="The target is at least 90%")
    assert rec["value"] >= 0.9 * rec["ceiling"]["value"], f"{vendor} best: {rec['value']} of {rec['ceiling']}"


def test_ladder_ordering_the_prose_relies_on(recs):
    v = {name: value(recs, name) for name in CUDA}
    assert v["naive_col"] > 2 * v["naive_row"], "section 5: strided reads are several times faster"
    assert v["tiled_padded"] > 1.5 * v["tiled"], "section 5: the pad is worth a large step"
    assert v["best"] > v["tiled_padded"] > v["tiled"]
    assert 0.8 < v["tiled"] / v["naive_col"] < 1.25, "section 5: tiled lands at about naive_col's bandwidth"


def test_naive_row_loss_lies_between_the_sector_and_the_request_factors(recs):
    row, col = recs["A02/transpose/naive_row/cuda"], recs["A02/transpose/naive_col/cuda"]
    loss = row["ceiling"]["value"] / row["value"]
    sector_factor = sectors(BENCH_M) // sectors(1)
    request_factor = touched(lanes(BENCH_M), FLOAT, LINE) // touched(lanes(1), FLOAT, LINE)
    assert sector_factor < loss < request_factor / 2, f"copy / naive_row = {loss:.1f}"
    states("A02", f"more than {sector_factor} and far less than {request_factor}", near="The measured loss of `naive_row`")
    states("A02", "less than one eighth of the copy", near="pay that factor very differently")
    assert col["value"] > col["ceiling"]["value"] / sector_factor, "section 5: naive_col loses much less than 8x"


def test_triton_simple_beats_cuda_tiled_padded(recs):
    share = lambda r: r["value"] / r["ceiling"]["value"]  # noqa: E731
    assert share(recs["A02/transpose/simple/triton"]) > share(recs["A02/transpose/tiled_padded/cuda"])


def test_triton_best_is_the_fastest_candidate_timed_again(recs):
    shapes = {s: value(recs, s, "triton") for s in triton_candidates()}
    best = value(recs, "best", "triton")
    run = {recs[f"A02/transpose/{s}/triton"]["date"] for s in shapes} | {recs["A02/transpose/best/triton"]["date"]}
    assert len(run) == 1, "the candidates and best come from one run"
    assert 0.95 * max(shapes.values()) <= best <= 1.05 * max(shapes.values()), (best, shapes)
    assert best >= value(recs, "simple", "triton") * 0.97
    states("A02", "fastest of these rows (64 x 64 with 8 warps in this run) timed once", near="The `best` row of the ladder")
    for s in shapes:
        states("A02", f'measured("A02/transpose/{s}/triton")', near="| Triton candidate: tile, warps |")


def test_every_triton_best_candidate_is_correct():
    """`best` is the fastest of the candidates, chosen at bench time: each must be correct, on sizes that are
    not multiples of any tile, through the Triton interpreter on the CPU."""
    import os
    import subprocess
    import sys

    script = """
import importlib.util, sys, torch
sys.path.insert(0, "labs/common/python")
spec = importlib.util.spec_from_file_location("transpose_lab", "labs/A02/triton/transpose.py")
lab = importlib.util.module_from_spec(spec); spec.loader.exec_module(lab)
for cfg in lab.CANDIDATES:
    lab.CONFIGS["best"] = cfg
    for m, n in ((33, 65), (130, 257)):
        x = torch.rand(m, n)
        y = torch.full((n, m), float("nan"))
        lab.transpose(x, y, "best")
        assert torch.equal(y, x.t()), (cfg, m, n)
print(len(lab.CANDIDATES), "candidates correct")
"""
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(triton_candidates())} candidates correct" in done.stdout


def test_profiler_counters_match_the_derived_l2_traffic(recs):
    """The Nsight Compute records of labs/A02/profile.yml: the write side and the coalesced reads equal the
    count derived from the lab's size; the strided reads reach the L2 once per sector (the L1 absorbs the
    factor), as the page says."""
    def counter(kernel, what, rw):
        return recs[f"A02/transpose/{kernel}.lts__t_{what}_srcunit_tex_op_{rw}.sum/cuda"]["value"]

    elements = BENCH_M * BENCH_N
    warp_instructions = elements // WARP
    sectors = elements * FLOAT // SECTOR  # every sector of the matrix once
    assert counter("naive_row", "requests", "write") == elements  # 32 one-sector requests per warp store
    assert counter("naive_row", "sectors", "write") == elements
    assert counter("naive_col", "requests", "write") == warp_instructions
    assert counter("naive_col", "sectors", "write") == sectors
    assert counter("naive_row", "requests", "read") == warp_instructions
    assert counter("naive_row", "sectors", "read") == sectors
    assert counter("naive_col", "requests", "read") == sectors == counter("naive_col", "sectors", "read")
    para = states("A02", f"$2^{{{elements.bit_length() - 1}}}$ read requests", near="with no reuse the L2")
    assert f"$2^{{{sectors.bit_length() - 1}}}$" in para and "7 warps" in para
    assert NAIVE_THREADS // WARP - 1 == 7


def test_the_named_fastest_and_slowest_triton_candidates_are_the_records(recs):
    """The page names the fastest and the slowest tuning candidate of the run: a re-bench that changes the
    order fails here until the prose follows."""
    shapes = {k.split("/")[2]: r["value"] for k, r in recs.items()
              if k.startswith("A02/transpose/shape_") and k.endswith("/triton")}
    assert len(shapes) == 6
    fastest, slowest = max(shapes, key=shapes.get), min(shapes, key=shapes.get)
    para = states("A02", "64 x 64 with 8 warps in this run", near="timed once")
    assert fastest == "shape_64x64_w8" and f'share("A02/transpose/best/triton", "A02/transpose/{fastest}/triton")' in para
    assert slowest == "shape_32x128_w4" and "slowest candidate (32 x 128, 4 warps)" in para
    best = recs["A02/transpose/best/triton"]["value"]
    assert best < shapes[fastest]  # "came out at ... of that candidate's first timing": below it, this run
    assert sum(v > best for v in shapes.values()) >= 4  # "slower than most of the candidates"


def test_profiler_counts_the_bank_conflict_passes(recs):
    """Shared-memory load instructions and the passes (wavefronts) they took, from labs/A02/profile.yml: the
    same 2^23 warp loads in both tiled kernels, about 32 passes each in `tiled`, about 1 in `tiled_padded`."""
    def counter(kernel, metric):
        return recs[f"A02/transpose/{kernel}.{metric}/cuda"]["value"]

    loads, passes = "smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    warp_loads = BENCH_M * BENCH_N // WARP
    assert counter("tiled", loads) == counter("tiled_padded", loads) == warp_loads
    per_tiled, per_padded = counter("tiled", passes) / warp_loads, counter("tiled_padded", passes) / warp_loads
    assert BANKS <= per_tiled < 1.05 * BANKS and 1 <= per_padded < 1.2
    para = states("A02", f"took {per_tiled:.1f} passes each", near="Both kernels issue the same")
    assert f"the {BANKS} the derivation predicts" in para and f"took {per_padded:.2f}." in para
    assert f"$2^{{{(BENCH_M * BENCH_N).bit_length() - 1}}} / {WARP} = 2^{{{warp_loads.bit_length() - 1}}}$" in para


def test_bank_conflict_counter_is_every_extra_pass_and_the_residues_are_stated(recs):
    """The "bank conflicts" counter equals wavefronts minus instructions in both kernels: every pass beyond the
    first, whatever its cause. The conflict-free row stores take extra passes too; the page reports them (the
    store instructions are the same 2^23 as the loads: one store into the tile per element) and calls the
    residues unexplained."""
    def counter(kernel, metric):
        return recs[f"A02/transpose/{kernel}.{metric}/cuda"]["value"]

    inst, ld, st = ("smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    warp_ops = BENCH_M * BENCH_N // WARP
    for kernel in ("tiled", "tiled_padded"):
        assert counter(kernel, conflicts) == counter(kernel, ld) - counter(kernel, inst), kernel
    para = states("A02", "wavefronts", near='The "bank conflicts" column is not a separate count')
    assert "minus the instructions, exactly" in para and "every pass beyond the first" in para
    st_tiled, st_padded = counter("tiled", st) / warp_ops, counter("tiled_padded", st) / warp_ops
    assert 1 < st_tiled < 1.1 and 1 < st_padded < 1.1
    para = states("A02", f"{st_tiled:.3f}", near="Those of `tiled` took 1.0")
    assert f"`tiled_padded` {st_padded:.3f}." in para
    residue = counter("tiled_padded", ld) / warp_ops - 1
    assert f"about one extra pass in {1 / residue:.1f}" in para
    above = counter("tiled", ld) / warp_ops - BANKS
    assert f"the {above:.2f} passes of `tiled` above its {BANKS}" in para and "unexplained" in para
    fold = counter("tiled", ld) / counter("tiled_padded", ld)
    para = states("A02", f"{fold:.1f}-fold", near="Padding cut the load wavefronts")
    assert f"not the {BANKS}-fold of the derivation" in para
    states("A02", f"{above:.2f} more", near="Both kernels issue the same")
    never_states("A02", "The 32-fold difference is the mechanism")
    never_states("A02", "one extra pass in nine")


def test_triton_shape_spread_is_within_the_timing_resolution(recs):
    """Two timings of the winning shape differ by about as much as the shapes do: "of the same order", not
    "as large as"; the winner was the first candidate timed (CANDIDATES order)."""
    shapes = {k.split("/")[2]: r["value"] for k, r in recs.items()
              if k.startswith("A02/transpose/shape_") and k.endswith("/triton")}
    best, fastest = recs["A02/transpose/best/triton"]["value"], max(shapes.values())
    repeat, spread = fastest - best, fastest - min(shapes.values())
    assert 0 < repeat < spread < 3 * repeat, "the page: the same order"
    src = (ROOT / "labs/A02/triton/transpose.py").read_text(encoding="utf-8")
    first = re.search(r"CANDIDATES = \[dict\(BM=(\d+), BN=(\d+), num_warps=(\d+)\)", src).groups()
    assert max(shapes, key=shapes.get) == "shape_{}x{}_w{}".format(*first)
    para = states("A02", "same order", near="The difference between two timings of one kernel")
    assert "the winner was the first candidate timed" in para and "Python launch path" in para
    never_states("A02", "is as large as the spread between the shapes")
