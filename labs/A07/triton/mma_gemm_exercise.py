"""A07 mma_gemm in Triton (exercise: TODOs 2 and 3; TODO 1 is the CUDA/HIP swizzle): C = A @ B^T with bf16 inputs, fp32 accumulation and a bf16 result.

A is M x K and B is N x K, both row-major (K contiguous), as in the CUDA and HIP labs; C is M x N. One
kernel, `tl.dot` on tiles: Triton lowers it to the GPU's matrix instructions (wgmma on Hopper, MFMA on
CDNA 3) and writes the shared-memory layout, the swizzle and the software pipeline itself. Variants:
`simple` (64 x 64 x 32 tiles), `best` (the fastest of a few tile shapes, timed in the same run), and,
optional and NVIDIA Hopper only, `tma` and `tma_persistent`: the same product with the tiles moved by the
Tensor Memory Accelerator through host-made tensor descriptors (CDNA 3 has no TMA; its counterpart is the
pointer kernel, whose loads the compiler turns into buffer loads).

    TRITON_INTERPRET=1 python labs/A07/triton/mma_gemm_exercise.py   check every variant on odd sizes (CPU)
    python labs/A07/triton/mma_gemm_exercise.py --bench    TFLOP/s at 4096^3, beside torch.mm (cuBLAS / hipBLAS)
"""

import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, UPCAST: tl.constexpr):
    # Grouped order: GROUP_M block-rows of C are walked column by column, so the programs running at the
    # same time share their tiles of A and B in L2 instead of each streaming a different block-row of A.
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    rows = pid_m * BM + tl.arange(0, BM)  # rows of A and of C
    cols = pid_n * BN + tl.arange(0, BN)  # rows of B = columns of C
    ks = tl.arange(0, BK)
    # Rows past M (and rows of B past N) wrap around to rows that exist: they compute values that the masked
    # store drops, so the loads need no mask along M or N, only along k on a ragged last step.
    a_ptrs = a_ptr + (rows % M)[:, None] * K + ks[None, :]
    # TODO 2: b_ptrs, the pointers of the first BK x BN tile of B^T (element (k, n) is B[n, k], B is N x K
    # row-major), rows of B past N wrapped like those of A; the loop below advances them by BK.
    b_ptrs = b_ptr + tl.zeros((BK, BN), dtype=tl.int32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)  # fp32 accumulation, whatever the inputs
    for k0 in range(0, K, BK):
        if EVEN_K:  # K is a multiple of BK: every step is whole
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=ks[None, :] < K - k0, other=0.0)
            b = tl.load(b_ptrs, mask=ks[:, None] < K - k0, other=0.0)
        if UPCAST:  # only on the CPU: the interpreter's tl.dot misreads bf16 operands; fp32 holds them exactly
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        # TODO 3: add the tile product a @ b to acc on the matrix unit, in fp32.
        acc += 0.0
        a_ptrs += BK
        b_ptrs += BK
    # TODO 3 (continued): store acc as bf16 into C (M x N, row-major), only where the row and column exist.
    pass


@triton.jit
def tma_kernel(a_desc, b_desc, c_desc, M, N, K, PROGRAMS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP_M: tl.constexpr):
    # The descriptors know each matrix's shape and strides: a load past an edge reads zeros, a store past
    # one is dropped, so ragged M, N and K need no masks. With PROGRAMS below the number of tiles the
    # kernel is persistent: each program walks tiles pid, pid + PROGRAMS, ... in the grouped order.
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    for tile in range(tl.program_id(0), grid_m * grid_n, PROGRAMS):
        first_m = (tile // per_group) * GROUP_M
        group_m = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % group_m
        pid_n = (tile % per_group) // group_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = a_desc.load([pid_m * BM, k0])  # BM x BK of A
            b = b_desc.load([pid_n * BN, k0])  # BN x BK of B: its transpose is the tile of B^T
            acc = tl.dot(a, tl.trans(b), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

# Tile shape, group size, warps and pipeline stages for each variant.
CONFIGS = {
    "simple": dict(BM=64, BN=64, BK=32, GROUP_M=8, num_warps=4, num_stages=2),
    "best": dict(BM=256, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
}
# `best` on a GPU: the fastest of these, timed in the same run (a hand-rolled autotune). Shared memory per
# program is num_stages (BM + BN) BK 2 bytes; every shape here fits the 227 KiB an H200 SM gives one block.
CANDIDATES = [dict(BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
              dict(BM=256, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
              dict(BM=256, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=4),
              dict(BM=128, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=4),
              dict(BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=4),
              dict(BM=128, BN=128, BK=64, GROUP_M=8, num_warps=4, num_stages=4),
              dict(BM=128, BN=128, BK=32, GROUP_M=8, num_warps=4, num_stages=4),
              dict(BM=128, BN=128, BK=128, GROUP_M=8, num_warps=8, num_stages=3),
              dict(BM=128, BN=256, BK=128, GROUP_M=8, num_warps=8, num_stages=2),
              dict(BM=256, BN=128, BK=64, GROUP_M=16, num_warps=8, num_stages=4)]


def shape_name(cfg: dict) -> str:
    """The record variant of one candidate, e.g. tile_128x256x64_w8_s3 (BM x BN x BK, warps, stages; a
    group size other than 8 is appended, e.g. _g16)."""
    name = f"tile_{cfg['BM']}x{cfg['BN']}x{cfg['BK']}_w{cfg['num_warps']}_s{cfg['num_stages']}"
    return name if cfg["GROUP_M"] == 8 else f"{name}_g{cfg['GROUP_M']}"


def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, cfg: dict) -> None:
    M, K = a.shape
    N = b.shape[0]
    assert max(M * K, N * K, M * N) < 2**31, "32-bit offsets"
    grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
    gemm_kernel[grid](a, b, c, M, N, K, **cfg, EVEN_K=K % cfg["BK"] == 0, UPCAST=INTERPRETED)


def gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, variant: str) -> None:
    launch(a, b, c, CONFIGS[variant])


# The TMA variants (optional, NVIDIA Hopper and later): the fastest shape of a sweep of the TMA kernel on an
# H200, one program per tile (`tma`) and one per SM (`tma_persistent`). Shared memory: 3 stages of A and B
# tiles, 3 (128 + 256) 64 2 = 147,456 B, plus the C tile the TMA store sends from, 128 256 2 = 65,536 B.
TMA_CONFIGS = {
    "tma": dict(BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
    "tma_persistent": dict(BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
}


def tma_unavailable() -> str:
    """Why the TMA variants cannot run here, or "" when they can."""
    if INTERPRETED or not torch.cuda.is_available():
        return "the Triton interpreter has no TMA"
    if torch.version.hip or torch.cuda.get_device_capability()[0] < 9:
        return "TMA needs an NVIDIA GPU of compute capability 9.0 (Hopper) or later"
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return f"Triton {triton.__version__} has no host-side tensor descriptors"
    return ""


def tma_fits(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> bool:
    """A descriptor's matrix must start, and each of its rows, on a 16-byte boundary: K and N multiples of 8."""
    return all(t.data_ptr() % 16 == 0 and (t.stride(0) * t.element_size()) % 16 == 0 for t in (a, b, c))


def tma_launcher(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, variant: str):
    """A function that launches the TMA kernel on these tensors (the descriptors are made once, here)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    cfg = TMA_CONFIGS[variant]
    M, K = a.shape
    N = b.shape[0]
    descs = (TensorDescriptor.from_tensor(a, [cfg["BM"], cfg["BK"]]),
             TensorDescriptor.from_tensor(b, [cfg["BN"], cfg["BK"]]),
             TensorDescriptor.from_tensor(c, [cfg["BM"], cfg["BN"]]))
    tiles = triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"])
    programs = tiles
    if variant == "tma_persistent":
        programs = min(tiles, torch.cuda.get_device_properties(a.device).multi_processor_count)
    return lambda: tma_kernel[(programs,)](*descs, M, N, K, programs, **cfg)


def tolerance(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    """(atol, rtol) for a bf16 result of fp32 sums of exact bf16 products.

    Each product of two bf16 is exact in fp32 (8 + 8 significant bits <= 24). The K - 1 fp32 additions
    are off by at most 2^-23 of the running |sum| each (a truncating adder; round-to-nearest halves it), so
    the fp32 sum is within E = (K - 1) 2^-23 max sum|a b| of the exact one. Converting it to bf16 (8
    significant bits) moves it by less than one unit in the last place, 2^-7 of its magnitude (the GPU
    rounds to nearest, half that; the CPU interpreter truncates): |c_bf16 - c| <= 2^-7 (|c| + E) + E."""
    K = a.shape[1]
    worst = float((a.double().abs() @ b.double().abs().t()).max()) if a.numel() and b.numel() else 0.0
    err = (K - 1) * 2.0**-23 * worst
    return err * (1 + 2.0**-7) + 1e-6, 2.0**-7


def verify(M: int, N: int, K: int, seed: int, candidates: bool) -> None:
    # bf16 inputs drawn in [-1, 1); the reference sees the same rounded values, in float64.
    a = tutor_lab.rand(M, K, name="a").to(torch.bfloat16)
    b = tutor_lab.rand(N, K, name="b").to(torch.bfloat16)
    a, b = tutor_lab.guarded(a, name="a"), tutor_lab.guarded(b, name="b")
    ref = a.double() @ b.double().t()
    atol, rtol = tolerance(a, b)
    runs = [(variant, cfg) for variant, cfg in CONFIGS.items()]
    if candidates:  # every shape the bench may time, and pick as `best`, is checked too
        runs += [(shape_name(cfg), cfg) for cfg in CANDIDATES]
    for variant, cfg in runs:
        c = tutor_lab.output(M, N, dtype=torch.bfloat16, name="c")
        launch(a, b, c, cfg)
        tutor_lab.check("mma_gemm", variant, f"{M}x{N}x{K}", c, ref, seed, atol=atol, rtol=rtol)
    for variant in TMA_CONFIGS if not TMA_WHY else []:
        c = tutor_lab.output(M, N, dtype=torch.bfloat16, name="c")
        if tma_fits(a, b, c):
            tma_launcher(a, b, c, variant)()
            tutor_lab.check("mma_gemm", variant, f"{M}x{N}x{K}", c, ref, seed, atol=atol, rtol=rtol)


# Launches per timed call. One launch of a Triton kernel costs tens of microseconds of Python on the CPU,
# a sizeable part of a 4096^3 GEMM's time; queued back to back, the next launch is prepared while the GPU
# runs this one, so the time per launch is the kernel's (module A08). torch.mm is timed the same way.
REPEAT = 10
# Rounds of interleaved timing: each round times torch.mm and every kernel once, in the same order, so a
# drift of the GPU's clock (it heats under a long run of GEMMs) reaches all of them alike; each record is
# the median over the rounds.
ROUNDS = 5


def per_launch_ms(fn) -> float:
    return tutor_lab.timed_ms(lambda: [fn() for _ in range(REPEAT)]) / REPEAT


def interleaved_ms(runs: dict) -> dict:
    """The median over ROUNDS rounds of each run's time per launch; every run is compiled and run once
    before the first round, so no timing follows a compilation (which leaves the GPU idle for seconds)."""
    for fn in runs.values():
        fn()
    tutor_lab.sync()
    times = {name: [] for name in runs}
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            times[name].append(per_launch_ms(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def bench(n: int) -> None:
    a = torch.rand(n, n, device=tutor_lab.DEVICE).sub_(0.5).to(torch.bfloat16)
    b = torch.rand(n, n, device=tutor_lab.DEVICE).sub_(0.5).to(torch.bfloat16)
    c = torch.empty(n, n, device=tutor_lab.DEVICE, dtype=torch.bfloat16)
    flops = 2 * n**3
    blas = lambda: torch.mm(a, b.t(), out=c)  # noqa: E731
    # Sweep: torch.mm and every candidate, interleaved; then `simple` and the winner, again beside torch.mm.
    sweep = interleaved_ms({"torch.mm": blas} |
                           {shape_name(cfg): (lambda cfg=cfg: launch(a, b, c, cfg)) for cfg in CANDIDATES})
    CONFIGS["best"] = min(CANDIDATES, key=lambda cfg: sweep[shape_name(cfg)])
    print(f"best of {len(CANDIDATES)} shapes: {shape_name(CONFIGS['best'])}", file=sys.stderr)
    tma = {variant: tma_launcher(a, b, c, variant) for variant in TMA_CONFIGS} if not TMA_WHY else {}
    final = interleaved_ms({"torch.mm": blas} | tma |
                           {variant: (lambda cfg=cfg: launch(a, b, c, cfg)) for variant, cfg in CONFIGS.items()})
    # One ceiling for every record of the run: torch.mm's median over both sets of rounds.
    blas_ms = statistics.median([sweep["torch.mm"], final["torch.mm"]])
    ceiling = {"name": "torch.mm bf16 (cuBLAS or hipBLAS)", "value": flops / (blas_ms * 1e9), "unit": "TFLOP/s"}
    for cfg in CANDIDATES:  # each candidate is recorded too, so the spread of the tuning is on record
        ms = sweep[shape_name(cfg)]
        tutor_lab.measure("mma_gemm", shape_name(cfg), "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, ms=ms)
    for variant in [*CONFIGS, *tma]:
        ms = final[variant]
        tutor_lab.measure("mma_gemm", variant, "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, ms=ms)


TMA_WHY = ""  # why the TMA variants do not run here (set in main)


def main() -> int:
    global TMA_WHY
    def extra(p):
        p.add_argument("--n", type=int, default=4096)

    args = tutor_lab.parse_args(extra=extra)
    TMA_WHY = tma_unavailable()
    sizes = [(1, 1, 1), (1, 300, 77), (77, 1, 300), (129, 67, 300), (255, 257, 129), (200, 136, 64),
             (517, 391, 1000), (384, 256, 4095), (300, 520, 512), (129, 264, 1000)]
    if args.quick:
        sizes = [(1, 1, 1), (33, 65, 17), (70, 40, 100), (40, 70, 64)]
    ragged = {(1, 1, 1), (129, 67, 300), (384, 256, 4095), (33, 65, 17), (70, 40, 100)}
    if TMA_WHY:
        print(f"tma, tma_persistent: not run: {TMA_WHY}", file=sys.stderr)
    else:
        print("tma, tma_persistent: checked on the sizes whose K and N are multiples of 8", file=sys.stderr)
    for M, N, K in sizes:  # the candidates on the sizes with ragged M, N and K, the variants on all
        verify(M, N, K, args.seed, candidates=(M, N, K) in ragged)
    if args.bench:
        bench(args.n)
    return tutor_lab.finish("mma_gemm")


if __name__ == "__main__":
    sys.exit(main())
