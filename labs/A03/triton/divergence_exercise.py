"""A03 divergence in Triton, exercise (the worked solution is divergence.py): the two equal-cost paths of the CUDA and HIP labs.

A Triton program has no per-lane branch. A choice per element is tl.where(cond, a, b): the source
asks for both a and b for every element before the choice, and promises nothing cheaper (the
compiled code may skip part of the work; section 5 measures what it does). A real branch exists only on a scalar, the same for the whole program
(an `if` on the program id), and that one costs one path.

    no_branch    every element takes path A
    where_lane   tl.where on the parity of the element index: both paths asked for everywhere
    if_program   an `if` on the parity of the program id: one path per program

    python labs/A03/triton/divergence.py            check every variant on odd sizes
    python labs/A03/triton/divergence.py --bench    useful GFLOP/s on 16M elements
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

STEPS = 1024  # dependent FMAs on each path
A = (0.9990, 0.0010)  # path A: x = x * 0.999 + 0.001
B = (-0.9980, 0.0020)  # path B: x = x * -0.998 + 0.002


@triton.jit
def chain(x, mul, add, STEPS: tl.constexpr):
    for _ in range(STEPS):
        x = tl.fma(x, mul, add)
    return x


@triton.jit
def branch_kernel(x_ptr, y_ptr, n, MODE: tl.constexpr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if MODE == 0:  # no_branch
        y = chain(x, 0.9990, 0.0010, STEPS)
    elif MODE == 1:  # where_lane
        # TODO 1: elements at odd offsets take path B (x * -0.998 + 0.002), the others path A, chosen
        #         element by element with one select of the two chains' results.
        #         Until then `y = x` is a placeholder, and where_lane fails its check on every size.
        y = x
    else:  # if_program
        # TODO 2: every element of an odd-numbered program takes path B, of an even one path A, decided
        #         by one scalar test for the whole program, so that each program runs one chain only.
        #         Until then `y = x` is a placeholder, and if_program fails its check on every size.
        y = x
    tl.store(y_ptr + offs, y, mask=mask)


MODES = {"no_branch": 0, "where_lane": 1, "if_program": 2}
BLOCK = 256


def run(x: torch.Tensor, y: torch.Tensor, variant: str) -> None:
    n = x.numel()
    branch_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, MODE=MODES[variant], STEPS=STEPS, BLOCK=BLOCK, num_warps=4)


def reference(x: torch.Tensor, variant: str) -> torch.Tensor:
    """The chosen chain of each element, in float64 on the CPU."""
    x64 = x.detach().to("cpu", torch.float64)
    idx = torch.arange(x64.numel())
    if variant == "no_branch":
        take_b = torch.zeros_like(idx, dtype=torch.bool)
    elif variant == "where_lane":
        take_b = idx % 2 == 1
    else:
        take_b = (idx // BLOCK) % 2 == 1
    mul = torch.where(take_b, B[0], A[0]).to(torch.float64)
    add = torch.where(take_b, B[1], A[1]).to(torch.float64)
    for _ in range(STEPS):
        x64 = x64 * mul + add
    return x64


def verify(n: int, seed: int) -> None:
    x = tutor_lab.rand(n)
    for variant in MODES:
        y = tutor_lab.output(n, name="y")
        run(x, y, variant)
        tutor_lab.check("divergence", variant, str(n), y, reference(x, variant), seed, atol=1e-5, rtol=1e-4)


def bench(n: int) -> None:
    # Useful FLOP: STEPS FMAs of 2 FLOP per element, on its own path; the branch-free kernel timed in
    # the same run is the ceiling.
    x = tutor_lab.rand(n)
    y = torch.empty_like(x)
    flops = 2.0 * STEPS * n
    base = tutor_lab.timed_ms(lambda: run(x, y, "no_branch"))
    ceiling = {"name": "branch-free FMA chain", "value": flops / (base * 1e6), "unit": "GFLOP/s"}
    for variant in MODES:
        ms = tutor_lab.timed_ms(lambda: run(x, y, variant))
        tutor_lab.measure("divergence", variant, "useful_rate", flops / (ms * 1e6), "GFLOP/s", ceiling, None, ms)


def main() -> int:
    def extra(p):
        p.add_argument("--n", type=int, default=1 << 24)

    args = tutor_lab.parse_args(extra=extra)
    sizes = [1, 33, 1000, 65537]
    if args.quick:
        sizes = [1, 33, 1000, 4097]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n)
    return tutor_lab.finish("divergence")


if __name__ == "__main__":
    sys.exit(main())
