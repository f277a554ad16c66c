"""A03 occupancy in Triton: the streaming copy out[i] = in[i] of the CUDA and HIP labs.

Triton hides occupancy: it picks the registers, and the shared memory of a copy is none. What a
program chooses is the work of one program (BLOCK elements) and the warps that share it
(num_warps), so the loads in flight per thread are BLOCK / (num_warps x 32 lanes x 4 floats per
16-byte access). The variants keep num_warps and vary BLOCK, and the other way round.

    python labs/A03/triton/occupancy.py            check every variant on odd sizes
    python labs/A03/triton/occupancy.py --bench    GB/s on a 1 GiB array, with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # Program p copies the BLOCK elements that start at p * BLOCK; the last program is partial.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# Warps per program and elements per program. 16-byte loads in flight per thread:
# BLOCK / (num_warps * 32 * 4), from 1 (w4_b512) to 8 (w4_b4096, w8_b8192).
CONFIGS = {
    "w4_b512": dict(BLOCK=512, num_warps=4),
    "w4_b1024": dict(BLOCK=1024, num_warps=4),
    "w4_b2048": dict(BLOCK=2048, num_warps=4),
    "w4_b4096": dict(BLOCK=4096, num_warps=4),
    "w8_b1024": dict(BLOCK=1024, num_warps=8),
    "w8_b8192": dict(BLOCK=8192, num_warps=8),
    "w16_b2048": dict(BLOCK=2048, num_warps=16),
}


def copy(x: torch.Tensor, y: torch.Tensor, variant: str):
    """Launches one variant; returns what the launch returns (the compiled kernel on a GPU)."""
    cfg = CONFIGS[variant]
    n = x.numel()
    return copy_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](x, y, n, **cfg)


def compiled_facts(kernel) -> dict:
    """Registers, spills and shared memory of a compiled kernel, where this Triton exposes them."""
    facts = {}
    for name in ("n_regs", "n_spills"):
        try:
            value = getattr(kernel, name, None)
        except Exception:  # noqa: BLE001 - an attribute that needs a GPU driver to fill in
            value = None
        if isinstance(value, int):
            facts[name] = value
    shared = getattr(getattr(kernel, "metadata", None), "shared", None)
    if isinstance(shared, int):
        facts["shared"] = shared
    return facts


def verify(n: int, seed: int) -> None:
    x = tutor_lab.rand(n)
    for variant in CONFIGS:
        y = tutor_lab.output(n, name="y")
        copy(x, y, variant)
        tutor_lab.check("occupancy", variant, str(n), y, x, seed)


def bench(n: int) -> None:
    # Each element is read once and written once: 8 bytes.
    x = tutor_lab.rand(n)
    y = torch.empty_like(x)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    traffic = 8 * n
    for variant, cfg in CONFIGS.items():
        facts = compiled_facts(copy(x, y, variant))
        if facts:  # quoted beside the bandwidth: what the compiler chose for this program shape
            print(f'{{"event": "compiled", "lab": "occupancy", "variant": "{variant}", '
                  + ", ".join(f'"{k}": {v}' for k, v in facts.items()) + "}")
        ms = tutor_lab.timed_ms(lambda: copy(x, y, variant))
        tutor_lab.measure("occupancy", variant, "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s", ceiling, traffic, ms)


def main() -> int:
    def extra(p):
        p.add_argument("--n", type=int, default=1 << 28)

    args = tutor_lab.parse_args(extra=extra)
    sizes = [1, 3, 4097, 100003, 3 << 20]
    if args.quick:
        sizes = [1, 3, 4097, 20001]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n)
    return tutor_lab.finish("occupancy")


if __name__ == "__main__":
    sys.exit(main())
