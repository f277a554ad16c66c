"""B02 accumulate (Triton): the sum of n bf16 values, accumulated five ways, each checked bit for bit
against a reference on the host. The same variants as the CUDA and HIP labs:

    serial_fp32     one accumulator in fp32, the elements in order
    serial_bf16     one accumulator rounded to bf16 after every add (a sum of ones stalls at 256)
    kahan_bf16      one bf16 accumulator plus a bf16 compensation term (Kahan summation)
    pairwise_bf16   LANES bf16 accumulators over a stride, then a pairwise tree in bf16
    pairwise_fp32   the same in fp32: the fast, parallel and accurate one

"Rounded to bf16" means: the fp32 result of each add is rounded to the nearest bf16, ties to even, by
the integer trick in round_bf16, so that the GPU, the interpreter and the host compute the same bits.

    python labs/B02/triton/accumulate.py [--quick | --bench]   (TRITON_INTERPRET=1 on a CPU)
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common" / "python"))
import tutor_lab as lab  # noqa: E402

LANES = 1 << 16  # accumulators of the pairwise variants (a power of two)
BLOCK = 1024
VARIANTS = ["serial_fp32", "serial_bf16", "kahan_bf16", "pairwise_bf16", "pairwise_fp32"]


@triton.jit
def round_bf16(x):
    # the nearest bf16 of a finite fp32 (its top 16 bits), ties to even, kept as an fp32
    b = x.to(tl.uint32, bitcast=True)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.to(tl.float32, bitcast=True)


@triton.jit
def add(acc, x, BF16: tl.constexpr):
    s = acc + x
    if BF16:
        s = round_bf16(s)
    return s


@triton.jit
def serial_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr):
    # one program adds every element in order; MODE 0: fp32, 1: bf16, 2: Kahan in bf16
    s = tl.load(x_ptr).to(tl.float32) * 0.0
    c = s
    for i in range(0, n):
        v = tl.load(x_ptr + i).to(tl.float32)  # bf16 -> fp32 is exact
        if MODE == 2:
            y = round_bf16(v - c)
            t = round_bf16(s + y)
            c = round_bf16(round_bf16(t - s) - y)
            s = t
        else:
            s = add(s, v, MODE == 1)
    tl.store(out_ptr, s)


@triton.jit
def strided_kernel(x_ptr, partial_ptr, n, LANES: tl.constexpr, BLOCK: tl.constexpr, BF16: tl.constexpr):
    # lane t adds x[t], x[t + LANES], ... in order; lanes past n keep 0
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for j in range(0, tl.cdiv(n, LANES)):
        idx = lanes.to(tl.int64) + j * LANES
        v = tl.load(x_ptr + idx, mask=idx < n, other=0.0).to(tl.float32)
        s = add(s, v, BF16)  # adding 0 past the end leaves s unchanged, in either format
    tl.store(partial_ptr + lanes, s)


@triton.jit
def halve_kernel(p_ptr, h, BLOCK: tl.constexpr, BF16: tl.constexpr):
    # one level of the pairwise tree: p[i] = p[i] + p[i + h] for i < h
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < h
    a = tl.load(p_ptr + i, mask=m, other=0.0)
    b = tl.load(p_ptr + i + h, mask=m, other=0.0)
    tl.store(p_ptr + i, add(a, b, BF16), mask=m)


def run(variant: str, x: torch.Tensor, out: torch.Tensor, partial: torch.Tensor) -> torch.Tensor:
    """The sum of x, as a one-element tensor (out, or the first element of partial)."""
    n = x.numel()
    if variant.startswith("serial") or variant == "kahan_bf16":
        mode = {"serial_fp32": 0, "serial_bf16": 1, "kahan_bf16": 2}[variant]
        serial_kernel[(1,)](x, out, n, MODE=mode)
        return out
    bf = variant == "pairwise_bf16"
    strided_kernel[(LANES // BLOCK,)](x, partial, n, LANES=LANES, BLOCK=BLOCK, BF16=bf)
    h = LANES // 2
    while h >= 1:
        halve_kernel[(triton.cdiv(h, BLOCK),)](partial, h, BLOCK=BLOCK, BF16=bf)
        h //= 2
    return partial[:1]


# ---------------------------------------------------------------- the host reference
def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def rbf16(v: float) -> float:
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    return struct.unpack("<f", struct.pack("<I", ((b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16) & 0xFFFFFFFF))[0]


def rbf16_array(a: np.ndarray) -> np.ndarray:
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16).astype(np.uint32)).view(np.float32)


def ref_sum(variant: str, xs: np.ndarray) -> float:
    vals = [float(v) for v in xs.astype(np.float32)]
    if variant == "kahan_bf16":
        s = c = 0.0
        for v in vals:
            y = rbf16(f32(v - c))
            t = rbf16(f32(s + y))
            c = rbf16(f32(rbf16(f32(t - s)) - y))
            s = t
        return s
    bf = variant.endswith("bf16")
    if variant.startswith("serial"):
        s = 0.0
        for v in vals:
            s = rbf16(f32(s + v)) if bf else f32(s + v)
        return s
    x = xs.astype(np.float32)
    p = np.zeros(LANES, dtype=np.float32)
    for j in range(0, len(x), LANES):  # round j of every lane, vectorized over the lanes
        chunk = x[j:j + LANES]
        s = p[:len(chunk)] + chunk
        p[:len(chunk)] = rbf16_array(s) if bf else s
    h = LANES // 2
    while h >= 1:
        s = p[:h] + p[h:2 * h]
        p[:h] = rbf16_array(s) if bf else s
        h //= 2
    return float(p[0])


def make_input(n: int, ones: bool) -> torch.Tensor:
    """All ones (the headline), or the run's random values in [0, 1) rounded to bf16."""
    if ones:
        return lab.guarded(torch.ones(n, dtype=torch.bfloat16, device=lab.DEVICE), name="x")
    return lab.guarded(lab.rand(n, lo=0.0, hi=1.0).to(torch.bfloat16), name="x")


def verify(variant: str, n: int, ones: bool, seed: int) -> None:
    x = make_input(n, ones)
    want = ref_sum(variant, x.float().cpu().numpy())
    out = lab.output(1, name="sum")
    partial = lab.output(LANES, name="partial")
    got = run(variant, x, out, partial)
    lab.check("accumulate", variant, f"{n} {'ones' if ones else 'random'}", got.clone(),
              torch.tensor([want], dtype=torch.float64), seed)  # atol 0: bit for bit


def bench() -> None:
    ceiling = lab.copy_ceiling()
    exact = {"name": "exact sum", "value": 1e6, "unit": ""}
    for v in VARIANTS:
        ones = torch.ones(1_000_000, dtype=torch.bfloat16, device=lab.DEVICE)
        out = torch.empty(1, device=lab.DEVICE)
        partial = torch.empty(LANES, device=lab.DEVICE)
        lab.measure("accumulate", f"ones_{v}", "sum", float(run(v, ones, out, partial)[0]), "", exact)
        n = 1 << 28 if v.startswith("pairwise") else 1 << 20
        x = torch.rand(n, device=lab.DEVICE).to(torch.bfloat16)  # never time on zeros
        reps = {} if v.startswith("pairwise") else {"warmup": 1, "reps": 5}
        ms = lab.timed_ms(lambda: run(v, x, out, partial), **reps)
        lab.measure("accumulate", f"bw_{v}", "bandwidth", lab.gbps(2.0 * n, ms), "GB/s", ceiling,
                    nbytes=2.0 * n, ms=ms)
    # PyTorch beside them: a bf16 tensor's sum (returned in bf16) and its fp32-accumulated sum
    ones = torch.ones(1_000_000, dtype=torch.bfloat16, device=lab.DEVICE)
    lab.measure("accumulate", "ones_torch_sum", "sum", float(ones.sum()), "", exact)
    lab.measure("accumulate", "ones_torch_sum_fp32", "sum", float(ones.sum(dtype=torch.float32)), "", exact)
    n = 1 << 28
    x = torch.rand(n, device=lab.DEVICE).to(torch.bfloat16)
    ms = lab.timed_ms(lambda: x.sum(dtype=torch.float32))
    lab.measure("accumulate", "bw_torch_sum_fp32", "bandwidth", lab.gbps(2.0 * n, ms), "GB/s", ceiling,
                nbytes=2.0 * n, ms=ms)


def main() -> int:
    args = lab.parse_args()
    if args.bench:
        bench()
        return lab.finish("accumulate")
    # 300 passes the stall at 256; 1000 and 4099 are not multiples of BLOCK; 70,001 gives lanes 0..4464
    # one element more than the rest. The interpreter runs the serial loops slowly, hence --quick.
    sizes = [1, 300, 1000] if args.quick else [1, 300, 1000, 4099, 70_001]
    for v in VARIANTS:
        for n in sizes:
            for ones in (True, False):
                verify(v, n, ones, args.seed)
    return lab.finish("accumulate")


if __name__ == "__main__":
    sys.exit(main())
