"""A02 transpose in Triton: out = x^T for an M x N row-major float32 matrix (out is N x M).

Two variants of one kernel: `simple` (32 x 32 tiles, 4 warps) and `best` (the tile shape and
warp count that measured fastest on an NVIDIA H200). Triton stages the tile through shared
memory for tl.trans on its own: the padding or swizzle that CUDA code writes by hand is the
compiler's job here.

    python labs/A02/triton/transpose.py            check both variants on odd sizes
    python labs/A02/triton/transpose.py --bench    GB/s on 16384 x 16384, with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # Program (pid_m, pid_n) moves the BM x BN tile of x whose corner is (pid_m*BM, pid_n*BN).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)  # rows of x = columns of y
    cols = pid_n * BN + tl.arange(0, BN)  # columns of x = rows of y
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)  # read along rows of x
    # y[j, i] = x[i, j]: the transposed tile is stored along rows of y, also contiguous.
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(tile), mask=tl.trans(mask))


# Tile shape and warps per program for each variant.
CONFIGS = {
    "simple": dict(BM=32, BN=32, num_warps=4),
    "best": dict(BM=64, BN=64, num_warps=8),
}
# `best` on a GPU: the fastest of these shapes, timed in the same run (a hand-rolled autotune).
CANDIDATES = [dict(BM=64, BN=64, num_warps=8), dict(BM=64, BN=64, num_warps=4), dict(BM=128, BN=64, num_warps=8),
              dict(BM=64, BN=128, num_warps=8), dict(BM=128, BN=128, num_warps=16), dict(BM=32, BN=128, num_warps=4)]


def shape_name(cfg: dict) -> str:
    """The record variant of one candidate, e.g. shape_64x64_w8 (BM x BN, warps)."""
    return f"shape_{cfg['BM']}x{cfg['BN']}_w{cfg['num_warps']}"


def transpose(x: torch.Tensor, y: torch.Tensor, variant: str) -> None:
    M, N = x.shape
    assert M * N < 2**31, "32-bit offsets"
    cfg = CONFIGS[variant]
    grid = (triton.cdiv(M, cfg["BM"]), triton.cdiv(N, cfg["BN"]))
    transpose_kernel[grid](x, y, M, N, **cfg)


def verify(M: int, N: int, seed: int) -> None:
    x = tutor_lab.rand(M, N)
    ref = x.t().contiguous()
    for variant in CONFIGS:
        y = tutor_lab.output(N, M, name="y")
        transpose(x, y, variant)
        tutor_lab.check("transpose", variant, f"{M}x{N}", y, ref, seed)


def bench(M: int, N: int) -> None:
    # Each element is read once and written once: 8 bytes.
    x = tutor_lab.rand(M, N)
    y = torch.empty(N, M, device=tutor_lab.DEVICE)
    ceiling = tutor_lab.copy_ceiling(4 * M * N)
    traffic = 8 * M * N
    timings = []
    for cfg in CANDIDATES:  # each candidate is recorded too, so the spread of the tuning is on record
        CONFIGS["best"] = cfg
        ms = tutor_lab.median_ms(lambda: transpose(x, y, "best"))
        timings.append((ms, cfg))
        tutor_lab.measure("transpose", shape_name(cfg), "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s",
                          ceiling, traffic, ms)
    CONFIGS["best"] = min(timings, key=lambda t: t[0])[1]
    print(f"best of {len(CANDIDATES)} shapes: {shape_name(CONFIGS['best'])}", file=sys.stderr)
    for variant in CONFIGS:
        ms = tutor_lab.median_ms(lambda: transpose(x, y, variant))
        tutor_lab.measure("transpose", variant, "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s",
                          ceiling, traffic, ms)


def main() -> int:
    def extra(p):
        p.add_argument("--m", type=int, default=16384)
        p.add_argument("--n", type=int, default=16384)

    args = tutor_lab.parse_args(extra=extra)
    sizes = [(1, 1), (33, 65), (1000, 777), (4097, 1023), (68, 4100), (12, 37)]
    if args.quick:
        sizes = [(1, 1), (33, 65), (68, 100), (257, 130)]
    for M, N in sizes:
        verify(M, N, args.seed)
    if args.bench:
        bench(args.m, args.n)
    return tutor_lab.finish("transpose")


if __name__ == "__main__":
    sys.exit(main())
