"""EXERCISE: fill in the TODOs of encode_fp8; the checks fail until they are right.

B04 fp8_codec (Triton): float32 <-> 8-bit float by bit manipulation, in the four formats
e4m3 (OCP, bias 7, max 448), e4m3fnuz (CDNA 3, bias 8, max 240), e5m2 (OCP, bias 15, inf) and
e5m2fnuz (CDNA 3, bias 16, max 57344), checked bit for bit against ml_dtypes.

    python labs/B04/triton/fp8_codec.py            all 256 patterns + tricky random floats
    TRITON_INTERPRET=1 python ... --quick          the same on the CPU
    python labs/B04/triton/fp8_codec.py --bench    encode bandwidth vs the copy ceiling

It also demonstrates the two format-confusion bugs: FNUZ bits read as OCP (every value doubles,
a NaN becomes -0.0) and OCP bits read as FNUZ (every value halves, -0.0 becomes NaN).
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
import tutor_lab as lab  # noqa: E402

# name: (mantissa bits, bias, largest finite code, NaN code, fnuz, has inf, ml_dtypes type)
FORMATS = {
    "e4m3": (3, 7, 0x7E, 0x7F, False, False, ml_dtypes.float8_e4m3fn),
    "e4m3fnuz": (3, 8, 0x7F, 0x80, True, False, ml_dtypes.float8_e4m3fnuz),
    "e5m2": (2, 15, 0x7B, 0x7E, False, True, ml_dtypes.float8_e5m2),
    "e5m2fnuz": (2, 16, 0x7F, 0x80, True, False, ml_dtypes.float8_e5m2fnuz),
}


@triton.jit
def _shift_round_even(v, s):
    """v >> s rounded to nearest, ties to even (v >= 0, 1 <= s <= 30), elementwise."""
    one = tl.full(v.shape, 1, tl.int32)
    q = v >> s
    rem = v & ((one << s) - 1)
    half = one << (s - 1)
    up = (rem > half) | ((rem == half) & ((q & 1) == 1))
    return q + up.to(tl.int32)


@triton.jit
def encode_fp8(x, MBITS: tl.constexpr, BIAS: tl.constexpr, MAX_CODE: tl.constexpr,
               NAN_CODE: tl.constexpr, FNUZ: tl.constexpr, HAS_INF: tl.constexpr,
               SATURATE: tl.constexpr):
    """float32 tile -> int32 tile of fp8 codes (0..255), round to nearest even."""
    u = x.to(tl.int32, bitcast=True)
    sign = (u >> 24) & 0x80
    a = u & 0x7FFFFFFF  # |x| as bits
    if FNUZ:
        nan = tl.full(u.shape, NAN_CODE, tl.int32)
    else:
        nan = sign | NAN_CODE
    if SATURATE:
        overflow = sign | MAX_CODE
    elif HAS_INF:
        overflow = sign | 0x7C
    else:
        overflow = nan
    e = (a >> 23) - 127  # unbiased exponent; fp32 subnormals land far below the fp8 range
    te = e + BIAS  # the exponent field x would have in fp8
    # normal: exponent and mantissa side by side, so a rounding carry moves into the exponent
    # TODO 1: code_norm = |x| as an fp8 normal code (exponent field, then MBITS mantissa bits, no
    #         sign), rounded to nearest even by _shift_round_even. Which of a's bits must go?
    code_norm = tl.zeros(u.shape, tl.int32)
    # subnormal: significand with its hidden 1, shifted onto the grid 2^(1 - bias - mbits)
    # TODO 2: code_sub = |x| counted in units of that grid, rounded to nearest even; a's significand
    #         (hidden 1 included) counts units of 2^(e - 23). Every lane computes both cases (tl.where
    #         picks one), so the shift must stay inside _shift_round_even's range on every lane.
    code_sub = tl.zeros(u.shape, tl.int32)
    code = tl.where(te >= 1, code_norm, code_sub)
    if FNUZ:
        zero = tl.zeros(u.shape, tl.int32)  # FNUZ has no -0
    else:
        zero = sign
    out = tl.where(code == 0, zero, sign | code)
    out = tl.where(code > MAX_CODE, overflow, out)
    out = tl.where(a == 0x7F800000, overflow, out)  # +-inf
    out = tl.where(a > 0x7F800000, nan, out)  # NaN stays NaN
    return out


@triton.jit
def decode_fp8(b, MBITS: tl.constexpr, BIAS: tl.constexpr, FNUZ: tl.constexpr,
               HAS_INF: tl.constexpr):
    """int32 tile of codes (0..255) -> float32 tile, exact."""
    sign = (b & 0x80) << 24
    mag = b & 0x7F
    E = mag >> MBITS
    M = mag & ((1 << MBITS) - 1)
    normal = sign | ((E - BIAS + 127) << 23) | (M << (23 - MBITS))
    p = tl.where(M >= 4, 2, tl.where(M >= 2, 1, 0))  # leading 1 of a subnormal mantissa
    one = tl.full(b.shape, 1, tl.int32)
    sub = sign | ((p + 1 - BIAS - MBITS + 127) << 23) | ((M - (one << p)) << (23 - p))
    bits = tl.where(E == 0, tl.where(M == 0, sign, sub), normal)
    qnan = sign | 0x7FC00000
    if FNUZ:
        bits = tl.where(b == 0x80, 0x7FC00000, bits)
    elif HAS_INF:
        bits = tl.where(E == 31, tl.where(M == 0, sign | 0x7F800000, qnan), bits)
    else:
        bits = tl.where(mag == 0x7F, qnan, bits)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def encode_kernel(x_ptr, q_ptr, n, MBITS: tl.constexpr, BIAS: tl.constexpr,
                  MAX_CODE: tl.constexpr, NAN_CODE: tl.constexpr, FNUZ: tl.constexpr,
                  HAS_INF: tl.constexpr, SATURATE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = encode_fp8(x, MBITS, BIAS, MAX_CODE, NAN_CODE, FNUZ, HAS_INF, SATURATE)
    tl.store(q_ptr + offs, q.to(tl.uint8), mask=mask)


@triton.jit
def decode_kernel(q_ptr, y_ptr, n, MBITS: tl.constexpr, BIAS: tl.constexpr,
                  FNUZ: tl.constexpr, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(q_ptr + offs, mask=mask, other=0).to(tl.int32)
    tl.store(y_ptr + offs, decode_fp8(b, MBITS, BIAS, FNUZ, HAS_INF), mask=mask)


BLOCK = 1024


def encode(x: torch.Tensor, fmt: str, saturate: bool = False, out=None) -> torch.Tensor:
    mbits, bias, max_code, nan_code, fnuz, has_inf, _ = FORMATS[fmt]
    q = out if out is not None else lab.output(x.numel(), dtype=torch.uint8, name="q", device=x.device)
    encode_kernel[(triton.cdiv(x.numel(), BLOCK),)](
        x, q, x.numel(), mbits, bias, max_code, nan_code, fnuz, has_inf, saturate, BLOCK=BLOCK)
    return q


def decode(q: torch.Tensor, fmt: str) -> torch.Tensor:
    mbits, bias, _, _, fnuz, has_inf, _ = FORMATS[fmt]
    y = lab.output(q.numel(), dtype=torch.float32, name="y", device=q.device)
    decode_kernel[(triton.cdiv(q.numel(), BLOCK),)](q, y, q.numel(), mbits, bias, fnuz, has_inf,
                                                    BLOCK=BLOCK)
    return y


# ------------------------------------------------------------------ references and inputs
def ref_encode(x: np.ndarray, fmt: str, saturate: bool) -> np.ndarray:
    dt = FORMATS[fmt][6]
    with np.errstate(all="ignore"):
        if saturate:
            m = np.float32(ml_dtypes.finfo(dt).max)
            x = np.where(np.isnan(x), x, np.clip(x, -m, m))
        return np.asarray(x, dtype=np.float32).astype(dt).view(np.uint8)


def tricky_floats(fmt: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Exact fp8 values, exact ties and their float32 neighbours, overflow, subnormals, any bits."""
    dt = FORMATS[fmt][6]
    vals = np.arange(FORMATS[fmt][2] + 1, dtype=np.uint8).view(dt).astype(np.float64)
    mids = ((vals[1:] + vals[:-1]) / 2).astype(np.float32)
    parts = [vals, mids, np.nextafter(mids, np.float32(np.inf)),
             np.nextafter(mids, np.float32(-np.inf)),
             rng.standard_normal(n) * float(ml_dtypes.finfo(dt).max) / 3,
             np.exp(rng.uniform(-40, 20, n)),
             rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32),
             [0.0, np.inf, np.nan, 1e-45, 464.0, 248.0, 61440.0]]
    with np.errstate(all="ignore"):
        x = np.concatenate([np.asarray(p, dtype=np.float32) for p in parts])
    signs = rng.choice(np.array([-1, 1], dtype=np.float32), x.size)
    with np.errstate(all="ignore"):
        return np.concatenate([x, x * signs])


def check_codes(variant: str, got: torch.Tensor, want: np.ndarray, seed: int) -> bool:
    return lab.check("fp8_codec", variant, str(want.size), got.cpu().to(torch.float32),
                     torch.from_numpy(want.astype(np.float32)), seed)


def verify(fmt: str, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dt = FORMATS[fmt][6]
    # decode: all 256 patterns, compared as float32 bit patterns (NaN must stay NaN)
    codes = np.arange(256, dtype=np.uint8)
    y = decode(torch.from_numpy(codes).to(lab.DEVICE), fmt).cpu().numpy()
    want = codes.view(dt).astype(np.float32)
    bad = ~((np.isnan(y) & np.isnan(want)) | (y.view(np.uint32) == want.view(np.uint32)))
    lab.check("fp8_codec", f"decode_{fmt}", "256", torch.tensor(bad.astype(np.float32)),
              torch.zeros(256), seed)
    # encode: tricky floats, both saturation modes
    x = tricky_floats(fmt, n, rng)
    xt = torch.from_numpy(x).to(lab.DEVICE)
    for sat in (False, True):
        check_codes(f"encode_{fmt}" + ("_sat" if sat else ""), encode(xt, fmt, sat),
                    ref_encode(x, fmt, sat), seed)


def demonstrate(seed: int) -> None:
    """The two format-confusion bugs, printed as JSON lines and checked."""
    w = lab.rand(4096, lo=-2.0, hi=2.0)
    for writer, reader in (("e4m3fnuz", "e4m3"), ("e4m3", "e4m3fnuz")):
        q = encode(w, writer, saturate=True)
        right, wrong = decode(q, writer), decode(q, reader)
        nz = right != 0
        ratio = (wrong[nz] / right[nz]).unique().tolist()
        lab.emit({"event": "demo", "lab": "fp8_codec", "what": "checkpoint misread",
                  "written_as": writer, "read_as": reader, "value_ratio": ratio,
                  "bits_of_1.0": hex(int(encode(torch.ones(1, device=w.device), writer)[0])),
                  "1.0_reads_as": float(decode(encode(torch.ones(1, device=w.device), writer),
                                               reader)[0])})
        expect = 2.0 if writer == "e4m3fnuz" else 0.5
        lab.check("fp8_codec", f"demo_ratio_{writer}_as_{reader}", "4096",
                  torch.tensor(ratio), torch.tensor([expect]), seed)
    special = torch.tensor([float("nan"), -0.0], device=w.device)
    nan_fnuz = encode(special[:1], "e4m3fnuz")  # 0x80
    negz_ocp = encode(special[1:], "e4m3")  # 0x80
    nan_as_ocp = decode(nan_fnuz, "e4m3")[0]
    negz_as_fnuz = decode(negz_ocp, "e4m3fnuz")[0]
    lab.emit({"event": "demo", "lab": "fp8_codec", "what": "NaN and zero",
              "fnuz_nan_bits": hex(int(nan_fnuz[0])), "read_as_ocp": str(float(nan_as_ocp)),
              "ocp_minus_zero_bits": hex(int(negz_ocp[0])),
              "read_as_fnuz": str(float(negz_as_fnuz))})
    ok = (int(nan_fnuz[0]) == 0x80 and float(nan_as_ocp) == 0.0
          and bool(torch.signbit(nan_as_ocp)) and bool(torch.isnan(negz_as_fnuz)))
    lab.check("fp8_codec", "demo_nan_becomes_minus_zero", "1", torch.tensor([float(ok)]),
              torch.tensor([1.0]), seed)


def bench() -> None:
    n = 1 << 28
    ceiling = lab.copy_ceiling()
    x = lab.rand(n, lo=-300.0, hi=300.0)  # never time on zeros
    q = torch.empty(n, dtype=torch.uint8, device=lab.DEVICE)
    for fmt in FORMATS:
        ms = lab.median_ms(lambda: encode(x, fmt, True, out=q))
        lab.measure("fp8_codec", f"encode_{fmt}", "bandwidth", lab.gbps(5.0 * n, ms), "GB/s",
                    ceiling, nbytes=5.0 * n, ms=ms)


def main() -> int:
    args = lab.parse_args()
    if args.bench:
        bench()
        return lab.finish("fp8_codec")
    n = 2000 if args.quick else 200_000
    for fmt in FORMATS:
        verify(fmt, n, args.seed)
    demonstrate(args.seed)
    return lab.finish("fp8_codec")


if __name__ == "__main__":
    sys.exit(main())
