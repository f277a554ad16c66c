"""The SGEMM ladder of module A06, counted: what each kernel of ``labs/A06/cuda/sgemm.cu`` changes.

A block computes a ``BM x BN`` tile of ``C = A B`` (fp32, ``b = 4`` bytes); per step of ``k`` it needs
``BM + BN`` elements from global memory for ``BM BN`` multiply-adds, so its intensity with respect to the
bytes it requests from global memory is (the same formula as ``gemm_tiling``, the player's model)

$$ I_\\text{global} = \\frac{2\\,BM\\,BN}{(BM + BN)\\,b}. $$

A thread computes a ``TM x TN`` block of that tile; per ``k`` it reads ``TM + TN`` floats from shared
memory into registers for ``TM TN`` multiply-adds, in ``(TM + TN) / v`` load instructions of ``v`` floats:

$$ I_\\text{shared} = \\frac{2\\,TM\\,TN}{(TM + TN)\\,b}, \\qquad
   \\text{FMA per load instruction} = \\frac{TM\\,TN\\,v}{TM + TN}. $$

The threads of one warp together cover a ``WM x WN`` footprint of C; per ``k`` the warp reads
``WM + WN`` distinct floats (the rest are broadcasts), which is what warp tiling makes squarer.
Naive kernels use no shared memory: each multiply-add loads two floats from global memory (``BM = BN = 1``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import hardware

FP32 = 4  # bytes


@dataclass(frozen=True)
class Step:
    name: str  # the lab's variant
    change: str  # what this step changes, in a few words
    bm: int
    bn: int
    tm: int = 1  # thread tile
    tn: int = 1
    vec: int = 1  # floats per shared-memory load instruction
    wm: int = 0  # rows of C one warp covers (0: no shared memory)
    wn: int = 0
    threads: int = 256
    stages: int = 1


# The ladder, in the lab's order (kLadder in labs/A06/cuda/sgemm.cu).
STEPS: tuple[Step, ...] = (
    Step("naive", "one thread per element, warp down a column", 1, 1),
    Step("coalesced", "warp along a row of C", 1, 1),
    Step("smem_tiled", "32 x 32 tiles in shared memory", 32, 32, wm=1, wn=32, threads=1024),
    Step("reg_1d", "8 results per thread, in a column", 64, 64, tm=8, tn=1, wm=8, wn=32, threads=512),
    Step("reg_2d", "8 x 8 results per thread", 128, 128, tm=8, tn=8, wm=16, wn=128),
    Step("vectorized", "float4 loads, A transposed in shared memory", 128, 128, tm=8, tn=8, vec=4, wm=16, wn=128),
    Step("warp_tiled", "64 x 32 warp tiles, 2 x 2 sub-tiles of 4 x 4", 128, 128, tm=8, tn=8, vec=4, wm=64, wn=32),
    Step("double_buffered", "two shared buffers, next K-step loaded during the FMAs", 128, 128, tm=8, tn=8, vec=4,
         wm=64, wn=32, stages=2),
)


def step(name: str) -> Step:
    return next(s for s in STEPS if s.name == name)


def global_intensity(s: Step) -> float:
    """FLOP per byte requested from global memory."""
    return 2 * s.bm * s.bn / ((s.bm + s.bn) * FP32)


def shared_intensity(s: Step) -> float:
    """FLOP per byte a thread reads from shared memory (0 for the naive kernels, which read none)."""
    return 2 * s.tm * s.tn / ((s.tm + s.tn) * FP32) if s.wm else 0.0


def fma_per_shared_load(s: Step) -> float:
    """Multiply-adds per shared-memory load instruction of one thread."""
    return s.tm * s.tn * s.vec / (s.tm + s.tn) if s.wm else 0.0


def warp_shared_intensity(s: Step) -> float:
    """FLOP per distinct shared-memory byte a warp reads per k: 2 WM WN / ((WM + WN) b)."""
    return 2 * s.wm * s.wn / ((s.wm + s.wn) * FP32) if s.wm else 0.0


def global_bytes(s: Step, m: int, n: int, k: int) -> float:
    """Bytes the whole product requests from global memory: each tile reads BM + BN floats per k, writes once."""
    return FP32 * (m * n * k * (1 / s.bm + 1 / s.bn) + m * n)


def flops(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k


def ridge(device: str) -> float:
    """FP32 peak over HBM bandwidth: the intensity at which a kernel stops being bandwidth-bound."""
    return hardware.peak(device, "fp32") / hardware.value(device, "hbm_bw")


def time_bounds(s: Step, device: str, m: int, n: int, k: int) -> tuple[float, float]:
    """(seconds at the FP32 peak, seconds to move global_bytes at the HBM bandwidth): the larger one binds
    if every requested byte came from HBM; caches make the second an upper bound on the traffic's cost."""
    return flops(m, n, k) / hardware.peak(device, "fp32"), global_bytes(s, m, n, k) / hardware.value(device, "hbm_bw")


def accumulator_registers(s: Step) -> int:
    return s.tm * s.tn


def register_cap(threads: int, blocks: int, device: str = "h200") -> int:
    """Registers per thread when `blocks` blocks of `threads` must fit in one SM's register file."""
    return int(hardware.value(device, "regs_per_unit")) // (threads * blocks)


def waves(m: int, n: int, bm: int, bn: int, blocks_per_unit: int, device: str = "h200") -> tuple[int, int, float]:
    """(tiles, waves, wave efficiency) of a grid of BM x BN tiles with `blocks_per_unit` resident per SM/CU."""
    tiles = -(-m // bm) * -(-n // bn)
    slots = blocks_per_unit * int(hardware.value(device, "units"))
    w = -(-tiles // slots)
    return tiles, w, tiles / (w * slots)


def tolerance(k: int) -> float:
    """The labs' check: |c - ref| <= 4 u K^(3/2), u = 2^-24 (see labs/A06/cuda/sgemm.cu)."""
    return 4.0 * 2.0**-24 * k**1.5


def shared_bytes(bm: int, bn: int, bk: int, stages: int, pad: int = 4) -> int:
    """Shared memory of the lab's tiled kernel: `stages` copies of a (BM + pad) x BK transposed A tile and a
    BK x BN B tile."""
    return stages * bk * (bm + pad + bn) * FP32


def transposed_store_ways(bk: int, pitch: int, banks: int = 32, lanes: int = 32, per_row: int | None = None) -> int:
    """Bank-conflict degree of one scalar store of the lab's transposing A store (``tiled_gemm``'s
    ``store_shared``): lane ``l`` of a warp holds the float4 at row ``r = l // (bk / 4)``, columns
    ``c = (l % (bk / 4)) * 4`` of the BM x BK slice of A and writes element ``q`` of it to ``As[c + q][r]``,
    word ``(c + q) * pitch + r``. Returns the most distinct words one bank receives in one instruction
    (1: conflict-free); the warp's starting row only shifts every bank, so lanes 0..31 stand for any warp.
    ``per_row``: float4 of one row per warp (default ``bk / 4``, the lab's split: the whole K-step of a
    row); 2 is the split in which a warp covers 16 rows x 8 floats (its other column pairs, 8 floats
    on, shift every bank by 4 x 8 = 32, i.e. not at all)."""
    per_row = bk // 4 if per_row is None else per_row
    worst = 1
    for q in range(4):
        words_by_bank: dict[int, set[int]] = {}
        for lane in range(lanes):
            r, c = lane // per_row, (lane % per_row) * 4
            word = (c + q) * pitch + r
            words_by_bank.setdefault(word % banks, set()).add(word)
        worst = max(worst, max(len(w) for w in words_by_bank.values()))
    return worst
