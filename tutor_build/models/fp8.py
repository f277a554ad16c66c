"""The four 8-bit floating-point formats of module B04, decoded and encoded in plain Python.

    e4m3      OCP E4M3 ("float8_e4m3fn"):   bias 7,  no infinity, NaN = S.1111.111, max 448
    e4m3fnuz  FNUZ E4M3 (CDNA 3):           bias 8,  no infinity, NaN = 0x80 only,   max 240
    e5m2      OCP E5M2 (IEEE-like):         bias 15, +-inf = S.11111.00, NaN = S.11111.{01,10,11}
    e5m2fnuz  FNUZ E5M2 (CDNA 3):           bias 16, no infinity, NaN = 0x80 only,   max 57344

`decode(bits, fmt)` gives the exact value as a Python float; `encode(x, fmt, saturate)` rounds a
Python float to the nearest representable value, ties to the even code (the one whose last
mantissa bit is 0), with exact rational arithmetic, so no double rounding can creep in.

Overflow: with saturate=False a finite value that rounds beyond the largest finite number becomes
+-inf (e5m2) or NaN (e4m3, and both FNUZ formats, which have no infinity); with saturate=True it
becomes +-max, and so does +-inf. NaN always stays NaN. The NaN codes produced are 0x7F|sign
(e4m3), 0x7E|sign (e5m2) and 0x80 (FNUZ), the same codes ml_dtypes produces.
A negative number that rounds to zero keeps its sign under OCP (0x80) and loses it under FNUZ
(0x00), since FNUZ has no negative zero.

Used by tests/claims/test_b04.py and by the number-formats concept player; no dependencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["FORMATS", "Format", "decode", "encode", "fmt_info"]


@dataclass(frozen=True)
class Format:
    name: str
    ebits: int
    mbits: int
    bias: int
    kind: str  # "ocp_e4m3" | "ieee" | "fnuz"
    max_code: int  # largest finite positive code
    nan_code: int  # the NaN this module emits (sign bit added for OCP)

    @property
    def max(self) -> float:
        return decode(self.max_code, self.name)

    @property
    def min_normal(self) -> float:
        return math.ldexp(1.0, 1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return math.ldexp(1.0, 1 - self.bias - self.mbits)


FORMATS: dict[str, Format] = {
    "e4m3": Format("e4m3", 4, 3, 7, "ocp_e4m3", 0x7E, 0x7F),
    "e4m3fnuz": Format("e4m3fnuz", 4, 3, 8, "fnuz", 0x7F, 0x80),
    "e5m2": Format("e5m2", 5, 2, 15, "ieee", 0x7B, 0x7E),
    "e5m2fnuz": Format("e5m2fnuz", 5, 2, 16, "fnuz", 0x7F, 0x80),
}


def fmt_info(fmt: str) -> Format:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown fp8 format {fmt!r}; expected one of {sorted(FORMATS)}") from None


def decode(bits: int, fmt: str) -> float:
    """The value of the 8-bit pattern `bits` (0..255) read as format `fmt`."""
    f = fmt_info(fmt)
    if not 0 <= bits <= 0xFF:
        raise ValueError(f"bits must be in 0..255, got {bits}")
    sign = -1.0 if bits & 0x80 else 1.0
    e = (bits >> f.mbits) & ((1 << f.ebits) - 1)
    m = bits & ((1 << f.mbits) - 1)
    emax_field = (1 << f.ebits) - 1
    if f.kind == "fnuz" and bits == 0x80:
        return math.nan
    if f.kind == "ocp_e4m3" and e == emax_field and m == (1 << f.mbits) - 1:
        return math.nan
    if f.kind == "ieee" and e == emax_field:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:  # zero or subnormal: 0.m * 2^(1 - bias)
        return sign * math.ldexp(m, 1 - f.bias - f.mbits)
    return sign * math.ldexp((1 << f.mbits) + m, e - f.bias - f.mbits)


def _round_half_even(q: Fraction) -> int:
    n = math.floor(q)
    rest = q - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return n


def encode(x: float, fmt: str, saturate: bool = False) -> int:
    """The 8-bit code of `x` in format `fmt`, rounded to nearest, ties to even."""
    f = fmt_info(fmt)
    neg = math.copysign(1.0, x) < 0
    sbit = 0x80 if neg else 0
    if math.isnan(x):
        return f.nan_code if f.kind == "fnuz" else f.nan_code | sbit
    if math.isinf(x):
        if saturate:
            return f.max_code | sbit
        if f.kind == "ieee":
            return 0x7C | sbit
        return f.nan_code if f.kind == "fnuz" else f.nan_code | sbit
    a = Fraction(abs(x))
    min_normal = Fraction(2) ** (1 - f.bias)
    if a < min_normal:
        quantum = Fraction(2) ** (1 - f.bias - f.mbits)  # subnormal spacing
    else:
        _, e2 = math.frexp(abs(x))  # abs(x) = mant * 2^e2 with mant in [0.5, 1)
        quantum = Fraction(2) ** (e2 - 1 - f.mbits)
    n = _round_half_even(a / quantum)
    value = n * quantum  # exact; may have carried into the next binade
    if value == 0:
        return 0 if f.kind == "fnuz" else sbit
    max_value = Fraction(decode(f.max_code, fmt))
    if value > max_value:
        if saturate:
            return f.max_code | sbit
        if f.kind == "ieee":
            return 0x7C | sbit
        return f.nan_code if f.kind == "fnuz" else f.nan_code | sbit
    # value is representable: find its code (codes are monotonic in value for 0..max_code)
    if value < min_normal:
        code = int(value / (Fraction(2) ** (1 - f.bias - f.mbits)))
    else:
        _, e2 = math.frexp(float(value))
        efield = e2 - 1 + f.bias
        mant = int(value / (Fraction(2) ** (e2 - 1 - f.mbits))) - (1 << f.mbits)
        code = (efield << f.mbits) | mant
    return code | sbit
