"""Floating-point formats and accumulation error for module B02, in plain Python (no dependencies).

The same arithmetic as labs/B02: an fp32 add (or multiply-add) computed exactly and rounded to fp32, then,
for a bf16 accumulator, rounded to the nearest bf16 with ties to even. Used by tests/claims/test_b02.py and
the figures of B02 (tutor_build/figures/b02.py)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str
    exponent_bits: int
    mantissa_bits: int  # stored fraction bits; the significand has one more (the implicit 1)

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def epsilon(self) -> float:
        """Machine epsilon: the gap between 1 and the next larger number, 2^-m."""
        return 2.0 ** -self.mantissa_bits

    @property
    def unit_roundoff(self) -> float:
        """The largest relative error of round to nearest, half of epsilon: 2^-(m+1)."""
        return 2.0 ** -(self.mantissa_bits + 1)

    @property
    def max_finite(self) -> float:
        """IEEE-style: the all-ones exponent is reserved for infinity and NaN."""
        emax = 2 ** self.exponent_bits - 2 - self.bias
        return (2.0 - 2.0 ** -self.mantissa_bits) * 2.0 ** emax

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (1 - self.bias - self.mantissa_bits)

    @property
    def stall(self) -> int:
        """The running sum at which adding 1.0 no longer changes it under round to nearest even:
        2^(m+1), where the gap between neighbours is 2 and s + 1 is a tie that rounds back to s."""
        return 2 ** (self.mantissa_bits + 1)


FP32 = Format("fp32", 8, 23)
TF32 = Format("tf32", 8, 10)
BF16 = Format("bf16", 8, 7)
FP16 = Format("fp16", 5, 10)
FORMATS = {f.name: f for f in (FP32, TF32, BF16, FP16)}


def f32(x: float) -> float:
    """Round a Python float (binary64) to the nearest fp32, ties to even."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def round_bf16(x: float) -> float:
    """The labs' rounding: an fp32 to the nearest bf16 (its top 16 bits), ties to even."""
    b = f32_bits(f32(x))
    return bits_f32((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000)


def add(acc: float, x: float, bf16: bool) -> float:
    s = f32(acc + x)  # both operands are fp32, so the binary64 sum is exact and one rounding to fp32 follows
    return round_bf16(s) if bf16 else s


def serial_sum(xs, bf16: bool) -> float:
    s = 0.0
    for x in xs:
        s = add(s, x, bf16)
    return s


def kahan_sum_bf16(xs) -> float:
    s = c = 0.0
    for x in xs:
        y = round_bf16(f32(x - c))
        t = round_bf16(f32(s + y))
        c = round_bf16(f32(round_bf16(f32(t - s)) - y))
        s = t
    return s


def serial_ones(n: int, bf16: bool) -> float:
    """serial_sum of n ones without the loop: an fp32 sum of ones is exact up to 2^24; a bf16 one
    counts exactly up to its stall at 256 and stays there."""
    if bf16:
        return float(min(n, BF16.stall))
    return float(min(n, 2 ** 24))


def pairwise_sum(xs, lanes: int, bf16: bool) -> float:
    """The labs' pairwise variants: `lanes` accumulators over a stride, then a halving tree."""
    p = [0.0] * lanes
    for i, x in enumerate(xs):
        p[i % lanes] = add(p[i % lanes], x, bf16)
    h = lanes // 2
    while h >= 1:
        for i in range(h):
            p[i] = add(p[i], p[i + h], bf16)
        h //= 2
    return p[0]


def pairwise_ones(n: int, lanes: int, bf16: bool) -> float:
    """pairwise_sum of n ones, from the lane counts: each lane holds n // lanes or one more."""
    q, r = divmod(n, lanes)
    p = [serial_ones(q + (i < r), bf16) for i in range(lanes)]
    h = lanes // 2
    while h >= 1:
        for i in range(h):
            p[i] = add(p[i], p[i + h], bf16)
        h //= 2
    return p[0]


def nearest_bf16(x: float) -> float:
    return round_bf16(x)


def relative_error(got: float, exact: float) -> float:
    return abs(got - exact) / abs(exact)


def error_bound_recursive(n: int, u: float) -> float:
    """The classical bound on the relative error of recursive summation of non-negative terms:
    (n - 1) u, to first order (Higham, Accuracy and Stability of Numerical Algorithms, ch. 4)."""
    return (n - 1) * u


def error_bound_pairwise(n: int, u: float) -> float:
    """Pairwise summation: ceil(log2 n) u, to first order."""
    return math.ceil(math.log2(n)) * u if n > 1 else 0.0


def expected_stall_k(mean: float, fmt: Format = BF16) -> float:
    """K at which a sequential accumulator of terms of mean `mean` stops growing on average: when the
    sum s ~ K * mean reaches the point where a mean term is half the gap, mean = s 2^-(m+1), so
    K = 2^(m+1) whatever the mean (the sum is then 2^(m+1) * mean)."""
    return float(2 ** (fmt.mantissa_bits + 1))
