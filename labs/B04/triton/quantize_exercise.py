"""EXERCISE: fill in the TODOs of quantize_mx_kernel; the checks fail until they are right.

B04 quantize (Triton): float32 -> fp8 with a scale, the memory-bound kernel in front of
every fp8 GEMM. The variants the TODOs need, checked bit for bit (quantize.py, the solution, has more):

    amax             max |x| over the tensor (the first read of "current" per-tensor scaling)
    tensor_e4m3      q = e4m3(x * s), s = 448 / amax, saturating       (OCP, Hopper)
    tensor_e4m3fnuz  q = e4m3fnuz(x * s), s = 240 / amax, saturating   (FNUZ, CDNA 3)
    delayed_e4m3     q = e4m3(x * s_old) and amax(x) in the same pass (delayed scaling)
    mxfp8_e4m3       OCP MX: per block of 32, an E8M0 scale 2^(floor(log2 amax) - 8)

    python labs/B04/triton/quantize_exercise.py [--quick | --bench]   (TRITON_INTERPRET=1 on a CPU; --bench needs a GPU)
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tutor_lab as lab  # noqa: E402
from fp8_codec import FORMATS, encode_fp8  # noqa: E402

BLOCK = 1024
VARIANTS = ["amax", "tensor_e4m3", "tensor_e4m3fnuz", "delayed_e4m3", "mxfp8_e4m3"]


@triton.jit
def amax_kernel(x_ptr, amax_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    m = tl.max(tl.abs(x), axis=0)
    # non-negative floats order like their bit patterns read as integers
    tl.atomic_max(amax_ptr, m.to(tl.int32, bitcast=True))


@triton.jit
def quantize_tensor_kernel(x_ptr, q_ptr, amax_ptr, scale, n, MBITS: tl.constexpr,
                           BIAS: tl.constexpr, MAX_CODE: tl.constexpr, NAN_CODE: tl.constexpr,
                           FNUZ: tl.constexpr, WITH_AMAX: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = encode_fp8(x * scale, MBITS, BIAS, MAX_CODE, NAN_CODE, FNUZ, False, True)
    tl.store(q_ptr + offs, q.to(tl.uint8), mask=mask)
    if WITH_AMAX:  # delayed scaling: record this tensor's amax for the next step, same pass
        tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0).to(tl.int32, bitcast=True))


@triton.jit
def quantize_mx_kernel(x_ptr, q_ptr, s_ptr, n, BLOCKS: tl.constexpr):
    # BLOCKS blocks of 32 per program: a [BLOCKS, 32] tile, one amax per row
    rows = tl.program_id(0) * BLOCKS + tl.arange(0, BLOCKS)
    offs = rows[:, None] * 32 + tl.arange(0, 32)[None, :]
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)  # a partial last block is padded with 0
    # TODO 1: m, one value per row of the tile (one MX block of 32): the largest magnitude in it.
    # TODO 2: e = floor(log2 m) - 8 from m's exponent field, no float math; for a field of 0 (m zero or
    #         subnormal) any e <= -127 is right, since the clamp below makes it -127.
    e = tl.zeros([BLOCKS], tl.int32)
    shared = tl.minimum(tl.maximum(e, -127), 127)  # the E8M0 range
    inv = ((127 - shared) << 23).to(tl.float32, bitcast=True)  # 2^-shared, exact
    q = encode_fp8(x * inv[:, None], 3, 7, 0x7E, 0x7F, False, False, True)
    tl.store(q_ptr + offs, q.to(tl.uint8), mask=mask)
    tl.store(s_ptr + rows, (shared + 127).to(tl.uint8), mask=rows * 32 < n)


def buffers(n: int, device) -> tuple:
    """Poisoned outputs (codes, E8M0 scales) and a zeroed amax cell."""
    q = lab.output(n, dtype=torch.uint8, name="q", device=device)
    s = lab.output((n + 31) // 32, dtype=torch.uint8, name="scales", device=device)
    return q, s, torch.zeros(1, dtype=torch.int32, device=device)


def run(variant: str, x: torch.Tensor, scale: float, bufs: tuple):
    n = x.numel()
    q, s, amax = bufs
    grid = (triton.cdiv(n, BLOCK),)
    if variant == "amax":
        amax_kernel[grid](x, amax, n, BLOCK=BLOCK)
    elif variant == "mxfp8_e4m3":
        quantize_mx_kernel[(triton.cdiv(n, 32 * 32),)](x, q, s, n, BLOCKS=32)
    else:
        fmt = "e4m3fnuz" if variant.endswith("fnuz") else "e4m3"
        mbits, bias, max_code, nan_code, fnuz, _, _ = FORMATS[fmt]
        quantize_tensor_kernel[grid](x, q, amax, scale, n, mbits, bias, max_code, nan_code, fnuz,
                                     variant == "delayed_e4m3", BLOCK=BLOCK)
    return q, s, amax


# ------------------------------------------------------------------ references (ml_dtypes)
def to_fp8(v: np.ndarray, dt) -> np.ndarray:
    m = np.float32(ml_dtypes.finfo(dt).max)
    return np.clip(v.astype(np.float32), -m, m).astype(dt).view(np.uint8)


def ref_mx(x: np.ndarray):
    nb = (x.size + 31) // 32
    xb = np.zeros(nb * 32, dtype=np.float32)
    xb[: x.size] = x
    xb = xb.reshape(nb, 32)
    m = np.abs(xb).max(axis=1)
    _, e2 = np.frexp(m)  # m = f * 2^e2, f in [0.5, 1): floor(log2 m) = e2 - 1
    shared = np.where(m == 0, -127, np.clip(e2 - 1 - 8, -127, 127))
    q = to_fp8(np.ldexp(xb, -shared[:, None]).astype(np.float32), ml_dtypes.float8_e4m3fn)
    return q.reshape(-1)[: x.size], (shared + 127).astype(np.uint8)


def verify(variant: str, n: int, seed: int) -> None:
    x = lab.rand(n, lo=-3.0, hi=3.0)
    g = torch.Generator().manual_seed(seed + n)
    idx = torch.randint(0, n, (n // 97,), generator=g)
    x[idx.to(x.device)] *= 40.0  # a few outliers, as in real activations
    xn = x.cpu().numpy()
    amax = np.float32(np.abs(xn).max())
    fmt = "e4m3fnuz" if variant.endswith("fnuz") else "e4m3"
    dt = FORMATS[fmt][6]
    scale = np.float32(float(ml_dtypes.finfo(dt).max)) / amax
    q, s, a = run(variant, x, float(scale), buffers(n, x.device))
    size = str(n)
    if variant in ("amax", "delayed_e4m3"):
        got = torch.tensor([a.cpu().numpy().view(np.float32)[0]])
        lab.check("quantize", variant + "_amax", size, got, torch.tensor([float(amax)]), seed)
    if variant == "mxfp8_e4m3":
        want_q, want_s = ref_mx(xn)
        lab.check("quantize", "mxfp8_e4m3_scales", size, s.cpu().float(),
                  torch.from_numpy(want_s.astype(np.float32)), seed)
    elif variant != "amax":
        want_q = to_fp8(xn * scale, dt)  # one float32 multiply, then one rounding to fp8
    if variant != "amax":
        lab.check("quantize", variant, size, q.cpu().float(),
                  torch.from_numpy(want_q.astype(np.float32)), seed)


def bench() -> None:
    n = 1 << 28
    ceiling = lab.copy_ceiling()
    x = lab.rand(n, lo=-3.0, hi=3.0)  # never time on zeros
    bufs = buffers(n, x.device)
    for v in VARIANTS:
        ms = lab.median_ms(lambda: run(v, x, 1.0, bufs))
        nbytes = 4.0 * n if v == "amax" else 5.0 * n + (n / 32 if v == "mxfp8_e4m3" else 0)
        lab.measure("quantize", v, "bandwidth", lab.gbps(nbytes, ms), "GB/s", ceiling,
                    nbytes=nbytes, ms=ms)


def main() -> int:
    args = lab.parse_args()
    if args.bench:
        bench()
        return lab.finish("quantize")
    sizes = [1, 31, 33, 4099] + ([] if args.quick else [(1 << 22) + 7])
    for v in VARIANTS:
        for n in sizes:
            verify(v, n, args.seed)
    return lab.finish("quantize")


if __name__ == "__main__":
    sys.exit(main())
