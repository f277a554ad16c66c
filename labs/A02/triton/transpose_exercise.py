"""A02 transpose in Triton, exercise: write the kernel (solution: transpose.py).

out = x^T for an M x N row-major float32 matrix (out is N x M).

Two variants of one kernel: `simple` (32 x 32 tiles, 4 warps) and `best` (the tile shape and
warp count that measured fastest on an NVIDIA H200). Triton stages the tile through shared
memory for tl.trans on its own: the padding or swizzle that CUDA code writes by hand is the
compiler's job here.

    python labs/A02/triton/transpose_exercise.py            check both variants on odd sizes
    python labs/A02/triton/transpose_exercise.py --bench    GB/s on 16384 x 16384, with the copy ceiling
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
    # TODO 3: (numbered like TODOs 3-5 of the CUDA/HIP `tiled` kernel, which these match) rows and
    #         cols: the indices of the rows and of the columns of x that this program's tile covers.
    # TODO 4: load the BM x BN tile of x (row-major, N columns) so that neighbouring lanes read along a
    #         row. A tile at the edge of x is partial: only elements inside x may be read.
    # TODO 5: store the tile transposed into y (N x M, row-major: y[j, i] = x[i, j]) so that the store,
    #         too, runs along rows of y (tl.trans); the guard must be transposed along with the tile.
    # Until then y keeps its NaN poison and every check fails.
    pass


# Tile shape and warps per program for each variant.
CONFIGS = {
    "simple": dict(BM=32, BN=32, num_warps=4),
    "best": dict(BM=64, BN=64, num_warps=8),
}


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
    x = torch.zeros(M, N, device=tutor_lab.DEVICE)
    y = torch.empty(N, M, device=tutor_lab.DEVICE)
    ceiling = tutor_lab.copy_ceiling(4 * M * N)
    for variant in CONFIGS:
        ms = tutor_lab.median_ms(lambda: transpose(x, y, variant))
        traffic = 8 * M * N
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
