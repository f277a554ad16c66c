"""The fragment layouts of tutor_build/models/mma_layout.py, and the lab's use of them, emulated on the CPU.

The emulation replays the index arithmetic of labs/A07/cuda/mma_gemm.cu (load_tile's placement, load_a and
load_b2's ldmatrix addresses, the epilogue's acc_row/acc_col) against the PTX fragment definitions, so a wrong
lane formula fails here before any GPU runs it."""

import random

import pytest

from tutor_build.models import mma_layout as L


def test_every_element_once():
    assert len(L.owners(L.m16n8k16_a, 32, 8)) == 16 * 16
    assert len(L.owners(L.m16n8k16_b, 32, 4)) == 16 * 8
    assert len(L.owners(L.m16n8k16_c, 32, 4)) == 16 * 8
    assert len(L.owners(L.mfma32_a, 64, 4)) == 32 * 8
    assert len(L.owners(L.mfma32_b, 64, 4)) == 8 * 32
    assert len(L.owners(L.mfma32_c, 64, 16)) == 32 * 32


def test_ptx_examples():
    # PTX ISA: lane 0 holds A[0][0], A[0][1] in a0 a1 and A[8][0] in a2; C rows g and g + 8.
    assert [L.m16n8k16_a(0, i) for i in range(4)] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert L.m16n8k16_a(5, 4) == (1, 10)
    assert L.m16n8k16_b(5, 2) == (10, 1)
    assert L.m16n8k16_c(31, 3) == (15, 7)
    assert L.mfma32_c(63, 15) == (31, 31)


def _mma_emulated(A, B, layout_a, layout_b, layout_c, lanes, na, nb, nc, m, n, k):
    """Gather fragments lane by lane, multiply as the instruction defines, scatter C back: must equal A @ B."""
    frag_a = [[A[r][c] for r, c in (layout_a(l, i) for i in range(na))] for l in range(lanes)]
    frag_b = [[B[r][c] for r, c in (layout_b(l, i) for i in range(nb))] for l in range(lanes)]
    a_of = {layout_a(l, i): frag_a[l][i] for l in range(lanes) for i in range(na)}
    b_of = {layout_b(l, i): frag_b[l][i] for l in range(lanes) for i in range(nb)}
    C = [[0] * n for _ in range(m)]
    for l in range(lanes):
        for i in range(nc):
            r, c = layout_c(l, i)
            C[r][c] = sum(a_of[(r, kk)] * b_of[(kk, c)] for kk in range(k))
    return C


@pytest.mark.parametrize("which", ["nvidia", "amd"])
def test_fragments_multiply(which):
    rng = random.Random(7)
    m, n, k = (16, 8, 16) if which == "nvidia" else (32, 32, 8)
    A = [[rng.randint(-3, 3) for _ in range(k)] for _ in range(m)]
    B = [[rng.randint(-3, 3) for _ in range(n)] for _ in range(k)]
    if which == "nvidia":
        C = _mma_emulated(A, B, L.m16n8k16_a, L.m16n8k16_b, L.m16n8k16_c, 32, 8, 4, 4, m, n, k)
    else:
        C = _mma_emulated(A, B, L.mfma32_a, L.mfma32_b, L.mfma32_c, 64, 4, 4, 16, m, n, k)
    want = [[sum(A[r][x] * B[x][c] for x in range(k)) for c in range(n)] for r in range(m)]
    assert C == want


@pytest.mark.parametrize("swizzle", [False, True])
def test_lab_ldmatrix_gives_ptx_fragments(swizzle):
    """load_tile places (row, k) at tile_offset(row, k // 8) + k % 8; ldmatrix with the lab's addresses must
    then hand each lane exactly its PTX fragment of A and of both B tiles."""
    memory = {}
    for row in range(128):
        for k in range(L.BK):
            memory[L.tile_offset(row, k // 8, swizzle) + k % 8] = (row, k)
    for row0 in (0, 16, 48, 112):
        for kk in range(2):
            regs = L.ldmatrix_x4(L.lab_a_addresses(row0, kk, swizzle), memory.__getitem__)
            for lane in range(32):
                for i in range(8):
                    r, c = L.m16n8k16_a(lane, i)
                    assert regs[lane][i // 2][i % 2] == (row0 + r, 16 * kk + c)
            regs = L.ldmatrix_x4(L.lab_b_addresses(row0, kk, swizzle), memory.__getitem__)
            for lane in range(32):
                for frag in range(2):  # b0 = r[0], r[1]; b1 = r[2], r[3]
                    for i in range(4):
                        kb, nb = L.m16n8k16_b(lane, i)
                        got = regs[lane][2 * frag + i // 2][i % 2]
                        assert got == (row0 + 8 * frag + nb, 16 * kk + kb)


def test_lab_epilogue_matches_c_layout():
    # acc_row / acc_col of the CUDA lab: lane / 4 + (h / 2) * 8 and 2 * (lane % 4) + h % 2
    for lane in range(32):
        for h in range(4):
            assert (lane // 4 + (h // 2) * 8, 2 * (lane % 4) + h % 2) == L.m16n8k16_c(lane, h)
    # HIP: 8 (h / 4) + 4 (lane / 32) + h % 4 and lane % 32
    for lane in range(64):
        for h in range(16):
            assert (8 * (h // 4) + 4 * (lane // 32) + h % 4, lane % 32) == L.mfma32_c(lane, h)


def test_hip_reads_match_mfma_layout():
    # lds_read4 at tile_offset(row0 + lane % 32, kk) + 4 (lane / 32): elements k = 8 kk + 4 (lane / 32) + i
    for swizzle in (False, True):
        memory = {L.tile_offset(r, k // 8, swizzle) + k % 8: (r, k) for r in range(128) for k in range(L.BK)}
        for kk in range(4):
            for lane in range(64):
                base = L.tile_offset(lane % 32, kk, swizzle) + 4 * (lane // 32)
                for i in range(4):
                    r, c = L.mfma32_a(lane, i)
                    assert memory[base + i] == (r, 8 * kk + c)


def test_swizzle_removes_ldmatrix_conflicts():
    plain = L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, False))
    swz = L.ldmatrix_wavefronts(L.lab_a_addresses(0, 0, True))
    assert (plain, swz) == (16, 4)
    for row0 in range(0, 128, 16):
        for kk in range(2):
            assert L.ldmatrix_wavefronts(L.lab_a_addresses(row0, kk, True)) == 4
            assert L.ldmatrix_wavefronts(L.lab_b_addresses(row0, kk, True)) == 4
            assert L.ldmatrix_wavefronts(L.lab_a_addresses(row0, kk, False)) == 16
    assert max(L.bank_groups(range(8), 0, False).values()) == 4
    assert max(L.bank_groups(range(8), 0, True).values()) == 1
