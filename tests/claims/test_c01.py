"""Claims of module C01 (transformer FLOPs and memory accounting), derived here and read back from the page.

Each number is derived from GPT-2's published shapes (written out below), the one hardware table
(`tutor_build.models.hardware`) and the lab's measurement records, with the closed forms of section 2
written out in this file (not imported from the lab), then found in the module's own text exactly as the
page prints it (tests/claims/prose.py). The records of both labs exist, so nothing here skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claims.prose import states
from tutor_build.measurements import records
from tutor_build.models import hardware as hw

ROOT = Path(__file__).parents[2]
ID = "C01"
RECS = records(ROOT)

# GPT-2 XL and medium (Radford et al. 2019), the lab's batches (labs/C01/python/train_mfu.py CONFIGS).
L, D, A, V, S, B = 48, 1600, 25, 50257, 1024, 6
V_PAD = 50304
T = B * S
L_M, D_M, B_M = 24, 1024, 8
GiB = 2.0**30

PEAK = hw.peak("h200", "bf16")
BW = hw.value("h200", "hbm_bw")
HBM = hw.value("h200", "hbm_bytes")
PEAK_AMD = hw.peak("mi300x", "bf16")
BW_AMD = hw.value("mi300x", "hbm_bw")
HBM_AMD = hw.value("mi300x", "hbm_bytes")

N_BLOCKS = 12 * L * D * D
N_HEAD = V * D
N_MM = N_BLOCKS + N_HEAD
N_ALL = L * (12 * D * D + 13 * D) + 2 * D + V * D + S * D
F_MM = 6 * N_MM * T
F_ATT = 12 * L * S * D * T
F_STEP = F_MM + F_ATT
F_RECOMPUTE = L * (24 * D * D + 4 * S * D) * T
F_CAUSAL = F_MM + F_ATT / 2  # Megatron-LM's current count: only the unmasked causal half of attention
F_ATT_RUN = 7 * L * S * D * T  # what the causal kernel runs: half of 2 + 4 products, plus the recomputed scores
OPT_BYTES_PER_PARAM = 16 + 12 + 4  # AdamW reads w, g, m, v; writes w, m, v; the step zeroes g
OPT_BYTES_NONE = 16 + 12  # gradients set to None: nothing zeroed
N_PAD = N_ALL + (V_PAD - V) * D
VARIANTS = ("medium_eager", "xl_eager", "xl_recompute", "xl_compiled", "xl_padded", "xl_padded_none")


def rec(variant: str, lab: str = "train_mfu", module: str = ID) -> dict:
    return RECS[f"{module}/{lab}/{variant}/python"]


def val(variant: str, lab: str = "train_mfu") -> float:
    return rec(variant, lab)["value"]


COPY_BW = RECS["C07/calibration/copy_bandwidth/python"]["value"] * 1e9  # bytes/s


def c(x: float) -> str:
    return f"{x:,.0f}"


def f1(x: float) -> str:
    return f"{x:.1f}"


def f2(x: float) -> str:
    return f"{x:.2f}"


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


def intensity(M: float, K: int, N: int) -> float:
    return 2 * M * K * N / (2 * (M * K + K * N + M * N))


def rest_budget() -> list[tuple[str, float, float]]:
    """Section 5's estimate of the bytes of "the rest" (GB, ms at the measured copy bandwidth)."""
    parts = [("weight casts", 6 * N_MM), ("gradient casts", 6 * N_MM), ("element-wise", 180 * D * T * L),
             ("logits", 8 * 4 * T * V)]
    rows = [(name, b / 1e9, b / COPY_BW * 1e3) for name, b in parts]
    rows.append(("total", sum(r[1] for r in rows), sum(r[2] for r in rows)))
    return rows


# ---------------------------------------------------------------- the headline


def test_headline_best_variant_reaches_40_percent_mfu_under_both_counts_and_the_module_says_so():
    best = "xl_padded_none"
    mfu = val("mfu_" + best)
    # the best variant is the fastest step of all
    assert val("step_" + best) == min(val("step_" + v) for v in VARIANTS if v.startswith("xl"))
    # the record is what the count of section 2 gives for the measured step
    assert F_STEP / (val("step_" + best) * 1e-3) / PEAK * 100 == pytest.approx(mfu, rel=1e-9)
    causal = F_CAUSAL / (val("step_" + best) * 1e-3) / PEAK * 100
    assert causal > 40.0 and mfu > 40.0
    near = "the gradients set to None after each step"
    head = states(ID, f1(mfu) + "%", near=near, files="module.yml")
    step, mm, att, opt = val("step_" + best), val("matmuls_gpt2_xl_padded"), val("attention_gpt2_xl_padded"), val(
        "optimizer_" + best)
    for number in (f1(F_STEP / 1e12), f1(F_STEP / PEAK * 1e3), f1(val("step_xl_eager")), f1(val("mfu_xl_eager")) + "%",
                   f1(step), f1(causal) + "%", f1(F_CAUSAL / 1e12), f1(val("mfu_mm_" + best)) + "%", f1(mm),
                   f1(F_MM / PEAK * 1e3), f1(att), f1(F_ATT / PEAK * 1e3), f1(opt), f1(step - mm - att - opt),
                   f1(rest_budget()[-1][2]), f1(val("step_xl_compiled") - val("step_xl_padded")),
                   c(val("lm_head_T6144", "flop_count")), f1(val("step_xl_padded") - step)):
        states(ID, number, near=near, files="module.yml")
    assert "1.56 billion" in head and "50,304" in head and "PaLM's count" in head and "causal half" in head


# ---------------------------------------------------------------- section 2: the count


def test_parameter_counts():
    states(ID, c(N_BLOCKS), near="in the blocks and")
    for n in (c(N_HEAD), c(N_MM), c(N_ALL - N_MM), c(N_ALL)):
        states(ID, n, near="in the blocks and")
    states(ID, c(N_ALL), near="GPT-2 XL's 1,557,611,200", files="cards")


def test_flops_per_token_and_the_step():
    near = "GPT-2 XL's step.**"
    states(ID, f2(6 * N_MM / 1e9) + " GFLOP", near=near)
    states(ID, f2(12 * L * S * D / 1e9) + " GFLOP", near=near)
    states(ID, f2((6 * N_MM + 12 * L * S * D) / 1e9) + " GFLOP", near=near)
    states(ID, pct(F_ATT / F_STEP, 1), near=near)
    states(ID, f1(F_STEP / 1e12) + " TFLOP", near=near)
    states(ID, f1(PEAK / 1e12), near=near)
    states(ID, f1(F_STEP / PEAK * 1e3) + " ms", near=near)
    states(ID, f1(F_MM / PEAK * 1e3) + " ms", near=near)
    states(ID, f1(F_ATT / PEAK * 1e3) + " ms", near=near)
    states(ID, f2(2 * N_MM / 1e9) + " GFLOP", near=near)
    # the lab's own ceiling of the step record is this ideal time
    assert rec("step_xl_padded")["ceiling"]["value"] == pytest.approx(F_STEP / PEAK * 1e3, rel=1e-9)


def test_recomputed_flops():
    near = "recomputing GPT-2 XL's 48 blocks"
    states(ID, f1(F_RECOMPUTE / 1e12) + " TFLOP", near=near)
    states(ID, pct(F_RECOMPUTE / F_STEP), near=near)
    hfu = (F_STEP + F_RECOMPUTE) / (val("step_xl_recompute") * 1e-3) / PEAK * 100
    assert hfu == pytest.approx(val("hfu_xl_recompute"), rel=1e-9)


def test_state_bytes():
    near = "Mixed-precision AdamW keeps"
    states(ID, c(16 * N_ALL) + " bytes", near=near)
    states(ID, f2(16 * N_ALL / GiB) + " GiB", near=near)
    assert val("state_xl_eager") == pytest.approx(16 * N_ALL / GiB, rel=1e-12)


def test_activation_counts():
    near = "count $s b h (34 + 5 a s / h)$ bytes a layer for a block"
    scores = 5 * A * S * S * B * L
    blocks = 34 * S * B * D * L
    copies, logits = 2 * N_MM, 4 * T * V
    states(ID, f1(scores / GiB) + " GiB", near=near)
    states(ID, f1(blocks / GiB) + " GiB", near=near)
    states(ID, f2(copies / GiB) + " GiB", near=near)
    states(ID, f2(logits / GiB) + " GiB", near=near)
    states(ID, f1((blocks + copies + logits) / GiB) + " GiB", near=near)
    inputs = 4 * S * B * D * L
    states(ID, f2(inputs / GiB) + " GiB", near="Keeping only each block's input")
    states(ID, f2((inputs + logits) / GiB) + " GiB", near="Keeping only each block's input")
    # section 5 compares them with the records
    near5 = "for its backward,"
    states(ID, f2(val("saved_xl_eager") - (blocks + copies + logits) / GiB) + " GiB", near=near5)
    # no dropout masks (2 bytes a token and hidden unit) but fp32 LayerNorm inputs (4 bytes more): net 2
    states(ID, f2((4 - 2) * S * B * D * L / GiB) + " GiB", near=near5)
    states(ID, f1((blocks + copies + logits) / GiB) + " GiB", near=near5)
    states(ID, f2(val("saved_xl_recompute") - (inputs + logits) / GiB) + " GiB", near=near5)
    states(ID, f2((inputs + logits) / GiB) + " GiB", near=near5)
    work = val("peak_xl_eager") - val("state_xl_eager") - val("saved_xl_eager")
    states(ID, f2(work) + " GiB", near=near5)
    states(ID, f2(work - val("resident_xl_eager")) + " GiB", near=near5)


def test_memory_between_variants():
    near = "The lab resets the compiled code"
    resident = [val("resident_" + v) for v in VARIANTS]
    assert max(resident) == min(resident)  # the same before every variant: nothing inherited
    assert abs(val("peak_xl_padded") - val("peak_xl_compiled")) < 0.02
    states(ID, f"{0.02:.2f} GiB", near=near)
    drop = val("peak_xl_padded") - val("peak_xl_padded_none")
    states(ID, f2(drop) + " GiB", near=near)
    states(ID, f2(4 * N_PAD / GiB) + " GiB", near=near)
    assert drop == pytest.approx(4 * N_PAD / GiB, rel=0.01)
    # the compiled variants after the first warm up in under a second: code cached, not compiled
    assert val("warmup_xl_compiled") > 5 and max(val("warmup_xl_padded"), val("warmup_xl_padded_none")) < 1.0
    states(ID, "not compile times", near="The warm-ups: the first compiled variant")


def test_intensity_of_the_mlp_and_the_crossover():
    K, N = D, 4 * D
    near = "rises towards"
    states(ID, c(K * N / (K + N)), near=near)
    for M in (128, 1024, 6144):
        states(ID, f"{intensity(M, K, N):,.1f}", near=near)
    ridge = PEAK / BW
    states(ID, c(ridge), near="The ridge point.**")
    states(ID, c(PEAK_AMD / BW_AMD), near="The ridge point.**")
    cross = ridge * K * N / (K * N - ridge * (K + N))  # solve intensity(M) = ridge for M
    assert intensity(cross, K, N) == pytest.approx(ridge)
    states(ID, f"{cross:.0f} tokens", near="The ridge point.**")


# ---------------------------------------------------------------- section 3


def test_silicon_table():
    states(ID, f"{PEAK / BW:.0f} FLOP/byte", near="bf16 ridge point |", files="3-silicon.md")
    states(ID, f"{PEAK_AMD / BW_AMD:.0f} FLOP/byte", near="bf16 ridge point |", files="3-silicon.md")
    near = "GPT-2 XL step at peak"
    states(ID, f1(F_STEP / PEAK * 1e3) + " ms", near=near, files="3-silicon.md")
    states(ID, f1(F_STEP / PEAK_AMD * 1e3) + " ms", near=near, files="3-silicon.md")
    near = "state of GPT-2 XL"
    states(ID, pct(16 * N_ALL / HBM), near=near, files="3-silicon.md")
    states(ID, pct(16 * N_ALL / HBM_AMD), near=near, files="3-silicon.md")


def test_odd_vocabulary_and_padding():
    near = "GPT-2's vocabulary breaks that rule"
    states(ID, c(2 * V) + " bytes", near=near)
    assert (2 * V) % 16 != 0 and V_PAD % 64 == 0 and D % 64 == 0
    states(ID, f"{100 * (V_PAD - V) / V:.2f}%", near=near)
    states(ID, str(V_PAD - V), near="Adding 47 blank rows")  # section 1
    states(ID, c((V_PAD - V) * D) + " parameters", near="Padding the vocabulary")


def test_copy_bandwidth_share():
    states(ID, pct(COPY_BW / BW), near="The course measures the H200's achievable copy bandwidth")


# ---------------------------------------------------------------- section 5


def test_step_terms_table():
    near = "products with weights, $6 N_{\\text{mm}} T$"
    states(ID, f1(F_MM / 1e12) + " TFLOP", near=near)
    states(ID, f1(F_ATT / 1e12) + " TFLOP", near="attention, $12 L s d T$")
    n_pad = N_ALL + (V_PAD - V) * D
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / 1e9) + " GB", near="optimizer, 32 bytes a parameter")
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / BW * 1e3) + " ms", near="optimizer, 32 bytes a parameter")
    lo, hi = intensity(T, D, D), intensity(T, D, V)
    states(ID, c(lo), near="ranges from")
    states(ID, c(hi), near="ranges from")
    states(ID, f1(F_STEP / PEAK_AMD * 1e3) + " ms", near="ranges from")


def test_output_layer_product():
    r = rec("lm_head_T6144", "flop_count")
    assert r["flops"] == 2 * T * D * V
    near = "That one\nproduct".replace("\n", " ")
    states(ID, f2(r["flops"] / 1e12) + " TFLOP", near="That one product")
    states(ID, f2(r["ms"]) + " ms", near="That one product")
    states(ID, f2(r["flops"] / (val("mm_8192", "flop_count") * 1e12) * 1e3) + " ms", near="That one product")
    del near
    # the output layer is the slowest product at the training size, the block products all beat it 6-fold
    block = [val(f"{n}_T6144", "flop_count") for n in ("qkv", "proj", "fc1", "fc2")]
    assert min(block) > 6 * r["value"]


def test_medium_vs_xl_output_layer_share():
    n_mm_m = 12 * L_M * D_M * D_M + V * D_M
    near = "Medium to XL.**"
    states(ID, pct(V * D_M / n_mm_m, 1), near=near)
    states(ID, pct(N_HEAD / N_MM, 1), near=near)


def test_variant_deltas():
    states(ID, f1(val("step_xl_recompute") - val("step_xl_eager")) + " ms", near="Recomputation.**")
    states(ID, f1(F_RECOMPUTE / 1e12) + " TFLOP", near="Recomputation.**")
    assert val("hfu_xl_recompute") > val("hfu_xl_eager") > val("mfu_xl_recompute")
    grew = val("backward_xl_recompute") - val("backward_xl_eager")
    states(ID, f1(grew) + " ms", near="Recomputation.**")
    states(ID, c(F_RECOMPUTE / (grew * 1e-3) / 1e12) + " TFLOP/s", near="Recomputation.**")
    states(ID, c(F_STEP / (val("step_xl_eager") * 1e-3) / 1e12) + " TFLOP/s", near="Recomputation.**")
    states(ID, c(F_STEP / ((val("step_xl_eager") - val("optimizer_xl_eager")) * 1e-3) / 1e12), near="Recomputation.**")
    states(ID, f1(val("step_xl_eager") - val("step_xl_compiled")) + " ms", near="Compiling each block.**")
    states(ID, f1(val("step_xl_compiled") - val("step_xl_padded")) + " ms", near="Padding the table.**")
    saved = val("matmuls_gpt2_xl") - val("matmuls_gpt2_xl_padded")
    states(ID, f1(saved) + " ms", near="Padding the table.**")
    # "a little more than the step's saving"
    assert 0 < saved - (val("step_xl_compiled") - val("step_xl_padded")) < 0.1 * saved
    assert val("mfu_xl_padded") < val("hfu_xl_padded") < val("mfu_xl_padded") + 0.01
    states(ID, f"{val('hfu_xl_padded') - val('mfu_xl_padded'):.3f} points", near="Padding the table.**")
    pad = 6 * (V_PAD - V) * D * T
    assert val("hfu_xl_padded") - val("mfu_xl_padded") == pytest.approx(
        pad / (val("step_xl_padded") * 1e-3) / PEAK * 100, rel=1e-6)
    # gradients set to None: 4 bytes a parameter of zeroing and 12 of accumulation gone
    near = "Gradients set to None.**"
    states(ID, f1(16 * N_PAD / 1e9) + " GB", near=near)
    predicted = 16 * N_PAD / COPY_BW * 1e3
    states(ID, f1(predicted) + " ms", near=near)
    measured = val("step_xl_padded") - val("step_xl_padded_none")
    states(ID, f1(measured) + " ms", near=near)
    assert measured == pytest.approx(predicted, rel=0.15)
    states(ID, f1(val("backward_xl_padded") - val("backward_xl_padded_none")) + " ms", near=near)
    assert val("optimizer_xl_padded_none") < val("optimizer_xl_padded")


def test_causal_half_mfu():
    near = "counting only the causal half"
    states(ID, f1(F_CAUSAL / 1e12) + " TFLOP", near=near)
    for v in ("xl_padded_none", "xl_padded"):
        states(ID, f1(F_CAUSAL / (val("step_" + v) * 1e-3) / PEAK * 100) + "%", near=near)
    assert F_CAUSAL / (val("step_xl_padded") * 1e-3) / PEAK < 0.40 < val("mfu_xl_padded") / 100
    states(ID, f1(F_CAUSAL / (val("step_xl_padded_none") * 1e-3) / PEAK * 100) + "%",
           near="Against the datasheet the step reaches")


def test_two_copy_bandwidths_named():
    copies = sorted(r["ceiling"]["value"] for r in RECS.values() if r.get("gpu") == "NVIDIA H200"
                    and (r.get("ceiling") or {}).get("name") == "device-to-device copy"
                    and r["ceiling"].get("unit") == "GB/s")
    near = "The chart's measured roof"
    states(ID, f2(copies[len(copies) // 2] / 1e3) + " TB/s", near=near)
    assert copies[0] < COPY_BW / 1e9 < copies[-1]  # C07's record is one of the spread
    states(ID, "C07's calibration record", near=near)


def test_small_products_sit_on_a_latency_floor():
    near = "The small products do not sit on the bandwidth roof"
    small = [rec(f"{n}_T{t}", "flop_count") for n in ("qkv", "proj", "fc1", "fc2") for t in (1, 16, 128)]
    bw = [r["bytes"] / (r["ms"] * 1e-3) for r in small]
    us = [r["ms"] * 1e3 for r in small]
    states(ID, f2(min(bw) / 1e12), near=near)
    states(ID, f2(max(bw) / 1e12) + " TB/s", near=near)
    states(ID, pct(min(bw) / BW), near=near)
    states(ID, pct(max(bw) / BW), near=near)
    states(ID, f1(min(us)), near=near)
    states(ID, f1(max(us)) + " µs", near=near)
    for t in (1, 16):
        states(ID, f1(rec(f"proj_T{t}", "flop_count")["ms"] * 1e3), near=near)
    states(ID, f1(rec("proj_T128", "flop_count")["ms"] * 1e3) + " µs", near=near)
    assert max(bw) < 0.4 * BW
    # right of the ridge by T = 1,024
    ints = [intensity(1024, D, n) for n in (D, 3 * D, 4 * D)] + [intensity(1024, 4 * D, D)]
    assert min(ints) > PEAK / BW
    states(ID, c(min(ints)), near=near)
    states(ID, c(max(ints)), near=near)


def test_output_layer_rate_stays_flat():
    rates = [val(f"lm_head_T{t}", "flop_count") for t in (128, 1024, 6144)]
    assert max(rates) < 1.3 * min(rates)
    states(ID, "about " + c(rates[-1]) + " TFLOP/s", near="the odd-sized output-layer product ran at", files="module.yml")


def test_lab_question_at_1024_tokens():
    fast = [n for n in ("qkv", "proj", "fc1", "fc2", "lm_head") if val(f"{n}_T1024", "flop_count") >= 500]
    assert sorted(fast) == ["fc1", "fc2", "qkv"]
    states(ID, "which two do not", near="predict which products reach 500 TFLOP/s", files="4-labs.md")


def test_gap_term_by_term():
    step, mm, att, opt = (val("step_xl_padded_none"), val("matmuls_gpt2_xl_padded"), val("attention_gpt2_xl_padded"),
                          val("optimizer_xl_padded_none"))
    rest = step - mm - att - opt
    ideal_mm, ideal_att, ideal = F_MM / PEAK * 1e3, F_ATT / PEAK * 1e3, F_STEP / PEAK * 1e3
    rate_mm = F_MM / (mm * 1e-3)
    rate_att = F_ATT / (att * 1e-3)
    mm_rate = val("mm_8192") * 1e12
    table = "products with weights (forward, input and weight gradients"
    states(ID, f1(ideal_mm) + " ms", near=table)
    states(ID, c(rate_mm / 1e12) + " TFLOP/s", near=table)
    states(ID, pct(rate_mm / PEAK), near=table)
    states(ID, pct(rate_mm / mm_rate), near=table)
    states(ID, c(rate_att / 1e12) + " TFLOP/s", near="attention (fused SDPA")
    states(ID, c(rate_att / 2e12), near="attention (fused SDPA")
    states(ID, c(F_ATT_RUN / (att * 1e-3) / 1e12), near="attention (fused SDPA")
    states(ID, f1(ideal_att) + " ms", near="attention (fused SDPA")
    opt_bytes = OPT_BYTES_NONE * N_PAD
    states(ID, f1(opt_bytes / COPY_BW * 1e3) + " ms", near="optimizer (fused AdamW")
    states(ID, f1(opt_bytes / 1e9) + " GB", near="optimizer (fused AdamW")
    states(ID, f1(rest) + " ms", near="the rest: step minus the three")
    states(ID, f1(ideal) + " ms", near="The ideal of the whole step is")
    states(ID, f1(step) + " ms", near="The best step takes")
    states(ID, f1(ideal) + " ms", near="The best step takes")
    states(ID, f1(step - ideal) + " ms", near="The ideal of the whole step is")
    states(ID, f1(mm - ideal_mm) + " ms", near="Products, ")
    states(ID, pct(mm_rate / PEAK), near="Products, ")
    states(ID, f1(att - ideal_att) + " ms", near="Attention, ")
    states(ID, f2(F_ATT_RUN / 1e12) + " TFLOP", near="Attention, ")
    states(ID, c(F_ATT_RUN / (att * 1e-3) / 1e12), near="Attention, ")
    states(ID, pct(F_ATT_RUN / (att * 1e-3) / PEAK), near="Attention, ")
    states(ID, c(N_PAD), near="Optimizer, ")
    states(ID, f1(opt) + " ms lost", near="Optimizer, ")
    states(ID, f1(opt_bytes / 1e9) + " GB", near="Optimizer, ")
    states(ID, f1(opt_bytes / COPY_BW * 1e3) + " ms", near="Optimizer, ")
    states(ID, f1(opt_bytes / BW * 1e3) + " ms", near="Optimizer, ")
    states(ID, pct(opt_bytes / COPY_BW * 1e3 / opt), near="Optimizer, ")
    states(ID, f1(rest) + " ms", near="The rest, ")
    # the byte budget of the rest, an estimate
    budget = rest_budget()
    for _, gb, ms in budget:
        states(ID, f1(gb) + " GB", near="part of the rest (estimate)")
        states(ID, f1(ms) + " ms", near="part of the rest (estimate)")
    states(ID, f2(4 * T * V / 1e9) + " GB", near="part of the rest (estimate)")
    states(ID, f1(rest - budget[-1][2]) + " ms", near="That leaves about")
    assert 0 < budget[-1][2] < rest
    # "the largest single loss is the rest, then the products, the optimizer and attention"
    assert rest > mm - ideal_mm > opt > att - ideal_att
    # the optimizer record is the same in every XL variant that zeroes its gradients
    zeroing = [val(f"optimizer_xl_{v}") for v in ("eager", "recompute", "compiled", "padded")]
    assert max(zeroing) < 1.05 * min(zeroing)
    # the lab's ceilings of the term records are the ideals derived here
    assert rec("matmuls_gpt2_xl_padded")["ceiling"]["value"] == pytest.approx(ideal_mm, rel=1e-9)
    assert rec("attention_gpt2_xl_padded")["ceiling"]["value"] == pytest.approx(ideal_att, rel=1e-9)


# ---------------------------------------------------------------- sections 6 and 9, and the cards


def test_tradeoffs_numbers():
    states(ID, pct(F_ATT / F_STEP / 2, 1), near="It depends on the count.**")
    states(ID, pct(F_ATT / F_STEP, 1), near="It depends on the count.**")
    states(ID, pct(val("optimizer_xl_padded_none") / val("step_xl_padded_none")), near="A fused optimizer")
    states(ID, f1(val("step_xl_padded") - val("step_xl_padded_none")) + " ms", near="A fused optimizer")
    near = "It depends on the count.**"
    for v in ("xl_padded_none", "xl_padded"):
        states(ID, f1(F_CAUSAL / (val("step_" + v) * 1e-3) / PEAK * 100) + "%", near=near)
        states(ID, f1(val("mfu_" + v)) + "%", near=near)
    states(ID, f1(val("step_xl_recompute") - val("step_xl_eager")) + " ms", near="Recomputation** trades")
    assert 0.22 < (val("step_xl_recompute") - val("step_xl_eager")) / val("step_xl_eager") < 0.28  # "a quarter"


def test_self_assessment_numbers():
    states(ID, f2(12 * L * S * D / 1e9) + " GFLOP", near="$12 L s d$ =", files="9-self-assessment.md")
    states(ID, pct(F_ATT / F_STEP, 1), near="$12 L s d$ =", files="9-self-assessment.md")
    states(ID, f1(F_STEP / 1e12) + " TFLOP", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    states(ID, f1(F_STEP / PEAK * 1e3) + " ms", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    best = val("step_xl_padded_none")
    states(ID, f1(best) + " ms", near="what MFU does the lab's best step", files="9-self-assessment.md")
    states(ID, f1(best) + " ms", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    states(ID, f1(F_STEP / PEAK * 1e3 / best * 100) + "%", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    assert f1(F_STEP / PEAK * 1e3 / best * 100) == f1(val("mfu_xl_padded_none"))
    states(ID, f1(F_CAUSAL / 1e12) + " TFLOP", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    states(ID, f1(F_CAUSAL / PEAK / (best * 1e-3) * 100) + "%", near="over 989.5 TFLOP/s", files="9-self-assessment.md")
    # the extra FLOPs of the padded table, of the output layer's and of the step's
    states(ID, pct((V_PAD - V) / V, 2), near="the products alone fall by", files="9-self-assessment.md")
    states(ID, pct(6 * (V_PAD - V) * D * T / F_STEP, 4), near="the products alone fall by", files="9-self-assessment.md")
    n_pad = N_ALL + (V_PAD - V) * D
    near = "Read weight, gradient and two moments"
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / 1e9) + " GB", near=near, files="9-self-assessment.md")
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / COPY_BW * 1e3) + " ms", near=near, files="9-self-assessment.md")
    states(ID, pct(OPT_BYTES_PER_PARAM * n_pad / COPY_BW * 1e3 / val("optimizer_xl_padded")), near=near,
           files="9-self-assessment.md")
    states(ID, f"{COPY_BW / 1e12:.2f} TB/s", near="Predict its time at", files="9-self-assessment.md")
    states(ID, f1(val("matmuls_gpt2_xl") - val("matmuls_gpt2_xl_padded")) + " ms", near="the products alone fall by",
           files="9-self-assessment.md")
    rest = (val("step_xl_padded_none") - val("matmuls_gpt2_xl_padded") - val("attention_gpt2_xl_padded")
            - val("optimizer_xl_padded_none"))
    states(ID, f1(rest) + " ms", near="of LayerNorms, GELU", files="9-self-assessment.md")
    states(ID, pct(F_MM / (val("matmuls_gpt2_xl_padded") * 1e-3) / (val("mm_8192") * 1e12)),
           near="of LayerNorms, GELU", files="9-self-assessment.md")
    states(ID, f1(val("mfu_xl_padded_none")) + "%", near="of LayerNorms, GELU", files="9-self-assessment.md")
    states(ID, f1(F_CAUSAL / PEAK / (val("step_xl_padded_none") * 1e-3) * 100) + "%", near="of LayerNorms, GELU",
           files="9-self-assessment.md")
    states(ID, pct(val("mm_8192") * 1e12 / PEAK), near="of LayerNorms, GELU", files="9-self-assessment.md")
    states(ID, f1(F_RECOMPUTE / 1e12) + " TFLOP", near="Full recomputation cuts", files="9-self-assessment.md")
    states(ID, pct(val("step_xl_recompute") / val("step_xl_eager") - 1), near="Full recomputation cuts",
           files="9-self-assessment.md")
    states(ID, f"{16 * 7e9 / 1e9:.0f} GB", near="16 bytes a parameter for the state", files="9-self-assessment.md")
    states(ID, pct(16 * 7e9 / HBM), near="16 bytes a parameter for the state", files="9-self-assessment.md")
    states(ID, f"{HBM / 1e9:.0f} GB", near="16 bytes a parameter for the state", files="9-self-assessment.md")


def test_cards():
    states(ID, f2(16 * N_ALL / GiB) + " GiB", near="fp32 weight, fp32 gradient", files="cards")
    states(ID, f2((6 * N_MM + 12 * L * S * D) / 1e9) + " GFLOP", near="GFLOP a token", files="cards")
    states(ID, f1(F_STEP / 1e12) + " TFLOP", near="GFLOP a token", files="cards")
    states(ID, f1(F_STEP / PEAK * 1e3) + " ms", near="GFLOP a token", files="cards")
    states(ID, f1(val("matmuls_gpt2_xl") - val("matmuls_gpt2_xl_padded")) + " ms", near="50,257 is odd", files="cards")
    near = "set the gradients to None"
    states(ID, f1(16 * N_PAD / 1e9) + " GB", near="Zeroing writes 4 bytes", files="cards")
    states(ID, f1(16 * N_PAD / COPY_BW * 1e3) + " ms", near="Zeroing writes 4 bytes", files="cards")
    states(ID, f1(val("step_xl_padded") - val("step_xl_padded_none")) + " ms", near="Zeroing writes 4 bytes", files="cards")
    del near
    for number in (f1(F_STEP / 1e12) + " TFLOP", f1(val("mfu_xl_padded_none")) + "%", f1(F_CAUSAL / 1e12) + " TFLOP",
                   f1(F_CAUSAL / PEAK / (val("step_xl_padded_none") * 1e-3) * 100) + "%"):
        states(ID, number, near="PaLM's count (the whole s x s square", files="cards")
    n_pad = N_ALL + (V_PAD - V) * D
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / 1e9) + " GB", near="Fused AdamW reads 16", files="cards")
    states(ID, f1(OPT_BYTES_PER_PARAM * n_pad / COPY_BW * 1e3) + " ms", near="Fused AdamW reads 16", files="cards")
    states(ID, f"{PEAK / BW:.0f}", near="206 on the H200", files="cards")
    states(ID, f"{PEAK_AMD / BW_AMD:.0f}", near="206 on the H200", files="cards")


def test_silicon_table_quotes_the_hardware_table():
    rows = {
        "dense bf16 matrix peak": (f"{PEAK / 1e12:,.1f} TFLOP/s", f"{PEAK_AMD / 1e12:,.1f} TFLOP/s"),
        "HBM bandwidth": (f"{BW / 1e12:.1f} TB/s", f"{BW_AMD / 1e12:.1f} TB/s"),
        "HBM capacity": (f"{HBM / 1e9:.0f} GB", f"{HBM_AMD / 1e9:.0f} GB"),
        "compute units": (f"{hw.value('h200', 'units'):.0f} SMs", f"{hw.value('mi300x', 'units'):.0f} CUs"),
    }
    for row, (nv, amd) in rows.items():
        states(ID, nv, near=f"| {row} |", files="3-silicon.md")
        states(ID, amd, near=f"| {row} |", files="3-silicon.md")
    assert hw.value("h200", "lanes") == 32 and hw.value("mi300x", "lanes") == 64
    states(ID, f"{hw.value('mi300x', 'shared_per_unit') / 1024:.0f} KiB LDS", near="MFMA instructions work",
           files="3-silicon.md")


def test_card_split_of_the_flops():
    states(ID, f2(6 * N_MM / 1e9), near="GFLOP a token", files="cards")
    states(ID, f2(12 * L * S * D / 1e9), near="GFLOP a token", files="cards")


def test_quoted_production_numbers_carry_their_source():
    # quoted, not derived: each stands in the paragraph that cites the paper it comes from
    para = states(ID, "46.2%", near="**PaLM** introduced MFU", files="7-production.md")
    assert "57.8% HFU" in para and "@chowdhery-palm-2022" in para
    para = states(ID, f1(F_CAUSAL / 1e12) + " TFLOP", near="**Megatron-LM** reports", files="7-production.md")
    assert "@narayanan2021-megatron" in para and "@megatron-core-repo" in para
    states(ID, f1(F_CAUSAL / (val("step_xl_padded_none") * 1e-3) / PEAK * 100) + "%", near="**Megatron-LM** reports",
           files="7-production.md")
