"""Claims of module B02 (floating point for ML).

Every number the pages derive (layouts, epsilons, unit roundoffs, stalls, bounds, the nearest bf16 to a million,
ridge points, bytes in flight) is recomputed here from the course's model (tutor_build.models.accumulation) or the
hardware table, and read back from the module's text with prose.states. The second half reads the H200 records
and checks the relations the headline and section 5 draw from them; the labs run on one GPU, so a missing
record is a failure, not a skip.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prose import never_states, states  # noqa: E402

from tutor_build.measurements import records  # noqa: E402
from tutor_build.models import accumulation as acc  # noqa: E402
from tutor_build.models import hardware  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MILLION = 1_000_000
LANES = 1 << 16  # kLanes of labs/B02/cuda/accumulate.cu and LANES of labs/B02/triton/accumulate.py
BF16_BYTES = 2


def sci(x: float) -> str:
    return f"{x:.3g}" if x >= 1e-4 else f"{x:.2e}"


# ---------------------------------------------------------------- the formats
def test_layout_table():
    para = states("B02", "0.0078125", near="machine epsilon $2^{-m}$", files="2-first-principles.md")
    assert "| fp32 | 1 | 8 | 23 | 32 | 1.19e-07 | 3.40e+38 |" in para
    assert "| tf32 | 1 | 8 | 10 |" in para and "| bf16 | 1 | 8 | 7 | 16 |" in para
    assert f"{acc.FP32.epsilon:.2e}" == "1.19e-07" and f"{acc.FP32.max_finite:.2e}" == "3.40e+38"
    assert f"{acc.TF32.epsilon:.3g}" == "0.000977" and f"{acc.BF16.max_finite:.2e}" == "3.39e+38"
    assert acc.BF16.epsilon == 0.0078125
    assert f"{acc.FP16.max_finite:,.0f}" == "65,504"
    states("B02", "65,504", near="| fp16 | 1 | 5 | 10 |", files="2-first-principles.md")


def test_epsilon_and_unit_roundoff():
    states("B02", f"{acc.BF16.epsilon}", near="that is machine epsilon", files="2-first-principles.md")
    states("B02", f"{acc.FP32.epsilon:.2e}", near="that is machine epsilon", files="2-first-principles.md")
    states("B02", f"{acc.BF16.unit_roundoff}", near="The unit roundoff $u$ is", files="2-first-principles.md")
    states("B02", f"{acc.FP32.unit_roundoff:.2e}", near="The unit roundoff $u$ is", files="2-first-principles.md")


def test_stalls_are_what_the_arithmetic_does():
    for fmt in (acc.BF16, acc.FP16, acc.TF32, acc.FP32):
        assert fmt.stall == 2 ** (fmt.mantissa_bits + 1)
    # the model's arithmetic, one add at a time, stalls exactly there in bf16
    assert acc.serial_sum([1.0] * 1000, bf16=True) == acc.BF16.stall == 256
    assert acc.serial_sum([1.0] * 1000, bf16=False) == 1000.0
    near = "The stall is at"
    for number in ("256", "2,048", "16,777,216", "1,000,000"):
        states("B02", number, near=near, files="2-first-principles.md")
    assert f"{acc.FP32.stall:,}" == "16,777,216" and f"{acc.FP16.stall:,}" == "2,048"
    err = acc.relative_error(acc.serial_ones(MILLION, True), MILLION)
    states("B02", f"{100 * err:.2f}%", near=near, files="2-first-principles.md")


def test_recursive_and_pairwise_bounds():
    recursive = acc.error_bound_recursive(MILLION, acc.BF16.unit_roundoff)
    states("B02", f"{recursive:,.0f}", near="For one million terms in bf16", files="2-first-principles.md")
    levels = math.ceil(math.log2(MILLION))
    pairwise = acc.error_bound_pairwise(MILLION, acc.BF16.unit_roundoff)
    near = "Pairwise summation adds neighbours"
    states("B02", f"{levels} levels", near=near, files="2-first-principles.md")
    states("B02", f"{pairwise:.2g}", near=near, files="2-first-principles.md")
    states("B02", f"{int(math.log2(LANES))} levels", near=near, files="2-first-principles.md")
    states("B02", f"{LANES:,}", near=near, files="2-first-principles.md")
    states("B02", f"{MILLION // LANES}", near=near, files="2-first-principles.md")  # ones per lane, about


def test_nearest_bf16_to_a_million():
    nearest = acc.round_bf16(MILLION)
    gap = 2.0 ** (math.floor(math.log2(MILLION)) - acc.BF16.mantissa_bits)
    assert acc.pairwise_ones(MILLION, LANES, bf16=True) == nearest
    assert acc.pairwise_ones(MILLION, LANES, bf16=False) == MILLION
    err = acc.relative_error(nearest, MILLION)
    for files, near in (("2-first-principles.md", "Pairwise summation adds neighbours"),
                        ("9-self-assessment.md", "where bf16's gap is")):
        states("B02", f"{nearest:,.0f}", near=near, files=files)
        states("B02", f"{gap:,.0f}", near=near, files=files)
        states("B02", f"{100 * err:.3f}%", near=near, files=files)
    states("B02", f"{nearest + gap:,.0f}", near="where bf16's gap is", files="9-self-assessment.md")


def test_kahan_in_bf16_stalls_at_65536():
    stall = 2 ** (2 * (acc.BF16.mantissa_bits + 1))
    assert acc.kahan_sum_bf16([1.0] * 70_000) == stall
    near = "Kahan's compensated summation keeps"
    states("B02", f"{stall:,}", near=near, files="2-first-principles.md")
    states("B02", f"{2.0 ** (16 - acc.BF16.mantissa_bits):.0f}", near=near, files="2-first-principles.md")
    states("B02", f"{MILLION * acc.BF16.unit_roundoff ** 2:.1f}", near=near, files="2-first-principles.md")
    states("B02", f"{stall:,}", near="Why does Kahan summation", files="9-self-assessment.md")


def test_dot_product_stall():
    mean_term = 0.25  # the mean of a product of two independent uniforms on [0, 1)
    s_stall = mean_term / 2.0 ** -(acc.BF16.mantissa_bits + 1)
    near = "A dot product of bf16 inputs"
    states("B02", f"{s_stall:.0f}", near=near, files="2-first-principles.md")
    states("B02", f"{s_stall / mean_term:.0f} terms", near=near, files="2-first-principles.md")
    assert acc.BF16.mantissa_bits + 1 + acc.BF16.mantissa_bits + 1 <= acc.FP32.mantissa_bits + 1  # 16 <= 24


def test_range_and_loss_scaling():
    near = "The exponent field sets the range"
    states("B02", f"{acc.FP16.max_finite:,.0f}", near=near, files="2-first-principles.md")
    states("B02", f"{acc.FP16.min_subnormal:.2e}", near=near, files="2-first-principles.md")
    states("B02", f"{1e-8 * 2 ** 16:.3g}", near=near, files="2-first-principles.md")
    states("B02", f"{acc.BF16.min_normal:.2e}", near=near, files="2-first-principles.md")
    assert f"{acc.FP16.max_finite / 2 ** 16:.1f}" == "1.0"
    states("B02", f"{3e-8 * 2 ** 16 * 1e3:.2f}", near="Scaled by $2^{16}$ it becomes", files="9-self-assessment.md")  # 1.97e-3


def test_tf32_unit_roundoff():
    near = "A tensor core's"
    states("B02", f"{acc.TF32.unit_roundoff:.3g}", near=near, files="2-first-principles.md")
    assert acc.TF32.unit_roundoff == 2.0 ** -11 and acc.TF32.epsilon == 2.0 ** -10  # rounded vs cut off
    para = states("B02", "$2^{-10}$", near=near, files="2-first-principles.md")
    assert "$u = 2^{-11}$" in para and "Neither source says whether" in para
    states("B02", "$2^{-10}$", near="TF32 trades 13 mantissa bits", files="6-tradeoffs.md")
    assert acc.FP32.mantissa_bits - acc.TF32.mantissa_bits == 13


def truncate_bf16(x: float) -> float:
    """fp32 -> bf16 by keeping the top 16 bits of the pattern (bits >> 16): round toward zero."""
    return acc.bits_f32(acc.f32_bits(acc.f32(x)) & 0xFFFF0000)


def test_round_toward_zero_and_stochastic_rounding():
    import random
    near = "Toward zero (truncation)"
    rng = random.Random(7)
    xs = [acc.f32(rng.uniform(1.0, 1e6)) for _ in range(20000)]
    rel = [(x - truncate_bf16(x)) / x for x in xs]
    eps = acc.BF16.epsilon  # 2^-m = 2u
    assert all(0.0 <= r < eps for r in rel)  # always towards zero, below a whole gap
    assert max(rel) > 0.9 * eps  # and the whole gap is reached, twice round to nearest's u
    assert all(abs(acc.round_bf16(x) - x) / x <= acc.BF16.unit_roundoff for x in xs)
    gaps = [2.0 ** (math.floor(math.log2(x)) - acc.BF16.mantissa_bits) for x in xs]
    mean_loss = sum((x - truncate_bf16(x)) / g for x, g in zip(xs, gaps)) / len(xs)
    assert 0.45 < mean_loss < 0.55  # "half a gap on average"
    para = states("B02", "2u = 2^{-m}", near=near, files="2-first-principles.md")
    assert "half a gap on average" in para
    assert truncate_bf16(257.0) == 256.0 == acc.BF16.stall  # the stall stays at 256
    states("B02", "258", near=near, files="2-first-principles.md")
    # stochastic: at 256 the gap is 2, 257 is half-way, so up with probability 1/2; the mean gain is 1 per add
    gap = 2.0
    p_up = (257.0 - 256.0) / gap
    assert p_up * 258 + (1 - p_up) * 256 == 257.0
    states("B02", "258", near="Stochastic rounding.", files="2-first-principles.md")


def test_bf16_dot_product_stops_at_exactly_256():
    """Inputs in [0, 1) rounded to bf16 give products of at most 1, half the gap at 256: the sum never passes
    256, and once the exact sum is far past it the error is 1 - 256 / (K / 4) = 1 - 1024 / K."""
    import random
    half_gap_at_stall = 2.0 ** (math.log2(acc.BF16.stall) - acc.BF16.mantissa_bits) / 2
    assert half_gap_at_stall == 1.0 and acc.round_bf16(acc.f32(1 - 2 ** -12)) == 1.0  # an input can reach 1
    assert acc.add(256.0, 1.0, True) == 256.0  # the largest product is the tie
    rng = random.Random(3)
    for _ in range(4):
        s = 0.0
        for _ in range(4096):
            s = acc.add(s, acc.round_bf16(rng.random()) * acc.round_bf16(rng.random()), True)
        assert s == 256.0
    near = "the lab's GEMM measures both"
    for k in (4096, 16384):
        states("B02", f"{1 - 256 / (k / 4):g}", near=near, files="2-first-principles.md")
        states("B02", f"{k:,}", near=near, files="2-first-principles.md")
    states("B02", "256", near="At $s = 256$ it stops for good", files="2-first-principles.md")


def test_the_fp32_accumulator_stays_below_sqrt_k_u(recs):
    u = acc.FP32.unit_roundoff
    for vendor in ("cuda", "triton"):
        for k in (256, 1024, 4096, 16384):
            err = rec(recs, f"B02/gemm_accum/err_fp32acc_k{k}/{vendor}")["value"]
            assert 0.05 * math.sqrt(k) * u < err < math.sqrt(k) * u, (vendor, k, err)  # below, but not far below
            assert err < 0.01 * k * u  # "far below K u"
    states("B02", "below $\\sqrt{K}\\,u$", near="far below $K u$", files="2-first-principles.md")
    para = states("B02", "$\\sqrt{K}$", near="with fp32 the error is bounded", files="9-self-assessment.md")
    assert "stays below $\\sqrt{K}$ times $2^{-24}$" in para
    never_states("B02", "near $\\sqrt{K}\\,u$ to $K u$")
    never_states("B02", "near $\\sqrt{K}$ to $K$")


def test_bf16_gemm_error_is_the_stall_at_256(recs):
    for vendor in ("cuda", "triton"):
        for k in (4096, 16384):
            err = rec(recs, f"B02/gemm_accum/err_bf16acc_k{k}/{vendor}")["value"]
            assert abs(err - (1 - 1024 / k)) < 1e-3, (vendor, k, err)


def test_cublas_error_is_above_the_lab_fp32_chain(recs):
    for k in (256, 1024, 4096, 16384):
        blas = rec(recs, f"B02/gemm_accum/err_blas_k{k}/cuda")["value"]
        assert blas > rec(recs, f"B02/gemm_accum/err_fp32acc_k{k}/cuda")["value"], k
    states("B02", "every $K$", near="The cuBLAS column is larger", files="5-performance.md")


# ---------------------------------------------------------------- section 5: the counts
def test_ridge_points_and_intensity():
    near = "Each element is read once"
    states("B02", f"{1 / BF16_BYTES} FLOP/byte", near=near, files="5-performance.md")
    h200 = hardware.peak("h200", "fp32") / hardware.value("h200", "hbm_bw")
    mi = hardware.peak("mi300x", "fp32") / hardware.value("mi300x", "hbm_bw")
    states("B02", f"{h200:.1f} FLOP/byte", near=near, files="5-performance.md")
    states("B02", f"{mi:.1f} FLOP/byte", near=near, files="5-performance.md")
    states("B02", f"factor of {h200 / (1 / BF16_BYTES):.0f}", near=near, files="5-performance.md")
    n = 4096
    near = "does $2n^3$ FLOPs"
    states("B02", f"{n // 4:,}", near=near, files="5-performance.md")
    states("B02", f"{hardware.peak('h200', 'bf16') / hardware.value('h200', 'hbm_bw'):.0f}", near=near,
           files="5-performance.md")
    states("B02", f"{hardware.peak('mi300x', 'bf16') / hardware.value('mi300x', 'hbm_bw'):.0f}", near=near,
           files="5-performance.md")


def test_triton_pairwise_shape():
    import re
    src = (ROOT / "labs/B02/triton/accumulate.py").read_text()
    lanes = eval(re.search(r"^LANES = (.+?)  #", src, re.M).group(1))
    block = int(re.search(r"^BLOCK = (\d+)", src, re.M).group(1))
    assert lanes == LANES and "strided_kernel[(LANES // BLOCK,)]" in src and "num_warps" not in src
    threads = 4 * 32  # Triton's default of 4 warps a program
    near = "Triton's `strided_kernel`"
    states("B02", f"{lanes // block} programs of {block:,} lanes", near=near, files="5-performance.md")
    states("B02", f"{hardware.value('h200', 'units'):.0f} SMs", near=near, files="5-performance.md")
    states("B02", f"{block // threads} lanes to a thread", near=near, files="5-performance.md")
    states("B02", f"{int(math.log2(LANES))} launches", near=near, files="5-performance.md")


def test_rounding_instructions_per_element(recs):
    metric = "smsp__sass_thread_inst_executed_op_integer_pred_on.sum"
    fp = rec(recs, f"B02/accumulate/serial_fp32.{metric}/cuda")["value"]
    bf = rec(recs, f"B02/accumulate/serial_bf16.{metric}/cuda")["value"]
    kahan = rec(recs, f"B02/accumulate/kahan_bf16.{metric}/cuda")["value"]
    near = "Per element"
    states("B02", f"{(bf - fp) / MILLION:.0f} integer instructions", near=near, files="5-performance.md")
    states("B02", f"step {(kahan - fp) / MILLION:.0f}", near=near, files="5-performance.md")
    assert (bf - fp) % MILLION == 0 and (kahan - fp) % MILLION == 0
    g_fp = rec(recs, f"B02/gemm_accum/gemm_fp32acc.{metric}/cuda")["value"]
    g_bf = rec(recs, f"B02/gemm_accum/gemm_bf16acc.{metric}/cuda")["value"]
    ffma = rec(recs, "B02/gemm_accum/gemm_bf16acc.smsp__sass_thread_inst_executed_op_ffma_pred_on.sum/cuda")["value"]
    states("B02", f"about {(g_bf - g_fp) / ffma:.0f} more", near="summed\nover all the threads".replace("\n", " "),
           files="5-performance.md")
    states("B02", "summed over all threads", near="warp instructions", files="5-performance.md")


def test_littles_law_estimate():
    in_flight = LANES * BF16_BYTES
    latency = records(ROOT)["A03/occupancy/chase_latency/cuda"]  # A03's measured DRAM latency on the H200
    assert latency["unit"] == "ns"
    near = "Little's law"
    states("B02", f"{in_flight // 1024} KiB", near=near, files="5-performance.md")
    states("B02", f"{latency['value']:.0f} ns", near=near, files="5-performance.md")
    states("B02", f"{in_flight / (latency['value'] * 1e-9) / 1e12:.2f} TB/s", near=near, files="5-performance.md")


def test_silicon_numbers_come_from_the_hardware_table():
    para = states("B02", "989.5 TFLOP/s", near="dense bf16 matrix peak", files="3-silicon.md")
    assert f"{hardware.peak('h200', 'bf16') / 1e12:.1f}" == "989.5"
    assert f"{hardware.peak('mi300x', 'bf16') / 1e12:,.1f} TFLOP/s" in para


# ---------------------------------------------------------------- the H200 records
@pytest.fixture(scope="module")
def recs():
    return records(ROOT)


def rec(recs, key):
    assert key in recs, f"no record {key}: run `tutor labs bench B02 --course` on the H200"
    return recs[key]


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_headline_sums_of_a_million_ones(recs, vendor):
    want = {
        "serial_fp32": acc.serial_ones(MILLION, False),
        "serial_bf16": acc.serial_ones(MILLION, True),
        "kahan_bf16": 2.0 ** 16,
        "pairwise_bf16": acc.pairwise_ones(MILLION, LANES, True),
        "pairwise_fp32": acc.pairwise_ones(MILLION, LANES, False),
    }
    for v, value in want.items():
        assert rec(recs, f"B02/accumulate/ones_{v}/{vendor}")["value"] == value, v


def test_torch_sum_of_bf16_ones_is_the_rounded_exact_sum(recs):
    assert rec(recs, "B02/accumulate/ones_torch_sum/triton")["value"] == acc.round_bf16(MILLION)
    assert rec(recs, "B02/accumulate/ones_torch_sum_fp32/triton")["value"] == MILLION


def test_parallel_bf16_and_fp32_sums_cost_the_same(recs):
    for vendor in ("cuda", "triton"):
        bf = rec(recs, f"B02/accumulate/bw_pairwise_bf16/{vendor}")["value"]
        fp = rec(recs, f"B02/accumulate/bw_pairwise_fp32/{vendor}")["value"]
        assert 0.8 < bf / fp < 1.25, (vendor, bf, fp)


def test_serial_rounding_adds_instructions(recs):
    metric = "smsp__sass_thread_inst_executed_op_integer_pred_on.sum"
    fp = rec(recs, f"B02/accumulate/serial_fp32.{metric}/cuda")["value"]
    bf = rec(recs, f"B02/accumulate/serial_bf16.{metric}/cuda")["value"]
    kahan = rec(recs, f"B02/accumulate/kahan_bf16.{metric}/cuda")["value"]
    assert fp < bf < kahan


@pytest.mark.parametrize("vendor", ["cuda", "triton"])
def test_gemm_error_grows_with_k_only_for_bf16(recs, vendor):
    ks = (256, 1024, 4096, 16384)
    bf = [rec(recs, f"B02/gemm_accum/err_bf16acc_k{k}/{vendor}")["value"] for k in ks]
    fp = [rec(recs, f"B02/gemm_accum/err_fp32acc_k{k}/{vendor}")["value"] for k in ks]
    assert all(b > 100 * f for b, f in zip(bf, fp))
    assert bf == sorted(bf) and bf[-1] > 0.5
    assert max(fp) < 1e-5
    for k, f in zip(ks, fp):  # within the first-order bound K u of fp32
        assert f <= k * acc.FP32.unit_roundoff


def test_library_errors(recs):
    for k in (256, 1024, 4096, 16384):
        assert rec(recs, f"B02/gemm_accum/err_blas_k{k}/cuda")["value"] < 1e-5
        assert 0.001 < rec(recs, f"B02/gemm_accum/err_torch_k{k}/triton")["value"] < 0.003  # "near 0.002"
    states("B02", "0.002", near="The torch column carries one more rounding", files="5-performance.md")


def test_bf16_accumulator_is_slower(recs):
    fp = rec(recs, "B02/gemm_accum/tflops_fp32acc/cuda")
    bf = rec(recs, "B02/gemm_accum/tflops_bf16acc/cuda")
    assert bf["value"] < fp["value"] < fp["ceiling"]["value"]
    metric = "smsp__sass_thread_inst_executed_op_integer_pred_on.sum"
    assert rec(recs, f"B02/gemm_accum/gemm_bf16acc.{metric}/cuda")["value"] > \
        rec(recs, f"B02/gemm_accum/gemm_fp32acc.{metric}/cuda")["value"]


def test_the_player_rounds_as_the_page_says():
    from tutor_build.models import players
    para = states("B02", "257", near="The concept player [Number formats]", files="2-first-principles.md")
    assert players.number_formats({"value": 257})["bf16"] == acc.round_bf16(257) == 256
    assert players.number_formats({"value": 2049})["fp16"] == 2048 == acc.FP16.stall
    assert "2,049" in para and "2,048" in para


# ---------------------------------------------------------------- the CUDA lab's host reference
HARNESS = r"""
#define main lab_main
#include "LAB"
#undef main
int main() {
  std::vector<uint16_t> ones = make_input(1000000, true, 0), x(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (uint16_t)(f32_bits(round_bf16((float)(i % 97) / 61.0f)) >> 16);
  for (const std::string& v : kVariants)
    printf("%s %08x %08x\n", v.c_str(), f32_bits(ref_sum(v, ones)), f32_bits(ref_sum(v, x)));
  return 0;
}
"""


def test_the_cuda_host_reference_is_the_model(tmp_path):
    """The CUDA lab's host reference (the arithmetic its kernels are checked against, bit for bit) gives the
    headline sums and agrees with the model on a second input; built with nvcc, run on the CPU, no kernel
    launched."""
    import shutil
    import subprocess

    from requirements_gate import need
    need(shutil.which("nvcc") is not None, "nvcc is needed to build the lab's host reference")
    src = tmp_path / "harness.cu"
    src.write_text(HARNESS.replace("LAB", str(ROOT / "labs/B02/cuda/accumulate.cu")))
    exe = tmp_path / "harness"
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-I", str(ROOT / "labs/common/cuda"), str(src),
                    "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    got = {line.split()[0]: (int(line.split()[1], 16), int(line.split()[2], 16)) for line in out if line}
    xs = [acc.round_bf16(acc.f32(acc.f32(i % 97) / acc.f32(61.0))) for i in range(5000)]
    want = {
        "serial_fp32": (MILLION, acc.serial_sum(xs, False)),
        "serial_bf16": (acc.BF16.stall, acc.serial_sum(xs, True)),
        "kahan_bf16": (2 ** 16, acc.kahan_sum_bf16(xs)),
        "pairwise_bf16": (acc.round_bf16(MILLION), acc.pairwise_sum(xs, LANES, True)),
        "pairwise_fp32": (MILLION, acc.pairwise_sum(xs, LANES, False)),
    }
    for v, (ones, other) in want.items():
        assert got[v][0] == acc.f32_bits(ones), v  # bit for bit
        assert got[v][1] == acc.f32_bits(other), v


GEMM_HARNESS = r"""
#define main lab_main
#include "LAB"
#undef main
int main() {
  const int M = 3, N = 5, K = 700;
  std::vector<bf16> A((size_t)M * K), B((size_t)N * K);
  for (size_t i = 0; i < A.size(); ++i) A[i] = (bf16)(f32_bits(round_bf16((float)(i % 89) / 53.0f)) >> 16);
  for (size_t i = 0; i < B.size(); ++i) B[i] = (bf16)(f32_bits(round_bf16((float)(i % 83) / 47.0f)) >> 16);
  for (int bf = 0; bf < 2; ++bf)
    for (float c : ref_gemm(bf == 1, A, B, M, N, K)) printf("%08x\n", f32_bits(c));
  return 0;
}
"""


def test_the_cuda_gemm_reference_is_the_model(tmp_path):
    """gemm_accum's host reference, in both accumulators, equals the model's add of exact products."""
    import shutil
    import subprocess

    from requirements_gate import need
    need(shutil.which("nvcc") is not None, "nvcc is needed to build the lab's host reference")
    src = tmp_path / "gemm.cu"
    src.write_text(GEMM_HARNESS.replace("LAB", str(ROOT / "labs/B02/cuda/gemm_accum.cu")))
    exe = tmp_path / "gemm"
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-I", str(ROOT / "labs/common/cuda"), str(src),
                    "-o", str(exe)], check=True, capture_output=True)
    got = [int(w, 16) for w in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]
    M, N, K = 3, 5, 700
    a = [acc.round_bf16(acc.f32(acc.f32(i % 89) / acc.f32(53.0))) for i in range(M * K)]
    b = [acc.round_bf16(acc.f32(acc.f32(i % 83) / acc.f32(47.0))) for i in range(N * K)]
    want = []
    for bf in (False, True):
        for i in range(M):
            for j in range(N):
                s = 0.0
                for k in range(K):
                    s = acc.add(s, a[i * K + k] * b[j * K + k], bf)  # the product is exact in fp32
                want.append(acc.f32_bits(s))
    assert got == want


def test_pairwise_kernels_against_the_littles_law_estimate(recs):
    # the page: the CUDA kernels run at 2.4 to 2.6 times the one-load-in-flight estimate, the Triton ones below it
    latency = rec(recs, "A03/occupancy/chase_latency/cuda")["value"] * 1e-9
    estimate = LANES * BF16_BYTES / latency / 1e9  # GB/s
    for v in ("bf16", "fp32"):
        cuda = rec(recs, f"B02/accumulate/bw_pairwise_{v}/cuda")["value"] / estimate
        assert 2.35 <= cuda <= 2.65, (v, cuda)
        assert rec(recs, f"B02/accumulate/bw_pairwise_{v}/triton")["value"] < estimate
    states("B02", "2.4 to 2.6 times", near="Little's law", files="5-performance.md")
    # PyTorch's sum sits near the copy ceiling
    torch_sum = rec(recs, "B02/accumulate/bw_torch_sum_fp32/triton")
    assert torch_sum["value"] >= 0.85 * torch_sum["ceiling"]["value"]
