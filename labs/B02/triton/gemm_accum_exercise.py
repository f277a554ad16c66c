"""B02 gemm_accum (Triton), exercise: round the bf16 accumulator (TODO 1) and guard the store (TODO 2); the solution is gemm_accum.py.
C = A B^T with bf16 inputs, accumulated in fp32 or in bf16, and the error of
each as K grows. A is M x K and B is N x K, both row-major (K contiguous); C is M x N in fp32.

    fp32acc   acc = acc + a * b in fp32, k = 0, 1, ..., K-1 in order
    bf16acc   the same, and the accumulator rounded to bf16 after every step (ties to even)

A product of two bf16 values has at most 16 significant bits, so it is exact in fp32, and the host
reproduces both kernels bit for bit. The kernels add one k at a time as an outer product, not with
tl.dot, whose order of additions inside the matrix unit is the hardware's and not this file's.

    python labs/B02/triton/gemm_accum_exercise.py [--quick | --bench]   (TRITON_INTERPRET=1 on a CPU)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "python"))
import tutor_lab as lab  # noqa: E402

TILE = 32  # a TILE x TILE block of C per program
VARIANTS = ["fp32acc", "bf16acc"]


@triton.jit
def round_bf16(x):
    # the nearest bf16 of a finite fp32 (its top 16 bits), ties to even, kept as an fp32
    b = x.to(tl.uint32, bitcast=True)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.to(tl.float32, bitcast=True)


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, TILE: tl.constexpr, BF16: tl.constexpr):
    rows = tl.program_id(1) * TILE + tl.arange(0, TILE)
    cols = tl.program_id(0) * TILE + tl.arange(0, TILE)
    rm, cm = rows < M, cols < N
    acc = tl.zeros([TILE, TILE], dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rows.to(tl.int64) * K + k, mask=rm, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols.to(tl.int64) * K + k, mask=cm, other=0.0).to(tl.float32)
        acc = acc + a[:, None] * b[None, :]  # the product is exact: one rounding, as an fma
        # TODO 1: a bf16 accumulator holds only bf16 values: what must happen to acc when BF16 is set?
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    # TODO 2: store acc to C; no lane may write outside the M x N matrix C.
    tl.store(c_ptr + offs, acc)


def run(variant: str, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[0]
    grid = (triton.cdiv(N, TILE), triton.cdiv(M, TILE))
    gemm_kernel[grid](a, b, c, M, N, K, TILE=TILE, BF16=variant == "bf16acc")
    return c


# ---------------------------------------------------------------- host references
def rbf16_array(x: np.ndarray) -> np.ndarray:
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32)).view(np.float32)


def ref_gemm(variant: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The kernels' arithmetic in their order: float32 outer products, one k at a time."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = acc + np.outer(a[:, k], b[:, k])  # exact products, one float32 rounding per add
        if variant == "bf16acc":
            acc = rbf16_array(acc)
    return acc


def rel_error(c: torch.Tensor, exact: torch.Tensor) -> float:
    """||C - exact||_F / ||exact||_F"""
    return float(torch.linalg.norm(c.double() - exact) / torch.linalg.norm(exact))


def random_bf16(*shape) -> torch.Tensor:
    """Values uniform in [0, 1), rounded to bf16: non-negative, like inputs after a ReLU, so sums grow."""
    return lab.guarded(lab.rand(*shape, lo=0.0, hi=1.0).to(torch.bfloat16), name="input")


def verify(variant: str, M: int, N: int, K: int, seed: int) -> None:
    a, b = random_bf16(M, K), random_bf16(N, K)
    want = ref_gemm(variant, a.float().cpu().numpy(), b.float().cpu().numpy())
    c = run(variant, a, b, lab.output(M, N, name="c"))
    lab.check("gemm_accum", variant, f"{M}x{N}x{K}", c, torch.from_numpy(want), seed)  # bit for bit


def bench() -> None:
    M = N = 128
    for K in (256, 1024, 4096, 16384):
        a = torch.rand(M, K, device=lab.DEVICE).to(torch.bfloat16)
        b = torch.rand(N, K, device=lab.DEVICE).to(torch.bfloat16)
        exact = (a.double() @ b.double().T)  # products exact; float64 rounding far below what is measured
        c = torch.empty(M, N, device=lab.DEVICE)
        for v in VARIANTS:
            bound = {"name": "first-order bound K u", "value": K * 2.0 ** (-8 if v == "bf16acc" else -24), "unit": ""}
            lab.measure("gemm_accum", f"err_{v}_k{K}", "relative error", rel_error(run(v, a, b, c), exact), "", bound)
        # PyTorch's bf16 matmul: fp32 accumulation inside the library, the result rounded to bf16
        bound = {"name": "first-order bound K u", "value": K * 2.0 ** -24, "unit": ""}
        lab.measure("gemm_accum", f"err_torch_k{K}", "relative error", rel_error(a @ b.T, exact), "", bound)
    n = 4096
    a = torch.rand(n, n, device=lab.DEVICE).to(torch.bfloat16)
    c = torch.empty(n, n, device=lab.DEVICE)
    flops = 2.0 * n ** 3
    ms = lab.timed_ms(lambda: a @ a.T)
    ceiling = {"name": "torch.matmul bf16 (vendor BLAS, fp32 accumulate)", "value": flops / (ms * 1e9), "unit": "TFLOP/s"}
    lab.measure("gemm_accum", "tflops_torch", "throughput", ceiling["value"], "TFLOP/s", ceiling, ms=ms)
    for v in VARIANTS:
        ms = lab.timed_ms(lambda: run(v, a, a, c), warmup=1, reps=5)
        lab.measure("gemm_accum", f"tflops_{v}", "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, ms=ms)


def main() -> int:
    args = lab.parse_args()
    if args.bench:
        bench()
        return lab.finish("gemm_accum")
    # no size a multiple of the 32 x 32 tile but M = 64; K = 300 passes the bf16 stall
    shapes = [(1, 1, 1), (17, 33, 100), (40, 45, 300)] + ([] if args.quick else [(70, 45, 1000), (64, 37, 4099)])
    for v in VARIANTS:
        for M, N, K in shapes:
            verify(v, M, N, K, args.seed)
    return lab.finish("gemm_accum")


if __name__ == "__main__":
    sys.exit(main())
