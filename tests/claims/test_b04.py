"""Claims of module B04 (fp8 and below).

The four formats are enumerated with ml_dtypes and with the course's model (tutor_build.models.fp8); the C++
codec and host reference of the CUDA and HIP labs, compiled host-only with g++, must agree with ml_dtypes on all
256 patterns and on many floats. Every number the pages derive (limits, binades, table sizes, ridge points,
bytes in flight) is recomputed here from ml_dtypes, the hardware table or the lab sources, and read back from
the module's text with prose.states; corrected figures are pinned absent with prose.never_states.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prose import never_states, states  # noqa: E402
from requirements_gate import need  # noqa: E402

from tutor_build.measurements import records  # noqa: E402
from tutor_build.models import fp8, hardware  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DTYPES = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2": ml_dtypes.float8_e5m2,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
}
PAGE_NAME = {"e4m3": "OCP E4M3", "e4m3fnuz": "FNUZ E4M3", "e5m2": "OCP E5M2", "e5m2fnuz": "FNUZ E5M2"}

# Constants of the method, each named once with its source:
PACKED_FP32 = 2  # CDNA 3 ISA: V_PK_FMA_F32 does two FP32 FMAs per lane; the 163.4 TFLOP/s peak counts it
INT_OPS_PER_CLOCK = 64  # CUDA guide, throughput table, cc 9.0: 32-bit integer add/logic/shift per SM per clock
FP32_LANES = 128  # H100 whitepaper: FP32 lanes per SM (the 67 TFLOP/s peak is units x 128 x 2 x clock)
FLOAT_BYTES, FP8_BYTES = 4, 1  # the quantize kernels read float32 and write one byte per element


def md_decode(bits: int, fmt: str) -> float:
    return float(np.array([bits], dtype=np.uint8).view(DTYPES[fmt])[0])


def md_encode(x: np.ndarray, fmt: str) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(DTYPES[fmt]).view(np.uint8)


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


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


# ---------------------------------------------------------------- what the pages derive
def _finite_codes(fmt: str) -> np.ndarray:
    vals = np.arange(128, dtype=np.uint8).view(DTYPES[fmt]).astype(np.float64)
    return vals[np.isfinite(vals)]


def test_table_limits_are_printed():
    """The format table: the largest finite code and value of each format, as ml_dtypes has them."""
    for fmt, dt in DTYPES.items():
        fi = ml_dtypes.finfo(dt)
        codes = np.arange(128, dtype=np.uint8)
        vals = codes.view(dt).astype(np.float64)
        top = int(codes[np.isfinite(vals)][np.argmax(vals[np.isfinite(vals)])])
        assert float(fi.max) == fp8.FORMATS[fmt].max
        row = states("B04", f"0x{top:02X} = {float(fi.max):.0f}", near=f"(`{dt.__name__}`)")
        assert f"2^{{{int(math.log2(float(fi.smallest_subnormal)))}}}" in row


def test_fnuz_range_binades():
    """Bias + 1 moves every value a binade down; E4M3 loses the top binade, E5M2 keeps its maximum."""
    span = {f: math.log2(float(ml_dtypes.finfo(d).max) / float(ml_dtypes.finfo(d).smallest_subnormal))
            for f, d in DTYPES.items()}
    para = states("B04", f"{span['e4m3']:.1f}", near="binades for")
    for f in ("e4m3fnuz", "e5m2", "e5m2fnuz"):
        assert re.search(rf"(?<![\d.]){span[f]:.1f}(?!\d)", para), (f, para)
    assert span["e5m2fnuz"] - span["e5m2"] == pytest.approx(1.0)  # one binade more, none lost at the top
    assert round(span["e4m3fnuz"] - span["e4m3"], 1) == 0.1  # same span (only 0x7F gained), shifted down
    mx = {f: float(ml_dtypes.finfo(d).max) for f, d in DTYPES.items()}
    assert mx["e5m2"] == mx["e5m2fnuz"] and mx["e4m3fnuz"] < mx["e4m3"] / 1.8
    states("B04", f"from {mx['e4m3']:.0f} to {mx['e4m3fnuz']:.0f}", near="nearly halves")
    states("B04", f"{mx['e5m2fnuz']:.0f}", near="the maximum stays")
    never_states("B04", "to keep roughly the same range")
    never_states("B04", "FNUZ trades one binade at the top for one at the bottom.")


def test_reference_table_sizes():
    """The host reference's table holds codes 0..max_code: the non-negative finite values of the format."""
    counts = {f: len(_finite_codes(f)) for f in DTYPES}
    for f, n in counts.items():
        assert fp8.FORMATS[f].max_code + 1 == n
    para = states("B04", f"{counts['e4m3']} for OCP E4M3", near="non-negative finite values")
    assert f"{counts['e5m2']} for OCP E5M2" in para
    assert counts["e4m3fnuz"] == counts["e5m2fnuz"] and f"{counts['e4m3fnuz']} for each FNUZ format" in para
    never_states("B04", "the 128 non-negative values")
    want = "(" + ", ".join(str(counts[f]) for f in ("e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz")) + ")"
    for src in ("cuda/fp8_codec.cu", "hip/fp8_codec.hip"):
        assert f"non-negative finite codes 0..max_code {want}" in (ROOT / "labs/B04" / src).read_text()


WORDS = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def test_triton_select_count():
    src = (ROOT / "labs/B04/triton/fp8_codec.py").read_text()
    body = src.split("def encode_fp8(")[1].split("@triton.jit")[0]
    n = body.count("tl.where(")
    states("B04", f"{WORDS[n]} selects", near="tl.where")
    for k in WORDS:
        if k != n:
            never_states("B04", f"{WORDS[k]} selects")


def test_fp32_ridges_like_for_like():
    """The kernel's FLOP are multiplies: one FLOP per lane and instruction, where the peaks count an FMA
    as two (and CDNA 3's packed FMA as four)."""
    fma = 2
    h200_roof = hardware.peak("h200", "fp32") / fma
    h200 = h200_roof / hardware.value("h200", "hbm_bw")
    mi_roof = hardware.peak("mi300x", "fp32") / PACKED_FP32 / fma
    mi = mi_roof / hardware.value("mi300x", "hbm_bw")
    mi_packed = hardware.peak("mi300x", "fp32") / hardware.value("mi300x", "hbm_bw")
    para = states("B04", f"{h200_roof / 1e12:.1f} TFLOP/s", near="**H200**: the 67 TFLOP/s FP32 peak")
    assert f"= {h200:.1f} FLOP/byte" in para and f"({2 * h200:.0f} FLOP/byte for a kernel of FMAs)" in para
    para = states("B04", f"{mi_roof / 1e12:.1f} TFLOP/s", near="like-for-like roof is a quarter")
    assert f"= {mi:.1f} FLOP/byte" in para and f"({mi_packed:.0f} FLOP/byte with packed" in para
    # intensities of the table: n FLOP per 5n bytes (casts), 2n per 5n (delayed, MX)
    lo_i, hi_i = 1 / (FLOAT_BYTES + FP8_BYTES), 2 / (FLOAT_BYTES + FP8_BYTES)
    lo, hi = min(h200, mi) / hi_i, max(h200, mi) / lo_i
    states("B04", f"{lo:.0f} to {hi:.0f} times below", near="FP32 ridge on both machines")
    for wrong in ("35 to 150", "35 to 77", "163.4 TFLOP/s FP32 / 5.3 TB/s = 31 FLOP/byte", "81.7 TFLOP/s"):
        never_states("B04", wrong)
    para = states("B04", f"{mi_roof / 1e12:.1f} TFLOP/s", near="float32 peak", files="3-silicon.md")
    assert f"{h200_roof / 1e12:.1f} TFLOP/s" in para


def test_integer_ridge():
    sms = hardware.value("h200", "units")
    clock = hardware.peak("h200", "fp32") / (sms * FP32_LANES * 2)
    ints = sms * INT_OPS_PER_CLOCK * round(clock / 1e9, 2) * 1e9  # the page multiplies by the rounded clock
    per_element = ints / (hardware.value("h200", "hbm_bw") / (FLOAT_BYTES + FP8_BYTES))
    para = states("B04", f"{clock / 1e9:.2f} GHz", near="integer pipe")
    assert f"{ints / 1e12:.1f} \\times 10^{{12}}" in para
    states("B04", f"about {per_element:.0f} integer instructions per element", near="integer ridge")


def _loop_loads() -> tuple[int, int]:
    """Bytes each thread loads per iteration in the codec's encode_kernel and in quantize_tensor."""
    codec = (ROOT / "labs/B04/cuda/fp8_codec.cu").read_text().split("__global__ void encode_kernel")[1]
    codec = codec.split("__global__")[0]
    quant = (ROOT / "labs/B04/cuda/quantize.cu").read_text().split("__global__ void quantize_tensor(")[1]
    quant = quant.split("__global__")[0]
    assert "fp8_encode<F>(x[i], saturate)" in codec  # one float per iteration
    assert "reinterpret_cast<const float4*>(x)[i]" in quant  # one float4 per iteration
    return FLOAT_BYTES, 4 * FLOAT_BYTES


def test_bytes_in_flight():
    """Little's law for the two kernels: one load per warp in flight, at most 64 warps per SM."""
    codec_b, quant_b = _loop_loads()
    warps = hardware.value("h200", "units") * hardware.value("h200", "max_warps_per_unit")
    lanes = hardware.value("h200", "lanes")
    reads = hardware.value("h200", "hbm_bw") * FLOAT_BYTES / (FLOAT_BYTES + FP8_BYTES)
    codec, quant = warps * lanes * codec_b, warps * lanes * quant_b
    para = states("B04", f"{codec / 1e6:.2f} MB", near="Little's law")
    assert f"{reads / 1e12:.2f} TB/s = {codec / reads * 1e9:.0f} ns" in para
    para = states("B04", f"{quant / 1e6:.2f} MB in flight", near="16 bytes per thread")
    assert f"{quant / reads * 1e6:.2f} µs" in para
    card = states("B04", f"{quant / 1e6:.2f} MB in flight", near="integer instructions", files="cards")
    assert f"({codec / 1e6:.2f} MB)" in card and f"{codec / reads * 1e9:.0f} ns" in card


def test_scales_per_k_block():
    para = states("B04", "once per output element", near="With one scale per tensor")
    assert "once per $K$ block" in para and "[@deepseek-v3]" in para and "14 bits" in para
    never_states("B04", "and the product of the two operands' scales is applied to the accumulator")


def test_unmeasured_claims_are_gone():
    never_states("B04", "runs much closer to the ceiling")
    never_states("B04", "some 30 times higher")
    never_states("B04", "shows the same limit")


# ---------------------------------------------------------------- what the records show
def _share(key: str) -> float:
    recs = records(ROOT)
    assert key in recs, f"no record {key}: run `tutor labs bench B04 --lab {key.split('/')[1]} --vendor cuda --course`"
    rec = recs[key]
    return rec["value"] / rec["ceiling"]["value"]


def test_quantize_beats_codec_with_the_same_encoder():
    """The page says the codec lands well below the quantize kernel with the same software encoder."""
    assert _share("B04/fp8_codec/encode_e4m3/cuda") < 0.8 * _share("B04/quantize/tensor_e4m3/cuda")


def test_hardware_conversion_separates_the_two_limits():
    """tensor_e4m3_hw (same memory access as the cast) must gain; the codec's hw loop gains too, yet stays
    further below copy than the hw cast, as the bytes-in-flight bound predicts. Records from one H200."""
    sw_q, hw_q = _share("B04/quantize/tensor_e4m3/cuda"), _share("B04/quantize/tensor_e4m3_hw/cuda")
    sw_c, hw_c = _share("B04/fp8_codec/encode_e4m3/cuda"), _share("B04/fp8_codec/encode_e4m3_hw/cuda")
    assert hw_q > sw_q and hw_c > sw_c
    assert hw_c < hw_q
    assert hw_c <= _share("B04/quantize/amax/cuda") * (FLOAT_BYTES + FP8_BYTES) / FLOAT_BYTES * 1.15


# ---------------------------------------------------------------- the C++ codec of the labs
def _build(src: Path, tmp_path: Path) -> Path:
    need(shutil.which("g++") is not None, "g++ is needed to build the labs' codec host-only")
    exe = tmp_path / (src.parent.name + "_fp8_host")
    subprocess.run(
        ["g++", "-O2", "-std=c++17", "-x", "c++", "-DB04_HOST_ONLY", str(src), "-o", str(exe)],
        check=True,
    )
    return exe


LAB_SOURCES = [ROOT / "labs/B04/cuda/fp8_codec.cu", ROOT / "labs/B04/hip/fp8_codec.hip"]
NAMES = ["e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz"]


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
