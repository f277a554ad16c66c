"""Claims of module A02 (memory coalescing), checked by enumeration and against the records.

The first half re-derives, by enumerating addresses, every count the module's prose states:
sectors touched by a warp request, banks hit by a column read of a shared-memory tile, with and
without padding and with an XOR swizzle. The second half reads the measurement records and checks
the ordering and ceilings the prose relies on; it skips, with a reason, when no record exists yet.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

SECTOR = 32  # bytes in an L1/L2 sector (Nsight Compute profiling guide)
LINE = 128  # bytes in an L1/L2 cache line: four sectors
WARP = 32  # lanes in an NVIDIA warp
WAVE = 64  # lanes in a CDNA 3 wavefront
BANKS = 32  # shared-memory banks (NVIDIA) and LDS banks (CDNA 3)
WORD = 4  # bytes per bank word


# --------------------------------------------------------------------------------------------
# Global memory: sectors per warp request
# --------------------------------------------------------------------------------------------


def sectors_touched(byte_addresses: list[int], elem_bytes: int = 4) -> int:
    """Distinct 32-byte sectors covered by the bytes the lanes access."""
    sectors = set()
    for a in byte_addresses:
        for b in range(a, a + elem_bytes):
            sectors.add(b // SECTOR)
    return len(sectors)


def lines_touched(byte_addresses: list[int], elem_bytes: int = 4) -> int:
    lines = set()
    for a in byte_addresses:
        for b in range(a, a + elem_bytes):
            lines.add(b // LINE)
    return len(lines)


def warp_addresses(stride_elems: int, base: int = 0, elem_bytes: int = 4) -> list[int]:
    return [base + lane * stride_elems * elem_bytes for lane in range(WARP)]


def test_unit_stride_warp_touches_four_sectors_one_line():
    addrs = warp_addresses(1)
    assert sectors_touched(addrs) == 4
    assert lines_touched(addrs) == 1
    # 128 useful bytes, 128 bytes moved: 100 % sector efficiency
    assert sectors_touched(addrs) * SECTOR == WARP * 4


def test_misaligned_unit_stride_touches_five_sectors():
    # a base offset of one element shifts the 128 bytes across a sector boundary
    assert sectors_touched(warp_addresses(1, base=4)) == 5


@pytest.mark.parametrize("stride", [8, 9, 16, 32, 33, 1000, 4096])
def test_stride_of_eight_or_more_touches_32_sectors(stride):
    addrs = warp_addresses(stride)
    assert sectors_touched(addrs) == 32
    useful, moved = WARP * 4, sectors_touched(addrs) * SECTOR
    assert moved == 1024
    assert moved / useful == 8  # the factor the module derives: 32 sectors vs 4
    assert useful / moved == pytest.approx(0.125)


@pytest.mark.parametrize("stride,expected", [(1, 4), (2, 8), (4, 16), (8, 32)])
def test_small_strides_scale_sectors_as_four_times_stride(stride, expected):
    assert sectors_touched(warp_addresses(stride)) == expected


def test_sector_count_formula_matches_enumeration():
    for stride in range(1, 70):
        formula = min(WARP, 4 * stride) if stride <= 8 else WARP
        # 4-byte elements, aligned base: the formula of the first-principles section
        assert sectors_touched(warp_addresses(stride)) == formula, stride


def test_sixteen_byte_vectors_cover_512_bytes_in_16_sectors():
    # 32 lanes x 16-byte loads, contiguous: 512 bytes, 16 sectors, 4 lines, nothing wasted
    addrs = [lane * 16 for lane in range(WARP)]
    assert sectors_touched(addrs, elem_bytes=16) == 16
    assert lines_touched(addrs, elem_bytes=16) == 4


# --------------------------------------------------------------------------------------------
# Shared memory / LDS: banks hit by a tile access
# --------------------------------------------------------------------------------------------


def bank(word_index: int) -> int:
    return word_index % BANKS


def conflict_degree(word_indices: list[int]) -> int:
    """Largest number of *distinct* words that one bank must serve (1 = conflict-free).

    Lanes reading the same word are served by one broadcast, so words are deduplicated first.
    """
    per_bank = Counter(bank(w) for w in set(word_indices))
    return max(per_bank.values())


def tile_word(r: int, c: int, pitch: int) -> int:
    """Word offset of tile[r][c] in a row-major tile whose rows are `pitch` words apart."""
    return r * pitch + c


def test_row_access_of_32x32_tile_is_conflict_free():
    for r in range(32):
        words = [tile_word(r, c, 32) for c in range(32)]
        assert conflict_degree(words) == 1


def test_column_read_of_32x32_tile_is_a_32_way_conflict():
    for c in range(32):
        words = [tile_word(r, c, 32) for r in range(32)]
        assert {bank(w) for w in words} == {c}
        assert conflict_degree(words) == 32


def test_padded_tile_bank_is_r_plus_c_mod_32():
    for r in range(32):
        for c in range(32):
            assert bank(tile_word(r, c, 33)) == (r + c) % 32 == (r * 33 + c) % 32


def test_column_read_of_32x33_tile_is_conflict_free():
    for c in range(32):
        words = [tile_word(r, c, 33) for r in range(32)]
        assert sorted(bank(w) for w in words) == list(range(32))
        assert conflict_degree(words) == 1


def test_row_write_of_32x33_tile_is_conflict_free():
    for r in range(32):
        assert conflict_degree([tile_word(r, c, 33) for c in range(32)]) == 1


def swizzled_word(r: int, c: int) -> int:
    """XOR swizzle: logical tile[r][c] lives at physical column c ^ r of an unpadded 32x32 tile."""
    return r * 32 + (c ^ r)


def test_xor_swizzle_is_a_permutation_of_each_row():
    for r in range(32):
        assert sorted(swizzled_word(r, c) - r * 32 for c in range(32)) == list(range(32))


def test_xor_swizzle_column_read_and_row_write_are_conflict_free():
    for c in range(32):
        words = [swizzled_word(r, c) for r in range(32)]
        assert sorted(bank(w) for w in words) == list(range(32))
    for r in range(32):
        assert conflict_degree([swizzled_word(r, c) for c in range(32)]) == 1


def test_xor_swizzle_uses_no_extra_memory_padding_uses_128_bytes():
    swizzled_bytes = 32 * 32 * WORD
    padded_bytes = 32 * 33 * WORD
    assert swizzled_bytes == 4096
    assert padded_bytes == 4224
    assert padded_bytes - swizzled_bytes == 128
    assert (padded_bytes - swizzled_bytes) / swizzled_bytes == pytest.approx(0.03125)


def test_padded_rows_break_16_byte_alignment_swizzled_rows_keep_it():
    # row starts of tile[32][33] are 132 bytes apart: not a multiple of 16, so a float4 that
    # starts a row cannot be 16-byte aligned in every row; the unpadded tile keeps 128-byte rows
    assert (33 * WORD) % 16 != 0
    assert (32 * WORD) % 16 == 0


def test_wavefront_column_read_lower_bound_on_lds_cycles():
    """A 64-lane wavefront of the lab's 32x8 thread block covers two tile columns (ty and ty+1).

    With 32 banks each serving one 4-byte word per cycle, 256 bytes need at least 2 cycles; the
    bound is max words per bank. Unpadded: 32. Padded or swizzled: 2, the floor. It is a lower
    bound only: which lanes share a cycle for 4-byte accesses is not stated by the cited sources.
    """
    def wave_words(word_of):
        ty = 4  # any even row of threads: lanes 0-31 have ty, lanes 32-63 have ty + 1
        return [word_of(tx, ty + lane // 32) for lane, tx in zip(range(WAVE), list(range(32)) * 2)]

    assert WAVE * WORD // (BANKS * WORD) == 2  # 256 B at 128 B per cycle
    assert conflict_degree(wave_words(lambda r, c: tile_word(r, c, 32))) == 32
    assert conflict_degree(wave_words(lambda r, c: tile_word(r, c, 33))) == 2
    assert conflict_degree(wave_words(swizzled_word)) == 2


# --------------------------------------------------------------------------------------------
# Arithmetic of the performance section
# --------------------------------------------------------------------------------------------


def test_transpose_moves_eight_bytes_per_element_and_does_no_flops():
    n = 8192
    bytes_moved = 2 * n * n * 4
    assert bytes_moved / (n * n) == 8
    flops = 0
    assert flops / bytes_moved == 0


def test_ridge_points_from_datasheet_numbers():
    h200 = 67e12 / 4.8e12  # FP32 FLOP/s over HBM bytes/s
    mi300x = 163.4e12 / 5.3e12
    assert h200 == pytest.approx(13.96, abs=0.01)
    assert mi300x == pytest.approx(30.83, abs=0.01)


def test_lab_block_shape_forms_four_wavefronts_each_two_tile_rows_of_threads():
    # the tiled kernels run 32 x 8 blocks: 256 threads, 8 warps of 32 or 4 wavefronts of 64
    threads = 32 * 8
    assert threads // WARP == 8
    assert threads // WAVE == 4
    assert WAVE // 32 == 2  # a wavefront holds two consecutive threadIdx.y values


def test_padded_even_split_reaches_the_floor_only_with_halves_served_separately():
    # pitch 33: lanes 0-31 (column c) and lanes 32-63 (column c + 1) each cover all 32 banks once
    c = 4
    first = [tile_word(r, c, 33) for r in range(32)]
    second = [tile_word(r, c + 1, 33) for r in range(32)]
    assert conflict_degree(first) == 1 and conflict_degree(second) == 1
    # a grouping that mixed the halves (lanes 0-15 with 32-47) would not be conflict-free
    mixed = first[:16] + second[:16]
    assert conflict_degree(mixed) == 2


def test_best_tile_bank_mapping_is_conflict_free_in_both_phases():
    # best: pitch 65, block 8 x 32; a warp is 4 consecutive ty x 8 tx
    pitch = 65
    for ty0 in range(0, 32, 4):
        for b in range(2):
            for q in range(4):
                # shared store: tile[ty][4 * (tx + 8b) + q]
                store = [tile_word(ty0 + dy, 4 * (tx + 8 * b) + q, pitch) for dy in range(4) for tx in range(8)]
                assert conflict_degree(store) == 1
                # shared load in the write phase: tile[4 * (tx + 8b) + q][ty]
                load = [tile_word(4 * (tx + 8 * b) + q, ty0 + dy, pitch) for dy in range(4) for tx in range(8)]
                assert conflict_degree(load) == 1


def test_best_moves_four_times_the_bytes_per_thread_and_per_barrier():
    tiled_per_thread, best_per_thread = 4 * 4, 4 * 16  # bytes loaded per thread before the barrier
    assert best_per_thread == 4 * tiled_per_thread
    assert 256 * best_per_thread == 16 * 1024 and 256 * tiled_per_thread == 4 * 1024
    assert (64 * 64 * 4) // (32 * 32 * 4) == 4  # bytes per barrier: a quarter of the barriers per byte


def test_lds_blocks_per_cu_for_best_tile():
    assert 64 * 65 * 4 == 16640
    assert (64 * 1024) // 16640 == 3
    assert 8 * 16640 <= 228 * 1024  # eight blocks fit a Hopper SM's shared memory


def test_littles_law_bytes_in_flight_per_100ns():
    total = 4.8e12 * 100e-9  # bytes in flight across the GPU per 100 ns of latency
    assert total == pytest.approx(480e3)
    assert total / 132 == pytest.approx(3636, abs=1)  # per SM, 132 SMs


# --------------------------------------------------------------------------------------------
# Measurement records
# --------------------------------------------------------------------------------------------


def _records() -> dict:
    try:
        from tutor_build.measurements import records
    except ImportError as exc:  # the build package is not importable here
        pytest.skip(f"tutor_build.measurements unavailable: {exc}")
    recs = records(ROOT)
    if not any(k.startswith("A02/transpose/") for k in recs):
        pytest.skip("no A02/transpose measurement records yet (run `tutor labs bench A02` on a GPU)")
    return recs


def _need(recs: dict, key: str) -> dict:
    if key not in recs:
        pytest.skip(f"no record for {key}")
    return recs[key]


def test_padded_tile_beats_naive():
    recs = _records()
    padded = _need(recs, "A02/transpose/tiled_padded/cuda")
    naive = _need(recs, "A02/transpose/naive_row/cuda")
    assert padded["value"] > naive["value"]


@pytest.mark.parametrize("key", ["A02/transpose/best/cuda", "A02/transpose/best/triton"])
def test_best_reaches_ninety_percent_of_copy(key):
    rec = _need(_records(), key)
    ceiling = rec["ceiling"]
    assert rec["unit"] == ceiling["unit"]
    assert rec["value"] >= 0.9 * ceiling["value"], (
        f"{key}: {rec['value']} {rec['unit']} is below 90% of {ceiling['name']} "
        f"({ceiling['value']} {ceiling['unit']})"
    )


def test_ladder_ordering_the_prose_relies_on():
    recs = _records()
    v = {name: _need(recs, f"A02/transpose/{name}/cuda")["value"]
         for name in ["naive_row", "naive_col", "tiled", "tiled_padded", "best"]}
    assert v["naive_col"] > 2 * v["naive_row"], "section 5: strided reads are several times faster"
    assert v["tiled_padded"] > 1.5 * v["tiled"], "section 5: the pad is worth a large step"
    assert v["best"] > v["tiled_padded"]
    # section 5: the bank-conflicted tile lands at about the bandwidth of naive_col
    assert 0.8 < v["tiled"] / v["naive_col"] < 1.25


def test_naive_row_is_below_one_eighth_of_copy_and_naive_col_above():
    recs = _records()
    row = _need(recs, "A02/transpose/naive_row/cuda")
    col = _need(recs, "A02/transpose/naive_col/cuda")
    assert row["value"] < row["ceiling"]["value"] / 8, "section 5: naive_row loses more than 8x"
    assert col["value"] > col["ceiling"]["value"] / 8


def test_triton_simple_beats_cuda_tiled_padded():
    recs = _records()
    simple = _need(recs, "A02/transpose/simple/triton")
    padded = _need(recs, "A02/transpose/tiled_padded/cuda")
    share = lambda r: r["value"] / r["ceiling"]["value"]  # noqa: E731
    assert share(simple) > share(padded), "section 5: Triton simple is well ahead of tiled_padded"


def test_padded_close_to_reference_figure_and_naive_row_below_it():
    # section 5 compares with the original reference figures: 700 GB/s naive, 3,400 GB/s padded
    recs = _records()
    padded = _need(recs, "A02/transpose/tiled_padded/cuda")["value"]
    naive = _need(recs, "A02/transpose/naive_row/cuda")["value"]
    assert abs(padded - 3400) / 3400 < 0.10
    assert naive < 700
    assert padded / naive > 4.8
    assert 3400 > 3350  # above the H100 SXM's 3.35 TB/s peak


def test_every_value_below_its_ceiling():
    recs = _records()
    for key, rec in recs.items():
        if not key.startswith("A02/transpose/"):
            continue
        ceiling = rec["ceiling"]
        assert rec["value"] <= 1.05 * ceiling["value"], f"{key} exceeds its ceiling by more than 5%"


def test_every_triton_best_candidate_is_correct():
    """`best` is the fastest of several tile shapes, chosen at bench time: each candidate must be correct,
    on sizes that are not multiples of any tile, through the Triton interpreter on the CPU."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch and Triton are needed")
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
    assert "candidates correct" in done.stdout
