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
    para = states("B04", f"{codec / 1e6:.2f} MB", near="read bandwidth = bytes in flight")
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


# ---------------------------------------------------------------- bytes in flight, variant by variant
# Constants of the method: the latency is A01's stated round assumption with its +-40% (read back below);
# a float4 load is 16 bytes; the Triton default of num_warps is 4 (triton.Config).
LATENCY_S, LATENCIES_S = 500e-9, (300e-9, 700e-9)
VECTOR_BYTES = 16
TRITON_NUM_WARPS = 4
QUANT_CU, QUANT_PY = ROOT / "labs/B04/cuda/quantize.cu", ROOT / "labs/B04/triton/quantize.py"
AMAX, AMAX_VEC = "B04/quantize/amax/cuda", "B04/quantize/amax_vec/cuda"
MX, MX_VEC, MX_HW = ("B04/quantize/mxfp8_e4m3/cuda", "B04/quantize/mxfp8_e4m3_vec/cuda",
                     "B04/quantize/mxfp8_e4m3_hw/cuda")
T_AMAX, T_CHUNKED, T_TWO = ("B04/quantize/amax/triton", "B04/quantize/amax_chunked/triton",
                            "B04/quantize/amax_two_pass/triton")
SMS = hardware.value("h200", "units")
THREADS_PER_SM = int(hardware.value("h200", "max_warps_per_unit") * hardware.value("h200", "lanes"))
REGS_PER_SM = int(hardware.value("h200", "regs_per_unit"))


def _rec(key: str) -> dict:
    recs = records(ROOT)
    assert key in recs, f"no record {key}: run `tutor labs bench B04 --lab quantize --course` on the H200"
    return recs[key]


def _kernel(src: str, head: str) -> str:
    body = src.split(head, 1)[1]
    return body.split("\n}\n", 1)[0]


def _const(src: str, name: str) -> int:
    return int(re.search(rf"\b{name}\s*=\s*(\d+)", src).group(1))


def _need_per_sm(latency: float) -> float:
    """Little's law: bytes in flight for the copy ceiling measured in the quantize run, per SM."""
    return _rec(AMAX)["ceiling"]["value"] * 1e9 * latency / SMS


def _resident_threads(regs: int, block: int) -> int:
    """Threads an SM holds for a kernel of `regs` registers per thread in blocks of `block` threads."""
    unit = int(hardware.value("h200", "reg_alloc_unit"))
    lanes = int(hardware.value("h200", "lanes"))
    per_warp = -(-regs * lanes // unit) * unit
    warps = min(REGS_PER_SM // per_warp, int(hardware.value("h200", "max_warps_per_unit")))
    return warps // (block // lanes) * block


def _ptxas_registers() -> dict[str, int]:
    """Registers per thread of each quantize kernel, from ptxas (CUDA 13.0, sm_90a)."""
    need(shutil.which("nvcc") is not None, "nvcc is needed to read the kernels' register counts")
    out = subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-cubin", "-Xptxas", "-v",
                          "-I", str(ROOT / "labs/common/cuda"), "-o", "/dev/null", str(QUANT_CU)],
                         check=True, capture_output=True, text=True, cwd=ROOT / "labs/B04/cuda").stderr
    regs = {}
    for name, used in re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", out, re.S):
        regs[name] = int(used)
    return regs


def test_little_requirement_from_the_measured_copy():
    states("A01", "$L = 500$ ns", near="We take a round")
    para = states("B04", f"= {_need_per_sm(LATENCY_S) * SMS / 1e6:.1f} MB in flight", near="What the memory needs")
    lo, hi = (_need_per_sm(t) for t in LATENCIES_S)
    assert f"{_need_per_sm(LATENCY_S) / 1e3:.0f} KB on each of" in para and f"{SMS:.0f} SMs" in para
    assert f"({lo / 1e3:.1f} KB at 300 ns, {hi / 1e3:.0f} KB at 700 ns)" in para
    states("B04", "500 ns is an assumption with about ±40% on it (300 to 700 ns)", near="Little's law (module A01")


def test_scalar_amax_is_latency_bound_by_littles_law():
    src = QUANT_CU.read_text()
    body = _kernel(src, "__global__ void amax_kernel(")
    assert "m = fmaxf(m, fabsf(x[i]));" in body  # one 4-byte load per thread and iteration
    per_sm = THREADS_PER_SM * FLOAT_BYTES
    total = per_sm * SMS
    cap = {t: total / t for t in (LATENCY_S, *LATENCIES_S)}
    copy = _rec(AMAX)["ceiling"]["value"] * 1e9
    para = states("B04", f"`amax`: {per_sm / 1e3:.1f} KB per SM", near="What the memory needs")
    assert f"{total / 1e6:.2f} MB / 500 ns = {cap[LATENCY_S] / 1e12:.2f} TB/s" in para
    assert f"{cap[LATENCY_S] / copy:.0%} of the copy" in para
    assert f"{cap[300e-9] / 1e12:.2f} TB/s at 300 ns and {cap[700e-9] / 1e12:.2f} TB/s at 700 ns" in para
    assert f"under the {REGS_PER_SM // THREADS_PER_SM} that full occupancy leaves" in para
    assert f"{REGS_PER_SM:,} registers per SM over {THREADS_PER_SM:,} threads" in para
    measured = _rec(AMAX)["value"] * 1e9
    assert cap[700e-9] <= measured <= cap[300e-9], "the record must fall inside the 300-700 ns range"
    assert f"latency of about {round(total / measured * 1e9, -1):.0f} ns" in para
    assert per_sm < _need_per_sm(LATENCY_S) and "latency-bound" in para
    card = states("B04", f"{per_sm / 1e3:.1f} KB in flight per SM", near="amax_vec", files="cards")
    assert f"the {_need_per_sm(LATENCY_S) / 1e3:.0f} KB" in card and "500 ns" in card
    unroll = _const(QUANT_CU.read_text(), "kUnroll")
    vec = THREADS_PER_SM * unroll * VECTOR_BYTES
    assert f"{vec / 1e3:.0f} KB per SM" in card and f"{vec / _need_per_sm(LATENCY_S):.1f} times" in card


def test_vectorized_variants_keep_enough_bytes_in_flight():
    src = QUANT_CU.read_text()
    unroll = _const(src, "kUnroll")
    amax_vec = _kernel(src, "__global__ void amax_vec_kernel(")
    assert "for (int u = 0; u < kUnroll; ++u) v[u] = x4[i + u * stride];" in amax_vec
    assert "i += kUnroll * stride" in amax_vec and "if (t < n - 4 * n4)" in amax_vec  # grid-stride, tail
    assert "block_max_shuffle(m, amax_bits);" in amax_vec
    per_thread = unroll * VECTOR_BYTES
    per_sm = THREADS_PER_SM * per_thread
    need_500, need_700 = _need_per_sm(LATENCY_S), _need_per_sm(700e-9)
    para = states("B04", f"`amax_vec`: {per_sm / 1e3:.0f} KB per SM", near="What the memory needs")
    assert f"{per_thread} bytes per thread" in para and f"`kUnroll` = {unroll}" in para
    assert f"{per_sm / need_500:.1f} times the {need_500 / 1e3:.0f} KB" in para
    assert f"still {per_sm / need_700:.1f} times at 700 ns" in para
    # one atomic per block; the grid is capped by grid_for
    cap = int(re.search(r"\(work \+ kThreads - 1\) / kThreads, (\d+)\)", src).group(1))
    n = 2 ** int(re.search(r"bench\(v, size_t\(1\) << (\d+)", src).group(1))
    blocks = min(-(-(n // 4 // unroll + 1) // _const(src, "kThreads")), cap)
    assert f"{blocks:,} atomics per call" in para
    # the MX kernels: the scalar one's four loads, the vectorized one's kUnroll float4s
    mx = _kernel(src, "__global__ void quantize_mx(")
    assert mx.count("x[i]") == 1 and "for (int k = 0; k < 4; ++k)" in mx
    mx_sm = THREADS_PER_SM * 4 * FLOAT_BYTES
    para = states("B04", f"`mxfp8_e4m3`: {mx_sm / 1e3:.0f} KB per SM", near="What the memory needs")
    assert round(mx_sm / need_500) == 2 and "twice the" in para
    assert "reinterpret_cast<const float4*>(x)[i / 4]" in _kernel(src, "__global__ void quantize_mx_vec(")


def test_register_counts_and_occupancy_on_the_page():
    regs = _ptxas_registers()
    block = _const(QUANT_CU.read_text(), "kThreads")
    want = {"_Z11amax_kernelPKfmPj": 13, "_Z15amax_vec_kernelPKfmPj": 31, "_Z11quantize_mxPKfPhS1_m": 21,
            "_Z15quantize_mx_vecILb0EEvPKfPhS2_m": 36}
    page = {k: regs[k] for k in want}
    para = states("B04", f"needs {page['_Z11amax_kernelPKfmPj']} registers per thread", near="What the memory needs")
    assert f"the kernel needs {page['_Z15amax_vec_kernelPKfmPj']} registers" in para
    assert f"needs {page['_Z11quantize_mxPKfPhS1_m']} registers" in para
    for k in ("_Z11amax_kernelPKfmPj", "_Z15amax_vec_kernelPKfmPj", "_Z11quantize_mxPKfPhS1_m"):
        assert _resident_threads(page[k], block) == THREADS_PER_SM, k
    mx_vec = _resident_threads(page["_Z15quantize_mx_vecILb0EEvPKfPhS2_m"], block)
    unroll = _const(QUANT_CU.read_text(), "kUnroll")
    assert (f"{mx_vec * unroll * VECTOR_BYTES / 1e3:.0f} KB per SM at the {mx_vec:,} threads its "
            f"{page['_Z15quantize_mx_vecILb0EEvPKfPhS2_m']} registers allow") in para


def test_triton_amax_atomics_and_the_two_alternatives():
    src = QUANT_PY.read_text()
    block = _const(src, "BLOCK")
    chunk = int(re.search(r"CHUNK = (\d+) \* (\d+)", src).group(1)) * int(re.search(r"CHUNK = (\d+) \* (\d+)", src).group(2))
    assert "amax_kernel[grid](x, amax, n, BLOCK=BLOCK)" in src  # the default num_warps
    per_thread = block // (TRITON_NUM_WARPS * int(hardware.value("h200", "lanes"))) * FLOAT_BYTES
    per_sm = THREADS_PER_SM * per_thread
    n = 1 << 28
    programs = n // block
    rec = _rec(T_AMAX)
    seconds = FLOAT_BYTES * n / (rec["value"] * 1e9)
    para = states("B04", f"{programs:,} programs", near="Triton's `amax`: the atomics")
    assert f"loads {per_thread // FLOAT_BYTES} floats per thread" in para and f"{per_thread} bytes" in para
    assert f"{per_sm / 1e3:.0f} KB per SM in flight" in para
    assert round(per_sm / _need_per_sm(LATENCY_S)) == 4 and "four times the need" in para
    assert f"{FLOAT_BYTES * n / 1e9:.2f} GB" in para and f"take {seconds * 1e3:.2f} ms" in para
    assert f"{seconds / programs * 1e9:.1f} ns per atomic" in para
    assert f"{chunk:,} elements" in para and f"{chunk // block} times fewer" in para
    parts = n // chunk
    assert f"the {parts:,} partials" in para
    assert f"{parts * FLOAT_BYTES:,} bytes written once and read once, {2 * parts * FLOAT_BYTES / (FLOAT_BYTES * n):.2%} more" in para
    assert "tl.static_range(STEPS)" in src and "BLOCK=CHUNK // 8, STEPS=8" in src


def _of_copy(key: str) -> float:
    rec = _rec(key)
    return rec["value"] / rec["ceiling"]["value"]


def test_amax_vec_confirms_the_prediction():
    """Predicted: no longer latency-bound, a read-only stream at or above the copy ceiling."""
    assert _of_copy(AMAX_VEC) > 1.0 > 0.9 > _of_copy(AMAX)
    para = states("B04", "The record confirms the prediction", near="`amax_vec`: 131 KB per SM")
    assert "above it in fact" in para
    assert _rec(AMAX_VEC)["value"] > _rec("B04/quantize/tensor_e4m3/cuda")["value"]  # "no longer the slow half"


def test_mx_variants_confirm_the_instruction_limit():
    """Vector loads lift MX towards the cast (same encoder) but not to the copy; the hw cvt takes it there."""
    cast = _rec("B04/quantize/tensor_e4m3/cuda")["value"]
    mx, vec = _rec(MX)["value"] / cast, _rec(MX_VEC)["value"] / cast
    assert mx < vec <= 1.0 and vec > 0.85, "mxfp8_e4m3_vec must rise to about the cast's level, no further"
    assert _of_copy(MX_VEC) < 0.85 and _of_copy(MX_HW) > 0.97
    states("B04", "The records confirm both halves", near="`mxfp8_e4m3`: 33 KB per SM")


def test_triton_alternatives_confirm_and_atomics_that_remain_are_free():
    chunked, two = _of_copy(T_CHUNKED), _of_copy(T_TWO)
    assert chunked > 0.97 and two > 0.97 and _of_copy(T_AMAX) < 0.6
    assert abs(_rec(T_CHUNKED)["value"] / _rec(T_TWO)["value"] - 1) < 0.03, "cost nothing measurable"
    para = states("B04", "The records confirm it", near="Triton's `amax`: the atomics")
    assert "upper bound on the atomics' cost" in para


def test_slow_variants_stay_well_below_copy():
    """The sentence that opens the gap analysis: hand-written encoder or scalar loads, well below copy."""
    for v in ("amax", "tensor_e4m3", "tensor_e4m3fnuz", "delayed_e4m3", "mxfp8_e4m3", "mxfp8_e4m3_vec"):
        assert _of_copy(f"B04/quantize/{v}/cuda") < 0.85, v
    for v in ("amax_vec", "mxfp8_e4m3_hw", "tensor_e4m3_hw"):
        assert _of_copy(f"B04/quantize/{v}/cuda") > 0.97, v
    states("B04", "Every variant with the hand-written encoder or with scalar loads stays well below",
           near="in the CUDA run")
    never_states("B04", "No variant reaches the copy ceiling")


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


def test_profiler_instruction_mix_of_the_two_encoders():
    """Nsight Compute's counts (labs/B04/profile.yml) per element of the 2^28 benchmark: the page's
    per-element figures are the records divided out, and the removed share matches the SASS count."""
    recs = records(ROOT)
    n, lanes = 2 ** 28, 32

    def c(kernel, metric):
        return recs[f"B04/fp8_codec/{kernel}.{metric}/cuda"]["value"]

    sw_all, hw_all = (c(k, "smsp__inst_executed.sum") * lanes / n for k in ("encode_kernel", "hw_encode_kernel"))
    sw_int, hw_int = (c(k, "smsp__sass_thread_inst_executed_op_integer_pred_on.sum") / n
                      for k in ("encode_kernel", "hw_encode_kernel"))
    assert c("encode_kernel", "smsp__inst_executed_op_global_ld.sum") == n // lanes
    assert c("hw_encode_kernel", "smsp__inst_executed_op_global_ld.sum") == n // lanes
    para = states("B04", f"executes {sw_all:.1f} instructions, {sw_int:.1f} of them integer",
                  near="Both issue the same")
    assert f"hardware conversion {hw_all:.1f}, {hw_int:.1f} of" in para
    assert f"removes {sw_all - hw_all:.1f} instructions and {sw_int - hw_int:.1f} integer" in para
    assert abs((sw_all - hw_all) - 27) < 2 and abs((sw_int - hw_int) - 18) < 3  # the SASS count of the normal path
    states("B04", "about 27 instructions per", near="In FLOP the kernel is nothing")


# ---------------------------------------------------------------- corrections: what each number rests on
def test_integer_ridge_at_the_measured_copy_and_what_the_64_rests_on():
    sms = hardware.value("h200", "units")
    clock = hardware.peak("h200", "fp32") / (sms * FP32_LANES * 2)
    ints = sms * INT_OPS_PER_CLOCK * round(clock / 1e9, 2) * 1e9
    copy = _rec("B04/quantize/tensor_e4m3/cuda")["ceiling"]["value"] * 1e9
    assert copy < hardware.value("h200", "hbm_bw")
    para = states("B04", f"about {ints / (copy / (FLOAT_BYTES + FP8_BYTES)):.0f}",
                  near="at the copy bandwidth measured in the quantize run")
    assert 'ceiling("B04/quantize/tensor_e4m3/cuda")' in para
    assert "compute capability 7.x" in para and "assumption that Hopper kept the rate" in para
    assert "boost clock" in para
    para = states("B04", "upper bound", near="The 64 per clock is the rate of the integer arithmetic-logic pipe")
    assert "`IMAD`" in para and "FMA" in para
    never_states("B04", "On Hopper a streaming multiprocessor")


def test_scalar_amax_range_is_called_weak_and_amax_vec_is_the_evidence():
    total = THREADS_PER_SM * FLOAT_BYTES * SMS
    copy = _rec(AMAX)["ceiling"]["value"] * 1e9
    lo, hi = total / 700e-9 / copy, total / 300e-9 / copy
    para = states("B04", f"from {lo:.0%} to {hi:.0%} of the copy ceiling", near="That agreement is weak on its own")
    assert "`amax_vec` keeps everything but the bytes in flight" in para
    assert _of_copy(AMAX_VEC) > 1.0 > hi > _of_copy(AMAX) > lo
    never_states("B04", "The model and the record agree: the kernel is latency-bound.")


def test_beyond_ceiling_reason_names_records_that_beat_the_copy():
    """The exemption of amax_vec: read+write kernels in the same records also beat the D2D copy; amax_vec by more."""
    import yaml

    reason = yaml.safe_load((ROOT / "measurements/beyond-ceiling.yml").read_text())[AMAX_VEC]
    named = re.findall(r"[AB]\d\d/\w+/\w+/(?:cuda|triton)", reason)
    assert set(named) == {"A01/vector_add/float4/cuda", MX_HW, T_CHUNKED}
    for key in named:
        assert 1.0 < _of_copy(key) < _of_copy(AMAX_VEC), key
    assert "neither is measured" in reason and "HBM serves reads alone faster" not in reason
    para = states("B04", "a few per cent more", near="It beats the copy by")
    assert "neither is measured here" in para
    states("B04", "not a roof", near="The prediction is a stream at the copy ceiling")
    never_states("B04", "HBM serves reads alone faster")


def test_mx_vec_attribution_is_not_measured():
    src = QUANT_CU.read_text()
    n = 2 ** int(re.search(r"bench\(v, size_t\(1\) << (\d+)", src).group(1))
    unroll, threads = _const(src, "kUnroll"), _const(src, "kThreads")
    assert "const unsigned mx_blocks = (unsigned)(((n + 3) / 4 + kUnroll * kThreads - 1) / (kUnroll * kThreads));" in src
    blocks = ((n + 3) // 4 + unroll * threads - 1) // (unroll * threads)
    cap = int(re.search(r"\(work \+ kThreads - 1\) / kThreads, (\d+)\)", src).group(1))
    para = states("B04", f"{blocks:,} blocks", near="What is left between `mxfp8_e4m3_vec` and the cast is not measured")
    assert f"at most {cap:,} blocks" in para
    never_states("B04", "What is left between `mxfp8_e4m3_vec` and the cast is the block's shuffles and its scale")


def test_triton_atomic_bound_says_it_holds_the_launch_path():
    para = states("B04", "Python launch path", near="Triton's `amax`: the atomics")
    assert "upper bound on the atomics' cost, not a measurement of it, and a loose one" in para
    # the event interval opens before the launch call in the Python kit
    kit = (ROOT / "labs/common/python/tutor_lab.py").read_text()
    body = kit[kit.index("def median_ms"):]
    assert body.index("start.record()") < body.index("fn()", body.index("start.record()"))
