"""B01 chain in Triton: a chain of k cheap elementwise operations on n float32 values, unfused and fused.

Operation j (j = 0, 1, ..., k - 1) is y = max(x * s_j + t_j, -1), with s_j = 1 - j / 32 and
t_j = (j mod 4) / 16 - 3 / 32: a multiply-add and a clamp, so every variant is bound by memory.
  unfused_k  k launches of one kernel, each reads n floats from memory and writes n floats back:
             8 k bytes moved per element
  fused_k    one kernel applies all k operations to a value held in a register: 8 bytes per element
  eager_k    the same chain written as PyTorch calls, three a step (multiply, add, clamp): 24 k bytes an
             element (bench only)
  compiled_k the eager chain through torch.compile, whose Inductor back end fuses it (bench only)

    python labs/B01/triton/chain.py            check every variant on odd sizes
    python labs/B01/triton/chain.py --bench    GB/s of 8 bytes an element on 2^28 floats, k = 1, 2, 4, 8,
                                               with the copy ceiling measured in the same run
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

CHAIN_LENGTHS = [1, 2, 4, 8]
BLOCK = 4096
NUM_WARPS = 8


def scale(j: int) -> float:
    return 1.0 - j / 32.0


def shift(j: int) -> float:
    return (j % 4) / 16.0 - 3.0 / 32.0


@triton.jit
def op_kernel(x_ptr, y_ptr, n, s, t, BLOCK: tl.constexpr):
    # One operation of the chain: y = max(x * s + t, -1), BLOCK elements per program.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x * s + t, -1.0), mask=mask)


@triton.jit
def fused_kernel(x_ptr, y_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    # The whole chain: one load, K operations on registers, one store.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    for j in tl.static_range(K):
        x = tl.maximum(x * (1.0 - j / 32.0) + ((j % 4) / 16.0 - 3.0 / 32.0), -1.0)
    tl.store(y_ptr + offs, x, mask=mask)


def unfused(x: torch.Tensor, y: torch.Tensor, tmp: torch.Tensor, k: int) -> None:
    """k launches; they alternate between y and tmp so that the last one writes y."""
    n = x.numel()
    grid = (triton.cdiv(n, BLOCK),)
    src = x
    for j in range(k):
        dst = y if (k - 1 - j) % 2 == 0 else tmp
        op_kernel[grid](src, dst, n, scale(j), shift(j), BLOCK=BLOCK, num_warps=NUM_WARPS)
        src = dst


def fused(x: torch.Tensor, y: torch.Tensor, k: int) -> None:
    n = x.numel()
    fused_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, K=k, BLOCK=BLOCK, num_warps=NUM_WARPS)


def eager(x: torch.Tensor, k: int) -> torch.Tensor:
    """The chain as k PyTorch calls: each call is a kernel that reads and writes the whole tensor."""
    for j in range(k):
        x = torch.clamp_min(x * scale(j) + shift(j), -1.0)
    return x


def reference(x: torch.Tensor, k: int, device: str = "cpu") -> torch.Tensor:
    """The chain in float64, on the CPU unless told (the bench computes it where x is)."""
    r = x.detach().to(device, torch.float64)
    for j in range(k):
        r = torch.clamp_min(r * scale(j) + shift(j), -1.0)
    return r


def verify(n: int, seed: int) -> None:
    # Each operation rounds once or twice in float32 (a multiply-add may or may not be contracted):
    # with |x| <= 2 and k <= 8, the error stays below 8 * 2 * 2^-24 * 2, well inside 1e-6.
    x = tutor_lab.rand(n, lo=-2.0, hi=2.0)
    for k in CHAIN_LENGTHS:
        ref = reference(x, k)
        y = tutor_lab.output(n, name="y")
        tmp = tutor_lab.output(n, name="tmp")
        unfused(x, y, tmp, k)
        tutor_lab.check("chain", f"unfused_{k}", str(n), y, ref, seed, atol=1e-6, rtol=1e-6)
        y = tutor_lab.output(n, name="y")
        fused(x, y, k)
        tutor_lab.check("chain", f"fused_{k}", str(n), y, ref, seed, atol=1e-6, rtol=1e-6)


def bench(n: int, seed: int) -> None:
    # Every variant is credited with the 8 bytes an element the chain needs at least (read x, write y),
    # so its GB/s is proportional to its speed; "bytes" records what it really moves: 8 k n unfused.
    x = torch.rand(n, device=tutor_lab.DEVICE) * 4.0 - 2.0
    y = torch.empty_like(x)
    tmp = torch.empty_like(x)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    useful = 8 * n
    for k in CHAIN_LENGTHS:
        ref = reference(x, k, device=x.device).float()
        runs = {
            f"unfused_{k}": (lambda: unfused(x, y, tmp, k), 8 * k * n),
            f"fused_{k}": (lambda: fused(x, y, k), 8 * n),
        }
        for name, (fn, moved) in runs.items():
            y.fill_(float("nan"))
            ms = tutor_lab.timed_ms(fn)
            tutor_lab.measure("chain", name, "bandwidth", tutor_lab.gbps(useful, ms), "GB/s", ceiling, moved, ms)
            tutor_lab.check("chain", name + "_bench", str(n), y, ref, seed, atol=1e-6, rtol=1e-6)
        ms = tutor_lab.timed_ms(lambda: eager(x, k))
        tutor_lab.measure("chain", f"eager_{k}", "bandwidth", tutor_lab.gbps(useful, ms), "GB/s", ceiling,
                          24 * k * n, ms)  # a multiply, an add and a clamp: 3 kernels of 8 bytes an element per operation
        compiled = torch.compile(lambda t, k=k: eager(t, k))
        tutor_lab.check("chain", f"compiled_{k}_bench", str(n), compiled(x), ref, seed, atol=1e-6, rtol=1e-6)
        ms = tutor_lab.timed_ms(lambda: compiled(x))
        tutor_lab.measure("chain", f"compiled_{k}", "bandwidth", tutor_lab.gbps(useful, ms), "GB/s", ceiling,
                          8 * n, ms)


def main() -> int:
    def extra(p):
        p.add_argument("--n", type=int, default=2**28)

    args = tutor_lab.parse_args(extra=extra)
    sizes = [1, 7, 4095, 4097, 100003, 2**20 + 7]
    if args.quick:
        sizes = [1, 7, 4097, 20011]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n, args.seed)
    return tutor_lab.finish("chain")


if __name__ == "__main__":
    sys.exit(main())
