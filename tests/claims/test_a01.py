"""Claims of module A01 (the GPU mental model), derived and then read from the module's own text.

Each test derives a number from first principles, from the one hardware table (tutor_build.models.hardware)
or from the measurement records, formats it the way the page prints it, and finds it with tests/claims/prose.py
in the paragraph that draws the claim. So a test fails when the prose or the derivation changes without the
other. Records are required: a missing A01 record is a failure, not a skip (every A01 lab runs on one GPU).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from prose import never_states, paragraphs, sources, states
from tutor_build.measurements import records
from tutor_build.models import hardware

ROOT = Path(__file__).parents[2]
M = "A01"

# ---- constants of the method, each named once with its source -------------------------------------
FLOAT_BYTES = 4  # float32
LOADS, STORES = 2, 1  # c[i] = a[i] + b[i]: two loads and one store per element
BYTES_PER_ELEMENT = (LOADS + STORES) * FLOAT_BYTES
FLOP_PER_ELEMENT = 1
FMA_FLOP = 2  # a fused multiply-add counts 2 FLOP; an addition 1 (the datasheet peaks count FMAs)
VECTOR_BYTES = 16  # one float4 / ld.global.v4 access
LATENCY_S = 500e-9  # section 2's stated assumption, with its +-40% range
LATENCIES_S = (300e-9, 700e-9)
N_WORKED = 2**24  # section 2's worked example
N_TIMELINE = 2**20  # labs/A01/cuda/timeline.cu default --n (read below)
N_BENCH = 2**28  # labs/A01/cuda/vector_add.cu default --n (read below)
TRITON_DEFAULT_NUM_WARPS = 4  # triton-config: num_warps defaults to 4

H200, H100, MI300X = "h200", "h100-sxm", "mi300x"
HBM = hardware.value(H200, "hbm_bw")
PCIE = hardware.value(H200, "pcie_bw")  # per direction
FP32_FMA = hardware.peak(H200, "fp32")
SMS = hardware.value(H200, "units")
WARP = int(hardware.value(H200, "lanes"))
WARPS = int(SMS * hardware.value(H200, "max_warps_per_unit"))
# the L2 the lab's H200 reports to the CUDA runtime, as recorded with the measurements
L2_BYTES = int(re.search(r"L2_cache_size (\d+)", (ROOT / "measurements/transcripts/h200-device.txt").read_text()).group(1))

KERNEL = "A01/vector_add/kernel/cuda"
FLOAT4 = "A01/vector_add/float4/cuda"
TRITON = "A01/vector_add/kernel/triton"
EVENTS, FIRST, TOTAL = "A01/timeline/kernel_events/cuda", "A01/timeline/kernel/cuda", "A01/timeline/total/cuda"
CONTEXT = "A01/timeline/context/cuda"


@pytest.fixture(scope="module")
def recs() -> dict:
    return records(ROOT)


def need(recs: dict, *keys: str) -> list[dict]:
    missing = [k for k in keys if k not in recs]
    assert not missing, f"no record for {missing}: run `tutor labs bench A01` on the H200 (no skip: A01 runs on one GPU)"
    return [recs[k] for k in keys]


def lab(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def share_ideal(kernel_bw: float) -> float:
    """Kernel share of copies + kernel when copies run one after the other at the PCIe peak: n cancels."""
    return PCIE / (PCIE + kernel_bw)


# =========================================================================================================
# The kernel's share of copies + kernel: what bounds what
# =========================================================================================================


def test_the_lab_sizes_are_the_ones_the_tests_use():
    assert "1ll << 28" in lab("labs/A01/cuda/vector_add.cu")
    assert re.search(r'"--n",\s*1ll?\s*<<\s*20', lab("labs/A01/cuda/timeline.cu")) or "1 << 20" in lab("labs/A01/cuda/timeline.cu")


def test_worked_program_times_and_the_ideal_share():
    q = BYTES_PER_ELEMENT * N_WORKED
    t_kernel = q / HBM
    t_h2d, t_d2h = LOADS * FLOAT_BYTES * N_WORKED / PCIE, STORES * FLOAT_BYTES * N_WORKED / PCIE
    states(M, f"{N_WORKED:,}".replace(",", "{,}"), near="Take $n = 2^{24}")
    states(M, f"{q:,}".replace(",", "{,}"), near="Q_{\\text{kernel}} = 12\\,n")
    para = states(M, f"{t_kernel * 1e6:.1f}", near="lower* bound")
    assert f"\\approx {t_kernel * 1e6:.1f}\\ \\mu\\text{{s}}" in para  # step 2's result, not step 4's reuse
    para = states(M, f"{(t_h2d + t_d2h) * 1e3:.2f}", near="have a lower bound")
    assert f"{t_h2d * 1e3:.2f}" in para and f"{t_d2h * 1e3:.2f}" in para
    ideal = t_kernel / (t_kernel + t_h2d + t_d2h)
    assert ideal == pytest.approx(share_ideal(HBM))
    states(M, f"{100 * ideal:.1f}\\%", near="share of an ideal kernel next to ideal copies")
    states(M, f"{(t_kernel + t_h2d + t_d2h) * 1e3:.2f}", near="share of an ideal kernel next to ideal copies")


def test_the_ideal_share_does_not_depend_on_n():
    for n in (1, 1000, 2**20, 2**24, 2**28, 3 * 10**9):
        t_k = BYTES_PER_ELEMENT * n / HBM
        t_c = BYTES_PER_ELEMENT * n / PCIE
        assert t_k / (t_k + t_c) == pytest.approx(share_ideal(HBM))
    para = states(M, f"{100 * share_ideal(HBM):.1f}\\%", near="The size cancels")
    assert f"{PCIE / 1e9:.0f} / ({PCIE / 1e9:.0f} + {HBM / 1e9:.0f})" in para


def test_the_share_grows_as_the_kernel_slows_so_the_ideal_is_no_ceiling():
    """s = T_k / (T_k + T_c) is increasing in T_k: the 1.3% at the HBM peak is the least a kernel on copies
    at the link's peak can take, never the most."""
    shares = [share_ideal(bw) for bw in (HBM, 0.8 * HBM, 0.5 * HBM, 0.1 * HBM)]
    assert shares == sorted(shares) and shares[0] < shares[-1]
    para = states(M, "1.3\\%", near="It is not a ceiling on the share")
    assert "*larger* share" in para
    # the page no longer calls the ideal share an upper bound, anywhere
    for name, text in {**sources(M), **sources(M, "*.yml"), **sources(M, "cards")}.items():
        for p in paragraphs(text):
            for sentence in re.split(r"(?<=[.;:])\s+", p):
                assert not ("at most" in sentence and re.search(r"1\.3\s*\\?%", sentence)), f"{name}: {sentence}"
            assert "cannot be more than about 1.3" not in p, f"{name}: {p[:300]}"


def test_the_measured_kernel_next_to_ideal_copies_is_the_real_upper_bound(recs):
    (kernel,) = need(recs, KERNEL)
    upper = share_ideal(kernel["value"] * 1e9)
    # measured kernel is slower than the HBM peak, so its share is larger than the ideal one, and under 2%
    assert share_ideal(HBM) < upper < 0.02
    states(M, "under 2%", near="What bounds $s$ from above")
    states(M, "under 2%", near="next to copies at the link's peak")
    states(M, "under 2%", near="the lab's measured one", files="6-tradeoffs.md")


def test_overlap_is_bound_by_the_copy_in():
    t_h2d = LOADS * FLOAT_BYTES * N_WORKED / PCIE
    t_d2h = STORES * FLOAT_BYTES * N_WORKED / PCIE
    t_kernel = BYTES_PER_ELEMENT * N_WORKED / HBM
    overlapped, serial = max(t_h2d, t_d2h, t_kernel), t_h2d + t_d2h + t_kernel
    assert overlapped == t_h2d
    para = states(M, f"{overlapped * 1e3:.2f} ms", near="can overlap them")
    assert f"{serial * 1e3:.2f} ms" in para and "a third less" in para
    assert round(1 - overlapped / serial, 1) == round(1 / 3, 1)


def test_copies_take_75_times_the_fastest_kernel():
    ratio = HBM / PCIE
    assert ratio == int(ratio)
    states(M, f"{ratio:.0f} times", near="fastest possible kernel", files="6-tradeoffs.md")
    states(M, f"{ratio:.0f} times", near="fastest possible kernel", files="module.yml")
    states(M, f"{ratio:.0f} times", near="narrower")
    states(M, f"{hardware.value(H100, 'hbm_bw') / PCIE:.0f} times", near="the narrow gate")


# =========================================================================================================
# The headline: read from module.yml, checked against the records
# =========================================================================================================


def _headline_bound(after: str) -> float:
    text = sources(M, "module.yml")[next(iter(sources(M, "module.yml")))]
    line = next(l for l in text.splitlines() if l.startswith("headline:"))
    m = re.search(re.escape(after) + r" is under (\d+(?:\.\d+)?)% of the run" if "first" in after
                  else re.escape(after) + r" under (\d+(?:\.\d+)?)%", line)
    assert m, f"the headline no longer states a share after {after!r}: {line}"
    return float(m.group(1)) / 100


def test_headline_shares_are_true_and_tight(recs):
    first, events, total = (r["value"] for r in need(recs, FIRST, EVENTS, TOTAL))
    assert all(r["unit"] == "ms" for r in need(recs, FIRST, EVENTS, TOTAL))
    first_bound = _headline_bound("the CUDA program's first launch")
    events_bound = _headline_bound("a warm, event-timed launch")
    for share, bound in ((first / total, first_bound), (events / total, events_bound)):
        assert share < bound, f"measured share {share:.4%} is not under the headline's {bound:.2%}"
        assert share > bound / 10, f"measured share {share:.4%}: the headline's {bound:.2%} is not the tight power of ten"
    assert events < first < total


def test_headline_context_dominates_and_first_launch_exceeds_warm(recs):
    context, total, first, events = (r["value"] for r in need(recs, CONTEXT, TOTAL, FIRST, EVENTS))
    assert context / total > 0.5, "the page calls context creation almost the whole program"
    assert first > events
    tri = {v: recs.get(f"A01/timeline/{v}/triton") for v in ("context", "alloc", "h2d", "kernel", "d2h", "free")}
    assert all(tri.values()), "Triton timeline records missing"
    assert max(tri, key=lambda v: tri[v]["value"]) == "kernel", "the page: the Triton first launch is the largest phase"
    assert recs["A01/timeline/kernel_events/triton"]["value"] > events


def test_timeline_ceiling_is_the_program_total(recs):
    for key in (FIRST, EVENTS, CONTEXT):
        (rec,) = need(recs, key)
        assert rec["ceiling"]["name"] == "program total" and rec["ceiling"]["value"] == recs[TOTAL]["value"]
    para = states(M, "program total", near="`ceiling` field", files="4-labs.md")
    assert "not a bandwidth" in para
    assert "copy-bandwidth ceiling" not in " ".join(paragraphs(lab("modules/A01-gpu-mental-model/4-labs.md")))


def test_timeline_kernel_is_l2_resident_and_above_its_hbm_bound(recs):
    footprint = BYTES_PER_ELEMENT * N_TIMELINE
    assert abs(footprint / L2_BYTES - 0.2) < 0.02  # "about a fifth" (12.6 MB of 62.9 MB)
    para = states(M, f"{footprint / 1e6:.1f} MB", near="of L2 the lab's H200 reports")
    assert f"{L2_BYTES:,} bytes ({L2_BYTES // 2**20} MiB)" in para
    assert "about a fifth" in para and "not from HBM" in para
    never_states(M, "about a quarter of a Hopper GPU's 50 MB L2")
    (events,) = need(recs, EVENTS)
    hbm_bound = footprint / HBM
    assert events["value"] * 1e-3 > 2 * hbm_bound, "the page says the warm kernel took several times the bound"
    states(M, f"{hbm_bound * 1e6:.1f} µs", near="although its data sat in L2")
    states(M, f"{LOADS * FLOAT_BYTES * N_TIMELINE / PCIE * 1e6:.0f} µs", near="Pageable copies")


# =========================================================================================================
# Little's law, at the measured copy ceiling, with its uncertainty
# =========================================================================================================


def _ceiling(recs) -> float:
    (kernel,) = need(recs, KERNEL)
    assert kernel["ceiling"]["unit"] == "GB/s" and kernel["ceiling"]["name"] == "device-to-device copy"
    return kernel["ceiling"]["value"] * 1e9


def test_littles_law_at_the_measured_copy_rate(recs):
    c = _ceiling(recs)
    assert c < HBM, "the copy ceiling is below the datasheet peak"
    in_flight = c * LATENCY_S
    per_warp = in_flight / (WARP * FLOAT_BYTES) / WARPS
    para = states(M, f"{in_flight / 1e6:.1f}", near="At the measured copy rate and the assumed latency")
    assert f"{in_flight / 1e6:.1f}\\times 10^{{6}}" in para
    states(M, f"{HBM * LATENCY_S / 1e6:.1f} MB", near="At the measured copy rate and the assumed latency")
    para = states(M, f"{in_flight / SMS / 1e3:.0f}", near="Spread it over the chip")
    assert f"\\approx {in_flight / SMS / 1e3:.0f}$ KB" in para
    para = states(M, f"**{per_warp:.0f}**", near="8,448 warps")
    assert f"{WARPS:,} warps" in para
    assert f"({HBM * LATENCY_S / (WARP * FLOAT_BYTES) / WARPS:.1f} at the datasheet peak)" in para
    assert round(in_flight / (WARP * FLOAT_BYTES), -3) == 16_000
    states(M, "16{,}000", near="warp-wide requests outstanding")


def test_littles_law_uncertainty_is_stated(recs):
    c = _ceiling(recs)
    lo, hi = (c * lat / (WARP * FLOAT_BYTES) / WARPS for lat in LATENCIES_S)
    para = states(M, f"about {lo:.0f} request per warp", near="Say how sure that is")
    assert f"about {hi:.0f}" in para and "±40%" in para
    loads = per_warp = c * LATENCY_S / (WARP * FLOAT_BYTES) / WARPS * LOADS / (LOADS + STORES)
    states(M, f"about {per_warp:.1f} per warp", near="two-thirds of the 2")
    para = states(M, f"about {lo * 2 / 3:.1f} loads", near="sits inside the uncertainty")
    assert f"about {hi * 2 / 3:.1f}" in para
    # the margin is inside the uncertainty: two loads cover the need at 300 ns, barely at 700 ns
    assert lo * 2 / 3 < LOADS and hi * 2 / 3 > 0.9 * LOADS
    assert "cannot say" in para
    assert loads < LOADS
    never_states(M, "1.5 per warp")
    never_states(M, "1.5 loads per warp")


# =========================================================================================================
# The roofline with the right compute roof
# =========================================================================================================


def test_bytes_flop_and_intensity():
    assert BYTES_PER_ELEMENT == 12
    states(M, "**12 bytes per element**", near="Bytes moved")
    states(M, f"{FLOP_PER_ELEMENT / BYTES_PER_ELEMENT:.3f}", near="\\frac{1}{12} \\approx")


def test_add_only_roof_and_ridges():
    add_h200 = FP32_FMA / FMA_FLOP
    add_mi = hardware.peak(MI300X, "fp32") / FMA_FLOP  # packed FP32 add: half the packed-FMA peak
    i = FLOP_PER_ELEMENT / BYTES_PER_ELEMENT
    row = states(M, f"{add_h200 / 1e12:.1f} TFLOP/s", near="| H200 | 67 TFLOP/s")
    assert f"**{FP32_FMA / HBM:.1f} FLOP/byte**" in row and f"**{add_h200 / HBM:.1f} FLOP/byte**" in row
    assert f"{add_h200 / HBM / i:.0f} times" in row
    row = states(M, f"{add_mi / 1e12:.1f} TFLOP/s", near="| MI300X | 163.4 TFLOP/s")
    mi_bw = hardware.value(MI300X, "hbm_bw")
    assert f"**{add_mi / mi_bw:.1f} FLOP/byte**" in row and f"{add_mi / mi_bw / i:.0f} times" in row
    para = states(M, f"{FP32_FMA / HBM / i:.0f}", near="The FMA ridge is the one")
    assert f"{hardware.peak(MI300X, 'fp32') / mi_bw / i:.0f} times" in para
    p_max, p_max_mi = i * HBM, i * mi_bw
    para = states(M, f"**{100 * p_max / add_h200:.2f}%**", near="add-only roof and")
    assert f"{100 * p_max_mi / add_mi:.2f}%" in para
    assert f"{100 * p_max / FP32_FMA:.2f}%" in para and f"{100 * p_max_mi / hardware.peak(MI300X, 'fp32'):.2f}%" in para
    states(M, f"{add_h200 / 1e12:.1f} TFLOP/s", near="an add-only kernel's compute roof")


def test_peaks_and_clocks_in_the_silicon_section():
    clock = FP32_FMA / (SMS * 128 * FMA_FLOP)  # 128 FP32 lanes per SM (nvidia-h100-whitepaper)
    states(M, f"{clock / 1e9:.2f}", near="consistent with the block counts")
    mi_clock = 2.1e9  # amd-cdna3-whitepaper, MI300X peak engine clock
    assert hardware.value(MI300X, "units") * 256 * mi_clock == pytest.approx(hardware.peak(MI300X, "fp32"), rel=1e-3)
    para = states(M, "256", near="| FP32 vector throughput per block")
    assert "packed FP32" in para and "128 FP32 FLOP/clock per CU with plain FMA" in para
    states(M, f"{HBM / hardware.value(H100, 'hbm_bw'):.2f}", near="more and faster memory")


def test_coherence_is_not_the_infinity_caches_job():
    para = states(M, "Infinity Cache", near="Coherence between XCDs")
    assert "not the Infinity Cache's job" in para and "probe filters" in para
    for text in sources(M).values():
        assert "handled at the Infinity Cache" not in text


# =========================================================================================================
# Bytes in flight per warp, read off the lab files; the float4 variant and its record
# =========================================================================================================


def test_bytes_in_flight_per_warp_from_the_lab_files():
    cu, tri = lab("labs/A01/cuda/vector_add.cu"), lab("labs/A01/triton/vector_add.py")
    assert "constexpr int kBlock = 256;" in cu
    assert "BLOCK = 1024" in tri and "num_warps" not in tri
    one_float = LOADS * WARP * FLOAT_BYTES
    float4 = LOADS * WARP * VECTOR_BYTES
    # Triton's blocked layout for BLOCK=1024, 4 warps, fp32 with 16-byte vectors: sizePerThread=[4]
    per_thread_vec = VECTOR_BYTES // FLOAT_BYTES
    pass_elems = per_thread_vec * WARP * TRITON_DEFAULT_NUM_WARPS
    wraps = 1024 // pass_elems
    triton = WARP * LOADS * wraps * VECTOR_BYTES
    para = states(M, f"{pass_elems}", near="sizePerThread = [4]")
    assert f"{pass_elems * FLOAT_BYTES // 1000} KB" in para and "wraps around twice" in para and wraps == 2
    assert f"{triton:,}".replace(",", "{,}") in para and "eight times" in para and triton // one_float == 8
    assert "not 8 consecutive floats" in para
    para = states(M, f"{float4:,}".replace(",", "{,}"), near="The `float4` CUDA kernel")
    assert float4 // one_float == 4 and "four times" in para and f"{one_float}" in para
    states(M, f"{N_BENCH // 256:,}".replace(",", "{,}"), near="The one-float CUDA kernel")
    states(M, f"{triton:,}".replace(",", "{,}"), near="Triton: 4 warps", files="9-self-assessment.md")


def test_float4_lab_has_a_tail_and_the_same_checks():
    for path in ("labs/A01/cuda/vector_add.cu", "labs/A01/hip/vector_add.hip"):
        src = lab(path)
        assert '{"float4", launch_float4}' in src and "size_t n4 = n / 4;" in src
        assert "size_t t = 4 * n4 + i;" in src and "if (t < n) c[t] = a[t] + b[t];" in src
        sizes = [int(eval(s.replace("size_t(1)", "1"))) for s in
                 re.search(r"sizes = \{([^}]*)\};", src).group(1).split(",")]
        assert {n % 4 for n in sizes} == {0, 1, 2, 3}, f"{path}: verify sizes must leave tails of 0..3"
        assert "for (const Variant& v : kVariants)" in src


def test_float4_reaches_the_copy_and_one_float_falls_short(recs):
    kernel, float4, triton = need(recs, KERNEL, FLOAT4, TRITON)
    frac = {k: r["value"] / r["ceiling"]["value"] for k, r in ((KERNEL, kernel), (FLOAT4, float4), (TRITON, triton))}
    assert frac[KERNEL] < 0.9, f"one-float at {frac[KERNEL]:.0%}: the page says well short of the copy"
    assert frac[FLOAT4] >= 0.97 and frac[TRITON] >= 0.97, "the page says float4 and Triton reach the copy"
    assert kernel["ceiling"] == float4["ceiling"], "one copy ceiling measured once per run for both variants"
    for r in (kernel, float4, triton):
        assert r["value"] * 1e9 < HBM, "nothing beats the datasheet, the only hard bound"
        assert r["bytes"] == BYTES_PER_ELEMENT * N_BENCH
    para = states(M, "4.8 TB/s", near="What it is not: an upper bound")
    assert "a few per cent above the copy" in para


# =========================================================================================================
# Wording pinned: the corrected claims stay corrected
# =========================================================================================================


def test_cards_state_bytes_each_way_correctly():
    para = states(M, "8 in, 4 out", near="64 / (64 + 4800)", files="cards")
    assert "12 bytes per element each way" not in para and "not a ceiling" in para


def test_vllm_capture_is_piecewise_not_a_whole_step():
    para = states(M, "piecewise", near="vLLM", files="7-production.md")
    assert "attention" in para and "eagerly" in para and "[@vllm-cuda-graphs]" in para
    for text in sources(M).values():
        assert "a whole step is submitted\nas one unit" not in text and "a whole step is submitted as one unit" not in text


def test_hip_exercises_name_the_hip_solution():
    for name in ("vector_add", "timeline"):
        first = lab(f"labs/A01/hip/{name}_exercise.hip").splitlines()[0]
        assert f"{name}.hip" in first and ".cu" not in first.replace(".hip", "")


def test_launch_grid_for_two_to_the_24():
    states(M, f"{math.ceil(N_WORKED / 256):,}", near="A **launch**")


# =========================================================================================================
# The timeline lab checks like every lab, without moving its phases
# =========================================================================================================
TIMELINE_SOURCES = {
    "labs/A01/cuda/timeline.cu": ("kBlock = ", "cudaMemcpy(da, a.data()", "tutor::poison(dc, bytes);"),
    "labs/A01/cuda/timeline_exercise.cu": ("kBlock = ", "cudaMemcpy(da, a.data()", "tutor::poison(dc, bytes);"),
    "labs/A01/hip/timeline.hip": ("kBlock = ", "hipMemcpy(da, a.data()", "tutor::poison(dc, bytes);"),
    "labs/A01/hip/timeline_exercise.hip": ("kBlock = ", "hipMemcpy(da, a.data()", "tutor::poison(dc, bytes);"),
    "labs/A01/triton/timeline.py": ("BLOCK = ", "da.copy_(a)", "tutor_lab.poison(dc)"),
    "labs/A01/triton/timeline_exercise.py": ("BLOCK = ", "da.copy_(a)", "tutor_lab.poison(dc)"),
}


def _extra_sizes(src: str) -> list[int]:
    """The sizes of the checks after the timeline: the loop over m whose body calls verify(m, ...)."""
    lines = src.splitlines()
    k = next(i for i, ln in enumerate(lines) if "verify(m, args.seed)" in ln)
    loop = lines[k] if lines[k].lstrip().startswith("for") else lines[k - 1]
    loop = re.sub(r"\(size_t\(1\) << 20\) \+ 7|\(1 << 20\) \+ 7", str(2**20 + 7), loop)
    loop = re.sub(r"size_t\((\d+)\)", r"\1", loop)
    return [int(x) for x in re.findall(r"(?<![\w.])\d+(?![\w.])", loop.split("verify")[0])]


@pytest.mark.parametrize("path", sorted(TIMELINE_SOURCES))
def test_timeline_poisons_before_h2d_and_checks_partial_blocks_off_the_clock(path):
    block_marker, first_copy, poison = TIMELINE_SOURCES[path]
    src = lab(path)
    block = int(re.search(re.escape(block_marker) + r"(\d+)", src).group(1))
    main = src[src.index("def main" if path.endswith(".py") else "int main"):]
    # the poison runs between the alloc and h2d phases, waited for and timed on its own ...
    assert main.index("t_alloc = ms_since(t)") < main.index(poison) < main.index("t_poison = ms_since(t)")
    assert main.index("t_poison = ms_since(t)") < main.index("pageable memory: the runtime stages it")
    assert main.index("pageable memory: the runtime stages it") < main.index(first_copy)
    between = main[main.index(poison):main.index("t_poison = ms_since(t)")]
    assert "Synchronize()" in between or "sync()" in between
    # the h2d phase ends with the device idle: a pageable copy may return before its last DMA lands
    h2d = main[main.index(first_copy):main.index("t_h2d = ms_since(t)")]
    assert "Synchronize()" in h2d or "sync()" in h2d, path
    # ... and taken out of the total, which is read before the extra checks: none of them is on the clock
    assert "t_total = ms_since(start) - t_poison" in main
    assert main.index("t_total = ms_since(start) - t_poison") < main.index("verify(m, args.seed)")
    sizes = _extra_sizes(src)
    assert 1 in sizes and any(m % block for m in sizes if m > block), (path, sizes, block)
    verify = src[src.index("def verify" if path.endswith(".py") else "void verify"):]
    assert ("tutor_lab.output_like" in verify) if path.endswith(".py") else ("tutor::poison(dc, bytes);" in verify)


def test_timeline_page_says_the_poison_is_outside_the_phases(recs):
    """The memset writes n floats, about 1 µs at the copy bandwidth; the page says it is in no phase."""
    poison_bytes = N_TIMELINE * FLOAT_BYTES
    t = poison_bytes / _ceiling(recs)
    para = states(M, f"{poison_bytes / 1e6:.1f} MB", near="poison is a device-side fill")
    assert f"about {t * 1e6:.0f} µs" in para and f"{poison_bytes // 2**20} MiB" in para
    assert "subtracts that time from its total and puts it in no phase" in para
    # the Triton h2d phase (two copies and nothing else) is no longer than a few times the CUDA one
    h2d_cuda, h2d_tri = need(recs, "A01/timeline/h2d/cuda", "A01/timeline/h2d/triton")
    assert h2d_tri["value"] < 3 * h2d_cuda["value"], "a poison inside the Triton h2d phase would show here"
    cuda = _extra_sizes(lab("labs/A01/cuda/timeline.cu"))
    assert cuda == [1, 1000, 2**20 + 7]
    assert "sizes 1, 1,000 and $2^{20} + 7$" in para
    tri = lab("labs/A01/triton/timeline.py")
    assert "for m in [1, 1000] + ([] if args.quick else [(1 << 20) + 7]):" in tri
    assert "(1 and 1,000 with `--quick` in Triton)" in para
    never_states(M, "the worked solution does not")
    never_states(M, "inside h2d")


def test_timeline_events_hold_the_launch_path_and_are_not_a_phase(recs):
    """The start event is recorded before the launch call (tutor_lab's median_ms), so kernel_events holds the
    host's launch path too: for Triton, Python code, several times the CUDA interval for the same kernel."""
    for kit, start, call in (("labs/common/cuda/tutor_lab.cuh", "cudaEventRecord(start)", "launch();"),
                             ("labs/common/python/tutor_lab.py", "start.record()", "fn()")):
        body = lab(kit)
        body = body[body.index("median_ms"):]
        assert body.index(start) < body.index(call, body.index(start)), kit
    cuda, tri = (r["value"] for r in need(recs, EVENTS, "A01/timeline/kernel_events/triton"))
    assert tri > 2 * cuda, "the page says the Triton interval is several times the CUDA one"
    para = states(M, "several times the", near="Nor is the warm `kernel_events` time the kernel alone", files="4-labs.md")
    assert "Python launch path" in para
    para = states(M, "more than 100%", near="is printed with a share as well", files="4-labs.md")
    assert "not a phase" in para
    for path in TIMELINE_SOURCES:
        assert "kernel_events times the kernel again, warm: it is not a phase and not in the total" in lab(path), path
    never_states(M, "time is the kernel itself")
    never_states(M, 'the kind of "kernel time" a profiler')
    never_states(M, 'the smallest "kernel time" there is')
