"""A05 reduce in Triton, exercise: finish the kernels (solution: reduce.py).

The sum of n float32 values.

Two variants and the library call they are measured against:
  atomic    each program sums one BLOCK of the input with tl.sum and adds it to the result with
            tl.atomic_add (one atomic per program; the order the atomics land in varies run to run)
  two_pass  a grid just large enough to fill the GPU walks the input, each program writes its partial
            sum, and one program adds the partials in a fixed order: the same bits on every run
  torch_sum torch.sum on the same tensor, timed in the same run (bench only)

    python labs/A05/triton/reduce_exercise.py            check both variants on odd sizes
    TRITON_INTERPRET=1 python labs/A05/triton/reduce_exercise.py   the same on a CPU (set before triton is imported)
    python labs/A05/triton/reduce_exercise.py --bench    GB/s read on 2^28 floats (1 GiB), with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


@triton.jit
def sum_atomic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Program p sums elements [p * BLOCK, (p + 1) * BLOCK) and adds that to *out_ptr.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # TODO 1: add the sum of this program's elements to *out_ptr, reading no element at or past n
    #         (the last program's block is partial), with one atomic for the whole program.
    pass


@triton.jit
def partial_sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    # Program p of P walks blocks p, p + P, p + 2P, ... and keeps BLOCK running sums, one per lane
    # position; it writes their total to partial_ptr[p]. The order depends on n and P only.
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    # TODO 2: acc holds, lane by lane, the sum of every block this program owns (pid, pid + P, ...;
    #         step elements apart), without reading past n.
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def sum_partials_kernel(partial_ptr, out_ptr, count, BLOCK: tl.constexpr):
    # One program adds the partials, always in the same order, and writes the result.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, count, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        # TODO 3: add this step's partials to acc; only the count partials that exist are read.
        pass
    tl.store(out_ptr, tl.sum(acc, axis=0))


# Block size and warps per program; two_pass also sets how many programs share each SM.
CONFIGS = {
    "atomic": dict(BLOCK=8192, num_warps=8),
    "two_pass": dict(BLOCK=4096, num_warps=8, per_sm=4),
}
# On a GPU, each variant keeps the fastest of its candidates, timed in the same run.
# A loop iteration's loads are all in flight before its adds, but the next iteration's loads wait for them:
# the bytes in flight per SM are (programs per SM) x BLOCK x 4. The two_pass candidates go from 64 KiB to
# 256 KiB of them per SM, with 1,024 or 2,048 threads.
CANDIDATES = {
    "atomic": [dict(BLOCK=8192, num_warps=8), dict(BLOCK=16384, num_warps=8), dict(BLOCK=16384, num_warps=16),
               dict(BLOCK=32768, num_warps=16), dict(BLOCK=32768, num_warps=32), dict(BLOCK=65536, num_warps=16),
               dict(BLOCK=65536, num_warps=32)],
    "two_pass": [dict(BLOCK=1024, num_warps=2, per_sm=32), dict(BLOCK=2048, num_warps=4, per_sm=8),
                 dict(BLOCK=2048, num_warps=4, per_sm=16), dict(BLOCK=2048, num_warps=8, per_sm=8),
                 dict(BLOCK=4096, num_warps=4, per_sm=8), dict(BLOCK=4096, num_warps=8, per_sm=8),
                 dict(BLOCK=4096, num_warps=4, per_sm=16)],
}
SUM_BLOCK = 1024  # the second pass: partials per step of the one program


def programs(n: int, cfg: dict) -> int:
    """two_pass: per_sm programs on every SM (4 SMs' worth on a CPU), fewer if n is small."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count if tutor_lab.DEVICE == "cuda" else 4
    return max(1, min(sms * cfg["per_sm"], triton.cdiv(n, cfg["BLOCK"])))


def reduce(x: torch.Tensor, out: torch.Tensor, partial: torch.Tensor, variant: str) -> None:
    """out[0] = sum of x. atomic adds to out, so the caller zeroes it first."""
    n = x.numel()
    assert n + 2 * 65536 < 2**31, "32-bit offsets"
    cfg = CONFIGS[variant]
    if variant == "atomic":
        sum_atomic_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](x, out, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    else:
        p = programs(n, cfg)
        partial_sum_kernel[(p,)](x, partial, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
        sum_partials_kernel[(1,)](partial, out, p, BLOCK=SUM_BLOCK, num_warps=4)


def max_programs() -> int:
    return max(programs(2**31 - 1, cfg) for cfg in CANDIDATES["two_pass"])


def exact_input(n: int, guarded: bool = True) -> torch.Tensor:
    """Integers 0..7 as floats, each kept with probability min(1, 2^21 / n), the others 0: every partial
    sum is an integer below 2^24 (checked), so any order of addition is exact. Up to 2^21 elements
    every value is kept."""
    x = tutor_lab.rand(n, lo=0.0, hi=8.0) if guarded else torch.rand(n, device=tutor_lab.DEVICE) * 8.0
    x.floor_()
    if n > 2**21:
        x.mul_(torch.rand(n, device=x.device) < 2**21 / n)
    assert float(x.double().sum()) < 2**24, "the exact input must sum to less than 2^24"
    return x


def verify(n: int, seed: int) -> None:
    """Two inputs per size. Integers 0..7 as floats (exact_input): every partial sum is an integer below
    2^24, so any order is exact and the sum must match bit for bit. Uniform floats in [-1, 1): whatever
    the order, |sum - exact| <= gamma(n - 1) * sum |x_i|, gamma(k) = k u / (1 - k u), u = 2^-24; the
    bound means something only while (n - 1) u is well below 1: above 2^23 elements, the exact check alone."""
    u = 2.0**-24
    ku = (n - 1) * u
    for integers in (True, False) if ku < 0.5 else (True,):
        x = exact_input(n) if integers else tutor_lab.rand(n)
        exact = x.double().sum()
        tol = 0.0 if integers else ku / (1 - ku) * float(x.double().abs().sum()) + u * abs(float(exact))
        ref = exact.float().reshape(1)
        partial = tutor_lab.output(max_programs(), name="partial")
        for variant in CONFIGS:
            out = tutor_lab.output(1, name="sum")
            if variant == "atomic":
                out.zero_()
            reduce(x, out, partial, variant)
            name = variant + ("" if integers else "_float")
            tutor_lab.check("reduce", name, str(n), out, ref, seed, atol=tol)


def distinct(x: torch.Tensor, out: torch.Tensor, partial: torch.Tensor, variant: str, runs: int) -> int:
    """How many different float32 results `runs` runs of one variant give on the same input."""
    seen = set()
    for _ in range(runs):
        out.zero_()
        reduce(x, out, partial, variant)
        seen.add(out.view(torch.int32).item())
    return len(seen)


def timed(x: torch.Tensor, out: torch.Tensor, partial: torch.Tensor, variant: str, name: str, ref: torch.Tensor,
          ceiling: dict, seed: int) -> float:
    """Times one variant on the bench's buffers, records its rate, and checks its result bit for bit:
    two_pass overwrites out, so what the timed runs left is checked as it is; atomic keeps adding to out,
    so it runs once more from zero first. Returns the median milliseconds."""
    n = x.numel()
    out.fill_(float("nan"))  # a variant that writes nothing fails
    ms = tutor_lab.timed_ms(lambda: reduce(x, out, partial, variant))  # atomic: out keeps adding up
    tutor_lab.measure("reduce", name, "bandwidth", tutor_lab.gbps(4 * n, ms), "GB/s",
                      ceiling, 4 * n, ms)
    if variant == "atomic":
        out.zero_()
        reduce(x, out, partial, variant)
    tutor_lab.check("reduce", name + "_bench", str(n), out, ref, seed)
    return ms


def bench(n: int, seed: int) -> None:
    # Each element is read once: 4 bytes. The copy ceiling counts bytes read + written per second. The timed
    # input is exact_input's (the values do not change the speed), so every timed result is checked exactly.
    x = exact_input(n, guarded=False)
    ref = x.double().sum().float().reshape(1)
    out = torch.zeros(1, device=tutor_lab.DEVICE)
    partial = torch.empty(max_programs(), device=tutor_lab.DEVICE)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    traffic = 4 * n
    for variant, cands in CANDIDATES.items():  # every candidate is recorded, so the tuning is on record
        timings = []
        for cfg in cands:
            CONFIGS[variant] = cfg
            name = f"{variant}_b{cfg['BLOCK']}_w{cfg['num_warps']}" + (f"_p{cfg['per_sm']}" if "per_sm" in cfg else "")
            timings.append((timed(x, out, partial, variant, name, ref, ceiling, seed), cfg))
        CONFIGS[variant] = min(timings, key=lambda t: t[0])[1]
        print(f"{variant}: best {CONFIGS[variant]}", file=sys.stderr)
    for variant in CONFIGS:
        timed(x, out, partial, variant, variant, ref, ceiling, seed)
    total = torch.empty(1, device=tutor_lab.DEVICE)
    ms = tutor_lab.timed_ms(lambda: torch.sum(x, dim=0, keepdim=True, out=total))
    tutor_lab.measure("reduce", "torch_sum", "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s", ceiling, traffic, ms)
    tutor_lab.check("reduce", "torch_sum_bench", str(n), total, ref, seed)
    x = tutor_lab.rand(n)  # the order experiment needs values whose sum rounds
    runs = 20
    for variant in CONFIGS:  # a count, not a rate: kind "counter", no ceiling
        tutor_lab.emit({"event": "measure", "lab": "reduce", "variant": f"distinct_{variant}",
                        "metric": f"distinct results in {runs} runs", "value": distinct(x, out, partial, variant, runs),
                        "unit": "distinct sum", "kind": "counter",
                        "ceiling": {"name": "none (a count)", "value": 0, "unit": "distinct sum"}})


def main() -> int:
    def extra(p):
        p.add_argument("--n", type=int, default=2**28)

    args = tutor_lab.parse_args(extra=extra)
    # 2**24 + 3: above 2^24, not a multiple of any BLOCK; two_pass uses its full grid, several steps per program
    sizes = [1, 7, 1000, 4097, 100003, 2**20 + 7, 2**21, 2**24 + 3]
    if args.quick:
        # 100003: on a CPU two_pass runs 16 programs of 4,096, so at this size some programs walk a second block
        sizes = [1, 7, 1000, 8193, 20011, 100003]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n, args.seed)
    return tutor_lab.finish("reduce")


if __name__ == "__main__":
    sys.exit(main())
