"""Claims of module B07 (sharding), checked by simulation, against the hardware table, against the
measurement records, and read back from the module's own text.

The first part plays the pipeline schedules of tutor_build.models.pipeline over a grid of stages S,
micro-batches M and virtual stages v and checks every closed form the prose states: the bubble, the peak
number of in-flight micro-batches per stage, and the identity the module is built around -- under 1F1B,
stage 0 holds (L/S) * S * a = L * a of activations: the S cancels. It also checks the condition that
identity and the GPipe = 1F1B step time need (equal stages), with per-stage times.

The second part derives the numbers the sections print (ridge points, intensities, the answers of the
self-assessment) from the hardware table and the labs' own sizes, and finds each one, formatted as the page
prints it, in the paragraph that states it (tests/claims/prose.py).

The third part reads the measurement records. pipeline_memory, tp_mlp and two_stage need two GPUs. Where
records exist they are checked and a missing variant is a failure; where a lab has no record at all the test
asserts that the page quotes none of its numbers and says that they are not measured. Nothing here skips.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from tutor_build.measurements import records
from tutor_build.models import hardware
from tutor_build.models import pipeline as pp

from prose import never_states, sources, states

ROOT = Path(__file__).parents[2]
MiB = 2**20

GRID_S = (1, 2, 3, 4, 6, 8)
GRID_M = (1, 2, 3, 4, 6, 8, 12, 16, 24)
GRID_V = (1, 2, 3, 4)
TIMES = ((1.0, 1.0), (1.0, 2.0), (1.0, 3.0))  # (t_f, t_b): the closed forms hold for any ratio

H200_BF16 = hardware.peak("h200", "bf16")  # dense FLOP/s
H200_LINK = hardware.value("h200", "link_bw")  # NVLink bytes/s in one direction
H200_HBM = hardware.value("h200", "hbm_bw")
MI300X_BF16 = hardware.peak("mi300x", "bf16")
MI300X_HBM = hardware.value("mi300x", "hbm_bw")

BYTES_PER_PARAM = 16  # mixed-precision Adam: bf16 weight + grad, fp32 master + two moments (ZeRO, section 2)
BF16 = 2  # bytes per element
FP32 = 4


def _lab(path: str) -> str:
    return (ROOT / "labs" / "B07" / path).read_text(encoding="utf-8")


def _pipeline_memory_bench() -> dict:
    """The two-GPU configuration of pipeline_memory, read from the lab source."""
    m = re.search(r"runs = \[dict\(S=(\d+), L=(\d+), M=(\d+), h=(\d+), b=(\d+) \+ rng\.randint\(0, (\d+)\) \* (\d+)\)\]",
                  _lab("python/pipeline_memory.py"))
    assert m, "the GPU configuration line of pipeline_memory.py changed"
    S, L, M, h, b0, k, step = map(int, m.groups())
    return dict(S=S, L=L, M=M, h=h, b_min=b0, b_max=b0 + k * step)


def _tp_mlp_bench() -> tuple[int, int]:
    m = re.search(r"def bench\(rank, T, device, b=(\d+), h=(\d+)\)", _lab("python/tp_mlp.py"))
    assert m, "the bench signature of tp_mlp.py changed"
    return int(m.group(1)), int(m.group(2))


def _two_stage_micro_batches() -> int:
    m = re.search(r"int M = args\.quick \? \d+ : (\d+);", _lab("cuda/two_stage.cu"))
    assert m, "the micro-batch count of two_stage.cu changed"
    return int(m.group(1))


def _sig(x: float, digits: int) -> float:
    """x rounded to `digits` significant figures (how the page rounds its estimates)."""
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def _tex_int(x: float) -> str:
    """An integer as the page's TeX prints it: 2{,}200."""
    return f"{x:,.0f}".replace(",", "{,}")


# --------------------------------------------------------------------------------------------
# Schedules against their closed forms
# --------------------------------------------------------------------------------------------


def _cases():
    for S in GRID_S:
        for M in GRID_M:
            yield "gpipe", S, M, 1
            yield "1f1b", S, M, 1
            if M % S == 0:
                for v in GRID_V:
                    yield "interleaved", S, M, v


CASES = list(_cases())


@pytest.mark.parametrize("schedule,S,M,v", CASES)
def test_bubble_matches_closed_form(schedule, S, M, v):
    for t_f, t_b in TIMES:
        r = pp.simulate(schedule, S, M, v, t_f, t_b)
        assert r.bubble_ratio == pytest.approx(float(pp.bubble_ratio_closed(schedule, S, M, v)), abs=1e-12)
        assert r.bubble_fraction == pytest.approx(float(pp.bubble_fraction_closed(schedule, S, M, v)), abs=1e-12)
        # every device idles for the same time: the bubble is a property of the pipeline
        assert max(r.idle) - min(r.idle) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("schedule,S,M,v", CASES)
def test_peak_in_flight_matches_closed_form(schedule, S, M, v):
    r = pp.simulate(schedule, S, M, v)
    assert list(r.peak_in_flight) == [pp.peak_in_flight_closed(schedule, S, M, s, v) for s in range(S)]


def test_gpipe_and_1f1b_have_the_same_bubble_with_equal_stages():
    for S in GRID_S:
        for M in GRID_M:
            for t_f, t_b in TIMES:
                g, f = pp.simulate("gpipe", S, M, 1, t_f, t_b), pp.simulate("1f1b", S, M, 1, t_f, t_b)
                assert g.makespan == pytest.approx(f.makespan)
                assert g.bubble_fraction == pytest.approx(Fraction(S - 1, M + S - 1))
                # scale of all ones is the equal-stage case
                ones = pp.simulate("1f1b", S, M, 1, t_f, t_b, scale=[1.0] * S)
                assert ones.makespan == pytest.approx(f.makespan)


def test_unequal_stages_break_the_equality():
    """Section 2, step 4: S = 4, M = 8, t_b = t_f, stage 0 twice as slow: GPipe 38, 1F1B 32; slow stage last: 38."""
    S, M = 4, 8
    slow_first = [2.0] + [1.0] * (S - 1)
    g = pp.simulate("gpipe", S, M, 1, 1.0, 1.0, scale=slow_first)
    f = pp.simulate("1f1b", S, M, 1, 1.0, 1.0, scale=slow_first)
    assert f.makespan < g.makespan
    assert f.idle[0] == pytest.approx(0.0)  # 1F1B keeps the slow stage busy the whole step
    assert f.makespan == pytest.approx(f.busy[0])
    assert g.idle[0] > 0
    slow_last = [1.0] * (S - 1) + [2.0]
    g_last = pp.simulate("gpipe", S, M, 1, 1.0, 1.0, scale=slow_last)
    f_last = pp.simulate("1f1b", S, M, 1, 1.0, 1.0, scale=slow_last)
    assert g_last.makespan == pytest.approx(f_last.makespan)
    para = states("B07", f"gives {g.makespan:g} forward-slot times for GPipe and {f.makespan:g} for 1F1B",
                  near="twice as slow", files="2-first-principles.md")
    assert re.search(rf"both take {g_last.makespan:g}\b", para), para
    assert "equal stages" in para
    states("B07", f"{g.makespan:g} against {f.makespan:g}", near="With unequal stages", files="9-self-assessment.md")
    # a slow stage elsewhere: 1F1B is not slower than GPipe in these cases either
    for scale in ([1, 2, 1, 1], [1, 1, 2, 1], [3, 1, 2, 1], [1.5, 1.25, 1.25, 1]):
        assert (pp.simulate("1f1b", S, M, 1, 1, 2, scale=scale).makespan
                <= pp.simulate("gpipe", S, M, 1, 1, 2, scale=scale).makespan + 1e-9)


def test_1f1b_stage_s_keeps_S_minus_s_in_flight():
    for S in GRID_S:
        for M in GRID_M:
            if M < S:
                continue
            r = pp.simulate("1f1b", S, M)
            assert list(r.peak_in_flight) == [S - s for s in range(S)]
            assert r.peak_in_flight[0] == max(r.peak_in_flight)  # stage 0 is the worst


@pytest.mark.parametrize("S", GRID_S)
def test_s_cancels_under_1f1b(S):
    """Stage 0 of a 1F1B pipeline holds exactly L*a, the unpipelined model's activations."""
    L, a = 48, 1000  # layers (divisible by every S in the grid), bytes per layer per micro-batch
    for M in (S, 2 * S, 4 * S + 1):
        r = pp.simulate("1f1b", S, M)
        per_stage = r.activation_bytes(L, a)
        assert per_stage[0] == pytest.approx(L * a)  # (L/S) * S * a
        assert pp.activation_units_closed("1f1b", S, M, 0) == 1
        for s, value in enumerate(per_stage):
            assert value == pytest.approx(L / S * (S - s) * a)


def test_gpipe_keeps_every_micro_batch():
    L, a = 48, 1000
    for S in GRID_S:
        for M in GRID_M:
            r = pp.simulate("gpipe", S, M)
            assert r.activation_bytes(L, a) == pytest.approx([L / S * M * a] * S)


def test_interleaving_costs_memory():
    """Stage 0 under interleaving holds L * (1 + (S-1)/(S v)) * a (for M > S): more than 1F1B."""
    for S in (2, 4, 8):
        for v in (2, 3, 4):
            M = 4 * S
            r = pp.simulate("interleaved", S, M, v)
            want = Fraction(1) + Fraction(S - 1, S * v)
            assert pp.activation_units_closed("interleaved", S, M, 0, v) == want
            assert r.peak_stage_units[0] * 1.0 / S == pytest.approx(float(want))
            assert r.bubble_ratio == pytest.approx((S - 1) / (v * M))


def test_interleaved_with_M_equal_S_holds_exactly_La():
    """With M == S Megatron-LM runs every forward first: GPU 0 holds all v*M chunks, i.e. L*a."""
    for S in (2, 4, 8):
        for v in (2, 3, 4):
            r = pp.simulate("interleaved", S, S, v)
            assert r.peak_in_flight[0] == v * S
            assert pp.activation_units_closed("interleaved", S, S, 0, v) == 1


def test_1f1b_average_over_stages_is_about_half():
    """Summed over stages 1F1B holds L*a*(S+1)/2; stage 0 alone holds L*a. The average is what balancing
    (BPipe) can reach at best, since it moves activations and does not shrink the total."""
    for S in GRID_S:
        M = 2 * S
        units = [pp.activation_units_closed("1f1b", S, M, s) for s in range(S)]
        assert sum(units) == Fraction(S + 1, 2)
        assert units[0] == 1 == max(units)
    states("B07", r"L\,a\,\frac{S+1}{2S}", near="BPipe", files="2-first-principles.md")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        pp.simulate("interleaved", 4, 6, 2)  # M not divisible by S
    with pytest.raises(ValueError):
        pp.simulate("1f1b", 4, 8, 2)  # 1F1B has one chunk per device
    with pytest.raises(ValueError):
        pp.simulate("zero-bubble", 4, 8)
    with pytest.raises(ValueError):
        pp.simulate("1f1b", 4, 8, scale=[1, 1, 1])  # one factor per stage
    with pytest.raises(ValueError):
        pp.simulate("1f1b", 4, 8, scale=[1, 0, 1, 1])


# --------------------------------------------------------------------------------------------
# What the corrected prose says (and no longer says)
# --------------------------------------------------------------------------------------------


def test_activation_claim_is_scoped_to_the_usual_schedules():
    """'Pipelining does not reduce activation memory' holds for GPipe, 1F1B and interleaved 1F1B only."""
    for files in ("*.md", "*.yml", "cards"):
        never_states("B07", "Pipelining does not reduce activation memory", files=files)
    headline = sources("B07", "module.yml")["modules/B07-sharding/module.yml"]
    assert "GPipe, 1F1B and interleaved 1F1B do not reduce activation memory" in headline
    assert "V-shape" in headline and "BPipe" in headline
    para = states("B07", "V-Half", near="Schedules built", files="2-first-principles.md")
    assert "[@qi2024-controllable-memory]" in para and "[@kim2023-bpipe]" in para
    assert "about half of 1F1B's" in para and "about a third" in para


def test_zero_bubble_schedules_are_told_apart():
    never_states("B07", "without raising 1F1B's peak memory", files="*.md")
    never_states("B07", "without raising 1F1B's peak memory", files="cards")
    S = "S"  # the page writes the ZB-H2 bound with the module's S, the paper's p
    para = states("B07", f"$2{S} - 1$", near="ZB-H2", files="6-tradeoffs.md")
    assert "about a third of its" in para and "only ZB-V" in para and "[@qi2024-zerobubble]" in para
    card = states("B07", "2S-1", near="ZB-H1", files="cards")
    assert "only ZB-V" in card and "about a third" in card


def test_gpipe_memory_is_said_to_be_without_recomputation():
    para = states("B07", "without recomputation", near=r"A_s^{\text{GPipe}}", files="2-first-principles.md")
    assert "re-materializes" in para and "[@huang2019-gpipe]" in para
    states("B07", "without recomputation", near="GPipe", files="cards")


def test_rccl_rings_use_every_link():
    """The rings of RCCL's eight-GPU, seven-links-per-GPU model, as the page counts them: 28 rings of 14 orders
    (each twice), whose hops give every GPU all seven peers. The orders are the ones of rome_model_79 in
    src/graph/rome_models.cc (cited as rccl-rome-models)."""
    orders = ["0 1 2 3 4 5 6 7", "0 1 2 3 4 5 7 6", "0 2 4 1 3 6 5 7", "0 2 4 6 1 7 3 5", "0 3 1 5 2 7 4 6",
              "0 3 5 1 6 2 7 4", "0 4 1 7 3 6 2 5", "7 6 5 4 3 2 1 0", "6 7 5 4 3 2 1 0", "7 5 6 3 1 4 2 0",
              "5 3 7 1 6 4 2 0", "6 4 7 2 5 1 3 0", "4 7 2 6 1 5 3 0", "5 2 6 3 7 1 4 0"]
    out = {g: set() for g in range(8)}
    for order in orders:
        ring = [int(x) for x in order.split()]
        for a, b in zip(ring, ring[1:] + ring[:1]):
            out[a].add(b)
    assert all(out[g] == set(range(8)) - {g} for g in range(8))
    links = len(out[0])
    para = states("B07", str(2 * len(orders)), near="RCCL", files="5-performance.md")
    assert f"{len(orders)} orders" in para and "[@rccl-rome-models]" in para
    assert "two of a GPU's seven links" in para and links == 7


# --------------------------------------------------------------------------------------------
# Derived numbers in the prose, from the hardware table
# --------------------------------------------------------------------------------------------


def test_ridge_points_in_the_prose():
    """Memory ridges and the NVLink communication ridge of section 5."""
    para = states("B07", f"{H200_BF16 / H200_HBM:.0f}", near="ridge point", files="5-performance.md")
    assert f"{MI300X_BF16 / MI300X_HBM:.0f}" in para
    assert f"{MI300X_BF16 / 1e12:.1f}" in para  # 1307.4
    # the datasheet's dense figure is 1979/2 = 989.5; the page prints it truncated, as 989
    assert f"{math.floor(H200_BF16 / 1e12)}" in para
    assert f"{H200_LINK / 1e9:.0f}" in para and f"{2 * H200_LINK / 1e9:.0f} GB/s" in para
    ridge = H200_BF16 / H200_LINK
    states("B07", _tex_int(_sig(ridge, 2)), near="communication ridge", files="5-performance.md")
    states("B07", f"{_sig(ridge, 2):,.0f} FLOP per byte", near="communication ridge", files="9-self-assessment.md")
    states("B07", f"{_sig(ridge, 2):,.0f} FLOP per byte", near="ridge", files="cards")
    # the 1,979 TFLOP/s quoted with sparsity is twice the dense rate of the table
    states("B07", f"{2 * H200_BF16 / 1e12:,.0f}", near="2:4 sparsity", files="3-silicon.md")


def test_tensor_and_pipeline_intensity_against_the_ridge():
    ridge = H200_BF16 / H200_LINK
    h, T = 8192, 8  # the example of section 5
    tp = 4.5 * h / (T - 1)  # FLOP per byte sent: 72 bsh^2/T over 16 (T-1)/T bsh
    para = states("B07", _tex_int(_sig(tp, 3)), near="tensor-parallel intensity", files="5-performance.md")
    assert f"{tp / ridge:.1f} times the H200 ridge" in para
    assert f"{_tex_int(_sig(ridge, 2))}/{_tex_int(_sig(tp, 3))} \\approx {ridge / tp:.0%}".replace("%", "\\%") in para
    states("B07", f"{ridge / tp:.0%}", near="GEMM time at H200 peak", files="6-tradeoffs.md")
    states("B07", f"{_sig(tp, 2):,.0f}", near="h=8192, T=8", files="cards")
    layers_per_stage = 4
    pipe = 18 * h * layers_per_stage
    assert f"{_sig(pipe, 2):,.0f} at $h = 8192$" in para
    assert f"some {_sig(pipe / ridge, 2):.0f} times" in para


def test_self_assessment_arithmetic():
    ridge = H200_BF16 / H200_LINK
    # Q4: h = 12288, bs = 4096, T = 8 (the question's givens)
    h, bs, T = 12288, 4096, 8
    nbytes, flop = 16 * (T - 1) / T * bs * h, 72 * bs * h * h / T
    intensity = 4.5 * h / (T - 1)
    assert intensity == pytest.approx(flop / nbytes)
    states("B07", f"{nbytes / 1e6:.0f}", near="16 \\times 0.875", files="9-self-assessment.md")
    para = states("B07", f"{flop / 1e12:.2f} \\times 10^{{12}}", near="Intensity", files="9-self-assessment.md")
    assert _tex_int(_sig(intensity, 2)) in para
    assert f"about {intensity / ridge:.1f} times" in para
    assert f"{ridge / intensity:.0%}".replace("%", "\\%") in para
    # Q2: S = 4, bubble under 5% of the step
    S, v, target = 4, 4, Fraction(1, 20)
    m_1f1b = min(M for M in range(1, 1000) if Fraction(S - 1, M + S - 1) < target)
    m_int = min(M for M in range(S, 1000, S) if Fraction(S - 1, v * M + S - 1) < target)
    para = states("B07", f"M \\ge {m_1f1b}", near="1F1B: $(S-1)/(M+S-1)", files="9-self-assessment.md")
    assert f"$M = {m_int}$" in para
    assert f"{S - 1}/{v * m_int + S - 1}" in para and f"{(S - 1) / (v * m_int + S - 1):.1%}".replace("%", "\\%") in para
    extra = Fraction(S - 1, S * v)  # stage 0 holds L a (1 + (S-1)/(S v)) under interleaving
    assert f"(1 + {extra.numerator}/{extra.denominator})" in para
    assert f"{float(extra):.0%} more" in para
    # Q1: 48 layers, a = 1.5 GiB, S = 8, M = 32
    L, a, S, M = 48, 1.5, 8, 32
    para = states("B07", f"{L / S * M * a:g}", near="GPipe keeps all", files="9-self-assessment.md")
    for value in (L * a, L / S * 1 * a, L * a * (S + 1) / (2 * S)):
        assert re.search(rf"(?<![\d.]){value:g}\$? GiB", para), (value, para)
    # Q5: 30 B parameters on 4 stages
    psi, stages = 30e9, 4
    para = states("B07", f"{BYTES_PER_PARAM * psi / 1e9:.0f}", near="Pipelining divides parameter state",
                  files="9-self-assessment.md")
    assert f"{BYTES_PER_PARAM * psi / stages / 1e9:.0f} GB per stage" in para


def test_bubble_and_capacity_numbers():
    S, M = 8, 8
    para = states("B07", f"{(S - 1) / (M + S - 1):.0%}", near="The bubble", files="6-tradeoffs.md")
    need = min(m for m in range(1, 1000) if Fraction(S - 1, m + S - 1) <= Fraction(1, 10))
    assert f"9(S-1) = {need}" in para
    # 70 B parameters at 16 bytes each, against the capacity of each GPU
    state = 70e9 * BYTES_PER_PARAM
    para = states("B07", f"{state / 1e12:.2f} TB", near="70-billion-parameter", files="3-silicon.md")
    assert f"at least {math.ceil(state / hardware.value('h200', 'hbm_bytes'))} H200s" in para
    assert f"{math.ceil(state / hardware.value('mi300x', 'hbm_bytes'))} MI300X" in para


def test_tp_mlp_communication_bound():
    """Two all-reduces of the b x h bf16 activation on T = 2, at the full link rate in one direction."""
    b, h = _tp_mlp_bench()
    buf = b * h * BF16
    T = 2
    sent = 2 * (T - 1) / T * buf  # ring all-reduce: bytes out of each GPU
    t_ms = 2 * sent / H200_LINK * 1e3
    para = states("B07", f"{buf / 1e6:.0f} MB", near="two all-reduces per MLP", files="5-performance.md")
    assert f"{t_ms:.2f} ms" in para
    assert f"${b}$ tokens" in states("B07", f"$h = {h}$", near="tp_mlp --bench", files="5-performance.md")


def test_pipeline_memory_configuration_in_the_prose():
    """Section 5 prints the lab's two-GPU configuration and the range of a it implies."""
    cfg = _pipeline_memory_bench()
    a_min = 9 * cfg["h"] * cfg["b_min"] * FP32 / MiB  # input, GELU input and output: h + 4h + 4h per row
    a_max = 9 * cfg["h"] * cfg["b_max"] * FP32 / MiB
    para = states("B07", f"{a_min:g} and {a_max:g} MiB", near="pipeline_memory", files="5-performance.md")
    for key in ("S", "L", "M", "h"):
        assert f"${key} = {cfg[key]}$" in para, key
    assert f"between {cfg['b_min']} and {cfg['b_max']} rows" in para
    # the per-in-flight stage output is one b x h tensor against 9 b h per layer of the L/S layers
    per_stage_layers = cfg["L"] // cfg["S"]
    states("B07", f"1/{9 * per_stage_layers}", near="Per in-flight micro-batch", files="5-performance.md")


# --------------------------------------------------------------------------------------------
# Measurement records (labs that need two GPUs)
# --------------------------------------------------------------------------------------------

RECS = records(ROOT)


def _measured_or_said_missing(lab: str, said: str) -> dict | None:
    """The records of a two-GPU lab, or None after asserting that the page quotes none of them and says so."""
    found = {k: v for k, v in RECS.items() if k.startswith(f"B07/{lab}/")}
    if found:
        return found
    for name, text in sources("B07").items():
        assert f'("B07/{lab}/' not in text, f"{name} quotes a B07/{lab} record that does not exist"
    states("B07", said, near=lab, files="5-performance.md")
    return None


def _key(recs: dict, key: str) -> dict:
    assert key in recs, f"the records of this lab exist but {key} is missing: re-bench the lab"
    return recs[key]


def test_measured_pipeline_memory():
    recs = _measured_or_said_missing("pipeline_memory", "not measured")
    if recs is None:
        return
    cfg = _pipeline_memory_bench()
    S, L, M = cfg["S"], cfg["L"], cfg["M"]
    saved = {v: _key(recs, f"B07/pipeline_memory/{v}/python")["value"]
             for v in ("nopipe", "gpipe_stage0", "gpipe_stage1", "1f1b_stage0", "1f1b_stage1")}
    for v, value in saved.items():  # the saved-tensor meter lands on the derivation to the byte
        assert value == pytest.approx(recs[f"B07/pipeline_memory/{v}/python"]["ceiling"]["value"], rel=1e-9), v
    a = saved["nopipe"] / L  # MiB per layer per micro-batch of this run
    assert 9 * cfg["h"] * cfg["b_min"] * FP32 / MiB <= a <= 9 * cfg["h"] * cfg["b_max"] * FP32 / MiB
    assert saved["1f1b_stage0"] == pytest.approx(saved["nopipe"], rel=1e-9)  # the S cancels
    for s in range(S):
        assert saved[f"1f1b_stage{s}"] == pytest.approx(L / S * (S - s) * a, rel=1e-9)
        assert saved[f"gpipe_stage{s}"] == pytest.approx(L / S * M * a, rel=1e-9)
    assert saved["gpipe_stage0"] / saved["1f1b_stage0"] == pytest.approx(M / S, rel=1e-9)
    states("B07", f"$M/S = {M // S}$", near="GPipe holds", files="5-performance.md")


def test_measured_allocator_peak_above_the_saved_tensors():
    """The allocator holds more than the saved tensors: one b x h stage output per micro-batch in flight (a/9)
    plus a schedule-independent few hundred MiB. That is why the headline says the saved tensors, not the
    allocator, match the derivation."""
    recs = _measured_or_said_missing("pipeline_memory", "not measured")
    if recs is None:
        return
    cfg = _pipeline_memory_bench()
    S, L, M = cfg["S"], cfg["L"], cfg["M"]
    val = lambda v: _key(recs, f"B07/pipeline_memory/{v}/python")["value"]  # noqa: E731
    excess = {v: val(v + "_alloc") - val(v) for v in ("nopipe", "gpipe_stage0", "1f1b_stage0", "1f1b_stage1")}
    assert all(x > 0 for x in excess.values()), excess
    a = val("nopipe") / L
    # GPipe's stage 0 has M - S more micro-batches in flight than 1F1B's, each with one b x h output kept
    assert excess["gpipe_stage0"] - excess["1f1b_stage0"] == pytest.approx((M - S) * a / 9, rel=0.02)
    # the rest does not depend on the schedule: a few hundred MiB
    assert 100 < excess["1f1b_stage1"] < 1000
    ratio = val("gpipe_stage0_alloc") / val("1f1b_stage0_alloc")
    assert 0.75 * M / S < ratio < M / S  # the constant term dilutes the M/S of the saved tensors
    headline = sources("B07", "module.yml")["modules/B07-sharding/module.yml"]
    assert "the allocator's peak sits a few hundred MiB above" in headline
    never_states("B07", "the memory consequence is exactly", files="7-production.md")
    para = states("B07", "$(L/S)Ma$", near="caching allocator", files="7-production.md")
    assert "tensors autograd saves" in para


def test_measured_tp_mlp_or_said_missing():
    """tp_mlp needs two GPUs. With records: TP is slower than perfect scaling by at least the two all-reduces
    on the critical path, faster than one GPU, and the all-reduce's bus bandwidth is below the link. Without:
    the page quotes no tp_mlp number and says there is no record."""
    recs = _measured_or_said_missing("tp_mlp", "no two-GPU record of `tp_mlp` yet")
    if recs is None:
        never_states("B07", "came out above that copy", files="*.md")
        return
    tp = _key(recs, "B07/tp_mlp/tp_fwd_bwd/python")["value"]
    one = _key(recs, "B07/tp_mlp/single_fwd_bwd/python")["value"]
    assert one / 2 < tp < one
    b, h = _tp_mlp_bench()
    assert tp - one / 2 >= 2 * b * h * BF16 / H200_LINK * 1e3  # ms of two 1x-buffer ring all-reduces on T = 2
    bus = _key(recs, "B07/tp_mlp/allreduce_bh/python")["value"]
    assert bus < H200_LINK / 1e9


def test_measured_two_stage_overlaps_and_peer_copy_is_below_the_link():
    recs = _measured_or_said_missing("two_stage", "not measured")
    if recs is None:
        return
    M = _two_stage_micro_batches()
    piped = _key(recs, "B07/two_stage/pipelined/cuda")
    share = piped["value"] / piped["ceiling"]["value"]
    bound = (M + 2) / (3 * M)  # three engines, M micro-batches: (M+2) t against 3 M t
    assert bound < share < 1.0
    states("B07", f"{bound:.0%}", near="three-engine bound", files="5-performance.md")
    copy = _key(recs, "B07/two_stage/peer_copy/cuda")["value"]
    assert 0.5 * H200_LINK / 1e9 < copy < H200_LINK / 1e9  # most of one NVLink direction, never above it
