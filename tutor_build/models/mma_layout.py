"""Which lane holds which element of a matrix instruction's tiles, and what a shared-memory layout costs.

Two instructions of module A07, each as the vendor documents it:

* NVIDIA ``mma.sync.aligned.m16n8k16`` with bf16 inputs and fp32 accumulators, one warp of 32 lanes (PTX ISA,
  "Matrix Fragments for mma.m16n8k16 with floating point type"): with g = lane // 4 and t = lane % 4,
  A (16 x 16) element i of a lane (i = 0..7) is row g + 8 * ((i // 2) % 2), column 2 t + i % 2 + 8 * (i // 4);
  B (16 x 8) element i (i = 0..3) is row 2 t + i % 2 + 8 * (i // 2), column g;
  C (16 x 8) element i (i = 0..3) is row g + 8 * (i // 2), column 2 t + i % 2.
* AMD ``v_mfma_f32_32x32x8_bf16`` (HIP builtin ``__builtin_amdgcn_mfma_f32_32x32x8bf16_1k``), one wavefront of
  64 lanes (AMD lab notes, matrix cores): with x = lane % 32
  and y = lane // 32, A (32 x 8) element i (0..3) is row x, column 4 y + i; B (8 x 32) element i is row 4 y + i,
  column x; C (32 x 32) element i (0..15) is row 8 (i // 4) + 4 y + i % 4, column x.

``ldmatrix_x4`` models the PTX ``ldmatrix.sync.aligned.m8n8.x4.b16`` distribution, and ``ldmatrix_wavefronts``
counts the 128-byte shared-memory passes one such instruction needs for a given layout (NVIDIA's 32 banks of
4 bytes). The lab (labs/A07/cuda/mma_gemm.cu) uses exactly ``tile_offset`` below.
"""

from __future__ import annotations

from collections import Counter

WARP = 32
WAVE = 64
BK = 32  # bf16 elements per row of the lab's shared-memory tile: 64 bytes, four 16-byte chunks


# ---------------------------------------------------------------- NVIDIA m16n8k16
def m16n8k16_a(lane: int, i: int) -> tuple[int, int]:
    """(row, column) of A element i (0..7) held by `lane`; elements 2r and 2r+1 share 32-bit register r."""
    g, t = lane // 4, lane % 4
    return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def m16n8k16_b(lane: int, i: int) -> tuple[int, int]:
    """(row k, column n) of B element i (0..3) held by `lane`."""
    g, t = lane // 4, lane % 4
    return 2 * t + i % 2 + 8 * (i // 2), g


def m16n8k16_c(lane: int, i: int) -> tuple[int, int]:
    """(row, column) of accumulator i (0..3) held by `lane`."""
    g, t = lane // 4, lane % 4
    return g + 8 * (i // 2), 2 * t + i % 2


# ---------------------------------------------------------------- AMD 32x32x8 (wave64)
def mfma32_a(lane: int, i: int) -> tuple[int, int]:
    return lane % 32, 4 * (lane // 32) + i


def mfma32_b(lane: int, i: int) -> tuple[int, int]:
    return 4 * (lane // 32) + i, lane % 32


def mfma32_c(lane: int, i: int) -> tuple[int, int]:
    return 8 * (i // 4) + 4 * (lane // 32) + i % 4, lane % 32


def owners(layout, lanes: int, per_lane: int) -> dict[tuple[int, int], tuple[int, int]]:
    """element (row, col) -> (lane, index): every element of the tile once, or a ValueError."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(lanes):
        for i in range(per_lane):
            rc = layout(lane, i)
            if rc in out:
                raise ValueError(f"{rc} held twice")
            out[rc] = (lane, i)
    return out


def macs_per_instruction(m: int, n: int, k: int) -> int:
    return m * n * k


# ---------------------------------------------------------------- shared-memory layout of the lab
def tile_offset(row: int, chunk: int, swizzle: bool, bk: int = BK) -> int:
    """Element offset of 16-byte chunk `chunk` of `row` in the lab's tile (bk bf16 per row)."""
    return row * bk + ((chunk ^ ((row >> 1) & 3)) if swizzle else chunk) * 8


def ldmatrix_x4(addresses: list[int], memory) -> list[list[tuple]]:
    """Registers of each lane after ldmatrix.x4: lane l gave the element address of row l % 8 of matrix l // 8;
    lane l receives, in register j, elements 2 (l % 4) and 2 (l % 4) + 1 of row l // 4 of matrix j.
    `memory(addr)` returns what the element at `addr` holds."""
    regs = []
    for lane in range(WARP):
        r = []
        for j in range(4):
            base = addresses[8 * j + lane // 4]
            r.append((memory(base + 2 * (lane % 4)), memory(base + 2 * (lane % 4) + 1)))
        regs.append(r)
    return regs


def ldmatrix_wavefronts(addresses: list[int], elem_bytes: int = 2, banks: int = 32) -> int:
    """128-byte shared-memory passes one ldmatrix.x4 needs: per 8 x 8 matrix, its 8 rows of 16 bytes are one
    request; a pass serves at most one 4-byte word per bank, so the matrix costs as many passes as the busiest
    bank has distinct words."""
    total = 0
    for j in range(4):
        words: dict[int, set[int]] = {}
        for lane in range(8 * j, 8 * j + 8):
            start = addresses[lane] * elem_bytes
            for w in range(start // 4, (start + 16) // 4):
                words.setdefault(w % banks, set()).add(w)
        total += max(len(v) for v in words.values())
    return total


def lab_a_addresses(row0: int, kk: int, swizzle: bool) -> list[int]:
    """The address each lane gives ldmatrix for the lab's A fragment (load_a in the lab)."""
    return [tile_offset(row0 + lane % 16, 2 * kk + lane // 16, swizzle) for lane in range(WARP)]


def lab_b_addresses(row0: int, kk: int, swizzle: bool) -> list[int]:
    """The address each lane gives ldmatrix for two B fragments (load_b2 in the lab)."""
    return [tile_offset(row0 + lane % 8 + (lane // 16) * 8, 2 * kk + (lane // 8) % 2, swizzle) for lane in range(WARP)]


def bank_groups(rows: range, chunk: int, swizzle: bool) -> Counter:
    """How many of `rows` put logical chunk `chunk` in each of the 8 16-byte bank groups of a 128-byte pass."""
    return Counter((tile_offset(r, chunk, swizzle) * 2 // 16) % 8 for r in rows)
