"""A04 bandwidth in Triton: bytes per second from each level of the memory hierarchy, and the
arithmetic intensity at which a stream stops being limited by them.

    read_l1     every program re-reads a small set of its own, which stays in its SM's L1
    read_<set>  the grid streams one set of 4 MiB to 2 GiB with L2-only loads (cache_modifier=".cg")
    fma_k<K>    the 1 GiB stream with K dependent multiply-adds on every float: K/2 FLOP per byte

    python labs/A04/triton/bandwidth_exercise.py            check every kernel against the CPU on odd sizes
    python labs/A04/triton/bandwidth_exercise.py --bench    GB/s per level, TFLOP/s per intensity, with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

A, B = 0.999, 0.001  # x -> a x + b stays in [0, 1) and never folds to a constant
INTENSITIES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
FP32_PER_SM = 128  # FP32 FMA lanes per SM on Hopper: 2 FLOP per lane per clock
RESIDENT_BYTES = 8 * 1024  # each program's own set; 16 programs per SM hold 128 KiB of the 256 KiB L1


@triton.jit
def sweep_kernel(x_ptr, n, passes, out_ptr, a, b, K: tl.constexpr, BLOCK: tl.constexpr):
    # The grid reads x[0..n) `passes` times, BLOCK floats per program per step, grid-strided; each lane
    # applies K multiply-adds to what it loads and adds the result to its own sum.
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    # TODO 1: every pass, step through x in strides of (programs x BLOCK) floats starting at this program's
    # first BLOCK, load with cache_modifier=".cg", apply the K multiply-adds and add each lane's result to
    # its sum; a lane past n must neither load nor add anything. As shipped, it reads its first BLOCK once.
    offs = pid * BLOCK + lanes
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, cache_modifier=".cg")
    acc += tl.where(mask, x, 0.0)
    tl.store(out_ptr + pid * BLOCK + lanes, acc)


@triton.jit
def resident_kernel(x_ptr, n_block, passes, out_ptr, BLOCK: tl.constexpr):
    # Program p reads its own n_block floats, x[p * n_block ...], `passes` times with ordinary loads.
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(passes):
        for start in range(0, n_block, BLOCK):
            offs = start + lanes
            # TODO 2: program p's set is the n_block floats that start at element p * n_block, and no other.
            acc += tl.load(x_ptr + offs, mask=offs < n_block, other=0.0)
    tl.store(out_ptr + pid * BLOCK + lanes, acc)


def sweep(x, out, passes, k, programs, block, warps=4):
    sweep_kernel[(programs,)](x, x.numel(), passes, out, A, B, K=k, BLOCK=block, num_warps=warps)


def resident(x, out, n_block, passes, programs, block, warps=4):
    resident_kernel[(programs,)](x, n_block, passes, out, BLOCK=block, num_warps=warps)


def lane_sums(x: torch.Tensor, k: int, programs: int, block: int) -> torch.Tensor:
    """The CPU's sweep: element i belongs to lane i mod (programs * block); float64 sums of float64 chains
    with the float32 a and b the kernel receives."""
    a, b = (torch.tensor(c, dtype=torch.float32).item() for c in (A, B))
    v = x.double().cpu()
    for _ in range(k):
        v = v * a + b
    lanes = programs * block
    pad = torch.zeros((-v.numel()) % lanes, dtype=torch.float64)
    return torch.cat([v, pad]).view(-1, lanes).sum(0)


def verify(n: int, programs: int, block: int, seed: int) -> None:
    x = tutor_lab.rand(n, lo=0.0, hi=1.0, name="x")
    size = f"{n} floats, {programs} programs of {block}"
    # k = 0 at 1 and 3 passes, then every k the bench times (the long chains at the small sizes only). The
    # kernel's float32 chain rounds each step by at most 2^-24 (values under 1), and the error shrinks by a
    # each step after: an element is off by at most k 2^-24, and it is at least b (1 - a^k) / (1 - a) >=
    # k b a^(k-1), so off by a relative 2^-24 / (b a^(k-1)) at most, 7.7e-5 at k = 256: rtol 1e-4 from k = 1.
    for k, passes in ((0, 1), (0, 3)) + tuple((k, 1) for k in INTENSITIES if k <= 4 or n <= 4097):
        out = tutor_lab.output(programs * block, name="out")
        sweep(x, out, passes, k, programs, block)
        tutor_lab.check("bandwidth", f"sweep_k{k}_passes{passes}", size, out, passes * lane_sums(x, k, programs, block),
                        seed, atol=1e-6, rtol=1e-4 if k else 1e-5)
    n_block = n // programs
    if n_block:
        out = tutor_lab.output(programs * block, name="out")
        resident(x, out, n_block, 2, programs, block)
        per = x[: programs * n_block].double().cpu().view(programs, n_block)
        pad = torch.zeros(programs, (-n_block) % block, dtype=torch.float64)
        ref = 2 * torch.cat([per, pad], 1).view(programs, -1, block).sum(1).flatten()
        tutor_lab.check("bandwidth", "resident", size, out, ref, seed, atol=1e-6, rtol=1e-5)


def set_name(nbytes: int) -> str:
    return f"{nbytes >> 30}GiB" if nbytes >= 1 << 30 else f"{nbytes >> 20}MiB"


def bench() -> None:
    props = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
    sms, khz = props["multiprocessor_count"], props["sm_clock_rate"]  # the highest SM clock, kHz
    programs, block = 16 * sms, 1024  # 16 programs of 4 warps per SM: 64 warps, the most an SM holds
    big = 2 << 30
    x = torch.zeros(big // 4, device=tutor_lab.DEVICE)
    out = torch.empty(programs * block, device=tutor_lab.DEVICE)
    copy = tutor_lab.copy_ceiling(1 << 30)
    # A set that fits in a cache level is measured from that level: no L2 flush between runs (flush=False).

    n_block, passes = RESIDENT_BYTES // 4, 256
    ms = tutor_lab.timed_ms(lambda: resident(x, out, n_block, passes, programs, block), flush=False)
    nbytes = programs * RESIDENT_BYTES * passes
    tutor_lab.measure("bandwidth", "read_l1", "bandwidth", tutor_lab.gbps(nbytes, ms), "GB/s", copy, nbytes, ms)

    for s in (4, 8, 16, 32, 64, 128, 512, 2048):
        set_bytes = s << 20
        passes = max(1, (1 << 30) // set_bytes)
        xs = x[: set_bytes // 4]
        grid = min(programs, triton.cdiv(xs.numel(), block))  # no program without a block of the set
        ms = tutor_lab.timed_ms(lambda: sweep(xs, out, passes, 0, grid, block), flush=False)
        nbytes = set_bytes * passes
        tutor_lab.measure("bandwidth", f"read_{set_name(set_bytes)}", "bandwidth", tutor_lab.gbps(nbytes, ms), "GB/s",
                          copy, nbytes, ms)

    peak = sms * FP32_PER_SM * 2.0 * khz * 1e3
    xs = x[: (1 << 30) // 4]
    for k in INTENSITIES:
        ms = tutor_lab.timed_ms(lambda: sweep(xs, out, 1, k, programs, block))
        # TODO 3: count the FLOPs of one launch: each float loaded gets k multiply-adds of 2 FLOP.
        nbytes, flops = xs.numel() * 4, 0
        roof = min(peak, flops / nbytes * copy["value"] * 1e9)
        tutor_lab.emit({"event": "measure", "lab": "bandwidth", "variant": f"fma_k{k}", "metric": "compute",
                        "value": flops / (ms * 1e-3) / 1e12, "unit": "TFLOP/s",
                        "ceiling": {"name": "roof min(FP32 peak at the highest SM clock, intensity x device-to-device bandwidth of the same run)",
                                    "value": roof / 1e12, "unit": "TFLOP/s"},
                        "bytes": nbytes, "flops": flops, "ms": ms})


def main() -> int:
    args = tutor_lab.parse_args()
    sizes = [(1, 1, 32), (37, 2, 64), (1000, 3, 128), (4097, 5, 256), (20011, 7, 512)]
    if args.quick:
        sizes = [(1, 1, 32), (37, 2, 64), (1000, 3, 128)]
    for n, programs, block in sizes:
        verify(n, programs, block, args.seed)
    if args.bench:
        bench()
    return tutor_lab.finish("bandwidth")


if __name__ == "__main__":
    sys.exit(main())
