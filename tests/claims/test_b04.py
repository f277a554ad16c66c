"""Claims of module B04 (fp8 and below), checked against ml_dtypes and tutor_build.models.fp8.

Every bit pattern and value the pages quote is recomputed here; the page text must contain it;
the C++ codec and host reference of the CUDA and HIP labs (compiled host-only with g++) must
agree with ml_dtypes on all 256 patterns of all four formats and on many random floats.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from tutor_build.models import fp8  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "modules" / "B04-fp8-and-below"
DTYPES = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2": ml_dtypes.float8_e5m2,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
}


def md_decode(bits: int, fmt: str) -> float:
    return float(np.array([bits], dtype=np.uint8).view(DTYPES[fmt])[0])


def md_encode(x: np.ndarray, fmt: str) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(DTYPES[fmt]).view(np.uint8)


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def page_text() -> str:
    return "\n".join(p.read_text() for p in sorted(MODULE.glob("*.md")))


# ---------------------------------------------------------------- the model vs ml_dtypes
@pytest.mark.parametrize("fmt", sorted(DTYPES))
def test_model_decodes_all_256_patterns(fmt):
    for b in range(256):
        assert same(fp8.decode(b, fmt), md_decode(b, fmt)), (fmt, hex(b))


def tricky_floats(fmt: str, n: int = 20000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vals = np.array([fp8.decode(c, fmt) for c in range(fp8.FORMATS[fmt].max_code + 1)])
    mids = (vals[1:] + vals[:-1]) / 2
    parts = [
        vals, -vals, mids, -mids,  # exact values and exact ties
        np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
        np.nextafter(mids.astype(np.float32), np.float32(-np.inf)),
        rng.standard_normal(n) * fp8.FORMATS[fmt].max / 3,  # ordinary values and overflow
        np.exp(rng.uniform(-40, 20, n)) * rng.choice([-1, 1], n),  # subnormals to huge
        rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32),  # any bits
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45]),
    ]
    with np.errstate(all="ignore"):
        return np.concatenate([np.asarray(p, dtype=np.float32) for p in parts])


@pytest.mark.parametrize("fmt", sorted(DTYPES))
def test_model_encodes_like_ml_dtypes(fmt):
    x = tricky_floats(fmt)
    got = np.array([fp8.encode(float(v), fmt) for v in x], dtype=np.uint8)
    assert np.array_equal(got, md_encode(x, fmt))


@pytest.mark.parametrize("fmt", sorted(DTYPES))
def test_model_saturates_like_clipping(fmt):
    x = tricky_floats(fmt, n=4000, seed=1)
    x = x[np.isfinite(x)]
    m = np.float32(fp8.FORMATS[fmt].max)
    got = np.array([fp8.encode(float(v), fmt, saturate=True) for v in x], dtype=np.uint8)
    assert np.array_equal(got, md_encode(np.clip(x, -m, m), fmt))


# ---------------------------------------------------------------- the quoted facts
FACTS = [
    # (fmt, bits, value)
    ("e4m3", 0x38, 1.0),
    ("e4m3fnuz", 0x38, 0.5),
    ("e4m3fnuz", 0x40, 1.0),
    ("e4m3", 0x40, 2.0),
    ("e4m3", 0x80, -0.0),
    ("e4m3fnuz", 0x80, math.nan),
    ("e5m2", 0x80, -0.0),
    ("e5m2fnuz", 0x80, math.nan),
    ("e4m3", 0x7F, math.nan),
    ("e4m3fnuz", 0x7F, 240.0),
    ("e4m3", 0x7E, 448.0),
    ("e4m3fnuz", 0x7E, 224.0),
    ("e5m2", 0x7B, 57344.0),
    ("e5m2fnuz", 0x7F, 57344.0),
    ("e5m2", 0x7C, math.inf),
    ("e5m2fnuz", 0x7C, 32768.0),
    ("e5m2", 0x3C, 1.0),
    ("e5m2fnuz", 0x3C, 0.5),
    ("e4m3", 0x01, 2.0**-9),
    ("e4m3fnuz", 0x01, 2.0**-10),
    ("e5m2", 0x01, 2.0**-16),
    ("e5m2fnuz", 0x01, 2.0**-17),
    ("e4m3", 0x08, 2.0**-6),
    ("e4m3fnuz", 0x08, 2.0**-7),
    ("e5m2", 0x04, 2.0**-14),
    ("e5m2fnuz", 0x04, 2.0**-15),
]


@pytest.mark.parametrize("fmt,bits,value", FACTS)
def test_quoted_patterns(fmt, bits, value):
    assert same(fp8.decode(bits, fmt), value)
    assert same(md_decode(bits, fmt), value)


def test_limits_match_finfo():
    for fmt, (mx, tiny, sub) in {
        "e4m3": (448, 2.0**-6, 2.0**-9),
        "e4m3fnuz": (240, 2.0**-7, 2.0**-10),
        "e5m2": (57344, 2.0**-14, 2.0**-16),
        "e5m2fnuz": (57344, 2.0**-15, 2.0**-17),
    }.items():
        fi = ml_dtypes.finfo(DTYPES[fmt])
        f = fp8.FORMATS[fmt]
        assert float(fi.max) == f.max == mx
        assert float(fi.tiny) == f.min_normal == tiny
        assert float(fi.smallest_subnormal) == f.min_subnormal == sub


def test_misread_checkpoint_directions():
    """FNUZ bits read as OCP double every finite nonzero value; OCP bits read as FNUZ halve it."""
    for b in range(256):
        fn, oc = fp8.decode(b, "e4m3fnuz"), fp8.decode(b, "e4m3")
        if math.isfinite(fn) and math.isfinite(oc) and fn != 0:
            assert oc == 2 * fn
        fn, oc = fp8.decode(b, "e5m2fnuz"), fp8.decode(b, "e5m2")
        if math.isfinite(fn) and math.isfinite(oc) and fn != 0:
            assert oc == 2 * fn
    # a weight of 1.0 written by a CDNA 3 (FNUZ) exporter is 0x40; an OCP reader sees 2.0
    assert fp8.encode(1.0, "e4m3fnuz") == 0x40 and fp8.decode(0x40, "e4m3") == 2.0
    # a weight of 1.0 written by an OCP exporter is 0x38; a FNUZ reader sees 0.5
    assert fp8.encode(1.0, "e4m3") == 0x38 and fp8.decode(0x38, "e4m3fnuz") == 0.5


def test_nan_zero_confusions():
    # a NaN written in FNUZ is 0x80; an OCP reader sees -0.0: the NaN vanishes silently
    assert fp8.encode(math.nan, "e4m3fnuz") == 0x80
    assert same(fp8.decode(0x80, "e4m3"), -0.0)
    # a -0.0 (or a tiny negative value) written in OCP is 0x80; a FNUZ reader sees NaN
    assert fp8.encode(-0.0, "e4m3") == 0x80 and fp8.encode(-1e-6, "e4m3") == 0x80
    assert math.isnan(fp8.decode(0x80, "e4m3fnuz"))
    # an OCP NaN (0x7F) read as FNUZ is the largest finite value, 240
    assert fp8.encode(math.nan, "e4m3") == 0x7F and fp8.decode(0x7F, "e4m3fnuz") == 240.0
    # FNUZ cannot store -0: a tiny negative value rounds to +0
    assert fp8.encode(-1e-6, "e4m3fnuz") == 0x00


def test_rounding_and_overflow_quotes():
    assert fp8.encode(464.0, "e4m3") == 0x7E  # tie between 448 and 480 -> 448 (even)
    assert fp8.encode(465.0, "e4m3") == 0x7F  # beyond: NaN (no infinity in e4m3)
    assert fp8.encode(248.0, "e4m3fnuz") == 0x80  # tie between 240 and 256 -> 256 -> NaN
    assert fp8.encode(61440.0, "e5m2") == 0x7C  # tie -> 65536 -> inf
    assert fp8.encode(1000.0, "e4m3", saturate=True) == 0x7E
    assert fp8.encode(math.inf, "e4m3fnuz", saturate=True) == 0x7F
    assert fp8.encode(1.0625, "e4m3") == 0x38  # tie between 1.0 and 1.125 -> 1.0 (even)
    assert fp8.encode(1.1875, "e4m3") == 0x3A  # tie between 1.125 and 1.25 -> 1.25 (even)
    for fmt in ("e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz"):
        for x in (464.0, 465.0, 248.0, 61440.0, 1.0625, 1.1875):
            assert fp8.encode(x, fmt) == int(md_encode(np.array([x]), fmt)[0])


def test_page_contains_the_quoted_values():
    text = page_text()
    for needle in [
        "0_0111_000", "0x38", "0x40", "0x80", "0x7F", "0x7E", "0x7C", "448", "240", "57344",
        "2^{-9}", "2^{-10}", "2^{-16}", "2^{-17}", "464", "248", "61440", "E8M0",
    ]:
        assert needle in text, needle


# ---------------------------------------------------------------- the C++ codec of the labs
def _build(src: Path, tmp_path: Path) -> Path:
    exe = tmp_path / (src.parent.name + "_fp8_host")
    subprocess.run(
        ["g++", "-O2", "-std=c++17", "-x", "c++", "-DB04_HOST_ONLY", str(src), "-o", str(exe)],
        check=True,
    )
    return exe


LAB_SOURCES = [ROOT / "labs/B04/cuda/fp8_codec.cu", ROOT / "labs/B04/hip/fp8_codec.hip"]
NAMES = ["e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
@pytest.mark.parametrize("src", LAB_SOURCES, ids=["cuda", "hip"])
def test_cpp_codec_decodes_like_ml_dtypes(src, tmp_path):
    exe = _build(src, tmp_path)
    out = subprocess.run([str(exe), "decode"], check=True, capture_output=True, text=True).stdout
    lines = out.split("\n")[:-1]
    assert len(lines) == 4 * 256
    for line in lines:
        fmt, b, ref_bits, dev_bits = line.split()
        want = md_decode(int(b), fmt)
        for got in (ref_bits, dev_bits):
            val = math.nan if got == "nan" else float(np.uint32(int(got)).view(np.float32))
            assert same(val, want), (src.parent.name, fmt, b, got)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
@pytest.mark.parametrize("src", LAB_SOURCES, ids=["cuda", "hip"])
def test_cpp_codec_encodes_like_ml_dtypes(src, tmp_path):
    exe = _build(src, tmp_path)
    x = np.concatenate([tricky_floats(f, n=5000, seed=3) for f in NAMES])
    stdin = "\n".join(f"{v:08x}" for v in x.view(np.uint32)) + "\n"
    out = subprocess.run([str(exe), "encode"], input=stdin, check=True, capture_output=True,
                         text=True).stdout
    got = np.array([[int(t) for t in line.split()] for line in out.split("\n")[:-1]])
    assert got.shape == (len(x), 16)
    for k, fmt in enumerate(NAMES):
        want = md_encode(x, fmt)
        m = np.float32(fp8.FORMATS[fmt].max)
        with np.errstate(invalid="ignore"):
            want_sat = md_encode(np.where(np.isnan(x), x, np.clip(x, -m, m)), fmt)
        for col, expect in ((4 * k, want), (4 * k + 1, want), (4 * k + 2, want_sat),
                            (4 * k + 3, want_sat)):
            bad = np.nonzero(got[:, col] != expect)[0]
            assert bad.size == 0, (src.parent.name, fmt, col, hex(x.view(np.uint32)[bad[0]]))
