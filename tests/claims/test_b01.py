"""Claims of module B01 (fusion and memory-bound operators): derived here, then read from the module's own text.

Every number the prose derives (bytes of a chain, its time bounds, intensities and ridge points, the bytes and
best shares of the softmax forms, the bytes of an eager layernorm, the values a row holds per thread, the
self-assessment's arithmetic) is recomputed from the fusion model, the one hardware table or the lab sources,
formatted as the page prints it, and looked up in the paragraph that states it (tests/claims/prose.py).

The second half reads the H200 records and checks the relations the headline and section 5 draw from them.
The labs run on one GPU, so a missing record is a failure, not a skip.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from prose import never_states, states
from tutor_build.measurements import records
from tutor_build.models import fusion, hardware, hierarchy

ROOT = Path(__file__).parents[2]
CHAIN_CU = (ROOT / "labs/B01/cuda/chain.cu").read_text(encoding="utf-8")
ROWS_CU = (ROOT / "labs/B01/cuda/rows.cu").read_text(encoding="utf-8")
CHAIN_PY = (ROOT / "labs/B01/triton/chain.py").read_text(encoding="utf-8")
ROWS_PY = (ROOT / "labs/B01/triton/rows.py").read_text(encoding="utf-8")


def lab_int(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"the lab source no longer matches {pattern!r}"
    return int(found.group(1))


N = 1 << lab_int(r'arg_int\(args, "--n", 1ll << (\d+)\)', CHAIN_CU)
ROWS = lab_int(r'arg_int\(args, "--rows", (\d+)\)', ROWS_CU)
COLS = lab_int(r'arg_int\(args, "--cols", (\d+)\)', ROWS_CU)
LONG_ROWS = lab_int(r'arg_int\(args, "--long-rows", (\d+)\)', ROWS_CU)
LONG_COLS = lab_int(r'arg_int\(args, "--long-cols", (\d+)\)', ROWS_CU)
THREADS = lab_int(r"constexpr int kThreads = (\d+);", ROWS_CU)
MAX_PER = lab_int(r"constexpr int kMaxPer = (\d+);", ROWS_CU)
H200_BW = hardware.value("h200", "hbm_bw")
MI300X_BW = hardware.value("mi300x", "hbm_bw")
H200_RIDGE = hardware.peak("h200", "fp32") / H200_BW
MI300X_RIDGE = hardware.peak("mi300x", "fp32") / MI300X_BW
OP_FLOP = 3  # a fused multiply-add (2) and a maximum (1), the chain's operation in both labs
WARP_BYTES = 32 * 2 * 16  # a warp of the chain lab: 32 threads, one float4 in and one out


def issue_budget_per_warp() -> float:
    """Warp instructions the H200 can issue while one warp's bytes move at the datasheet bandwidth."""
    return fusion.issue_budget_per_warp(WARP_BYTES, H200_BW, hardware.value("h200", "units"),
                                        hierarchy.hopper_fp32_clock("h200"))


def test_the_labs_use_the_sizes_the_page_derives_with():
    assert N == 2**28 and re.search(r'add_argument\("--n", type=int, default=2\*\*28\)', CHAIN_PY)
    assert (ROWS, COLS, LONG_ROWS, LONG_COLS) == (16384, 8192, 512, 262144)
    for name, v in (("rows", ROWS), ("cols", COLS), ("long-rows", LONG_ROWS), ("long-cols", LONG_COLS)):
        assert re.search(rf'add_argument\("--{name}", type=int, default={v}\)', ROWS_PY)
    assert "fmaxf(fmaf(x, s, t), -1.0f)" in CHAIN_CU


# ---------------------------------------------------------------- the chain
def test_chain_bytes_divide_by_k():
    for k in (1, 2, 4, 8):
        assert fusion.chain_saving(k) == k
    unfused, fused = N * fusion.chain_bytes(8, False), N * fusion.chain_bytes(8, True)
    states("B01", f"{unfused:,}", near="an unfused chain of 8 moves", files="2-first-principles.md")
    states("B01", f"{fused:,}", near="an unfused chain of 8 moves", files="2-first-principles.md")
    states("B01", f"{unfused / H200_BW * 1e3:.2f} ms", near="an unfused chain of 8 moves", files="2-first-principles.md")
    states("B01", f"{fused / H200_BW * 1e6:.0f} µs", near="an unfused chain of 8 moves", files="2-first-principles.md")
    states("B01", "8k", near="unfused and fused", files="cards")


def test_intensity_and_ridge_points():
    op = fusion.intensity(OP_FLOP, fusion.chain_bytes(1, True))
    chain8 = fusion.intensity(8 * OP_FLOP, fusion.chain_bytes(8, True))
    states("B01", f"{op:.3f} FLOP/byte", near="The lab's operation", files="2-first-principles.md")
    states("B01", f"{H200_RIDGE / op:.0f} times below", near="The lab's operation", files="2-first-principles.md")
    states("B01", f"{chain8:.1f} FLOP/byte", near="The lab's operation", files="2-first-principles.md")
    states("B01", f"about {H200_RIDGE * 8 / OP_FLOP:.0f} operations", near="The lab's operation",
           files="2-first-principles.md")
    states("B01", f"{H200_RIDGE:.1f} FLOP/byte", near="| H200 |", files="5-performance.md")
    states("B01", f"{MI300X_RIDGE:.1f} FLOP/byte", near="| MI300X |", files="5-performance.md")
    states("B01", f"{op:.3f}", near="I_{\\text{op}}", files="5-performance.md")
    states("B01", f"{chain8:.1f}", near="I_{\\text{op}}", files="5-performance.md")
    states("B01", f"{H200_RIDGE:.1f} FLOP/byte", near="ridge point", files="cards")
    states("B01", f"{H200_RIDGE * 8 / OP_FLOP:.0f}", near="$3k / 8 = 14.0$", files="9-self-assessment.md")


def test_time_of_a_copy_of_the_rows():
    nbytes = 2 * fusion.FLOAT * ROWS * COLS  # read once, write once
    assert nbytes == 2**30
    states("B01", f"{nbytes / H200_BW * 1e6:.0f} µs", near="| H200 |", files="5-performance.md")
    states("B01", f"{nbytes / MI300X_BW * 1e6:.0f} µs", near="| MI300X |", files="5-performance.md")


def test_issue_budget_of_a_warp():
    units, clock = hardware.value("h200", "units"), hierarchy.hopper_fp32_clock("h200")
    per_warp = WARP_BYTES
    budget = issue_budget_per_warp()
    warps = N // 4 // 32
    near = "issue slots"
    states("B01", f"{clock / 1e9:.2f} GHz", near=near, files="5-performance.md")
    states("B01", f"{units * 4 * clock / 1e12:.2f} × 10¹²", near=near, files="5-performance.md")
    states("B01", f"{per_warp:,} bytes", near=near, files="5-performance.md")
    states("B01", f"{H200_BW / per_warp / 1e9:.2f} × 10⁹", near=near, files="5-performance.md")
    states("B01", f"issue {budget:.0f} warp instructions", near=near, files="5-performance.md")
    states("B01", f"{budget * warps / 1e6:.0f} million", near=near, files="5-performance.md")
    assert warps == 2**21
    states("B01", "2²¹ warps", near=near, files="5-performance.md")


# ---------------------------------------------------------------- softmax and layernorm
def test_softmax_bytes_and_best_shares():
    three, online, one = (fusion.softmax_bytes(v) for v in ("three_pass", "online", "one_pass"))
    assert (three, online, one) == (16, 12, 8)
    para = states("B01", f"{three}", near="Three passes", files="2-first-principles.md")
    assert "$4 \\cdot 3 + 4" in para
    states("B01", f"{online}", near="Online. Keep", files="2-first-principles.md")
    shares = [f"{100 * fusion.best_share(b):.0f}%" for b in (three, online, one)]
    for s in shares:
        states("B01", s, near="Credited with the 8 bytes", files="2-first-principles.md")
        states("B01", s, near="They move 16, 12 and 8 bytes", files="9-self-assessment.md")


def test_overflow_threshold():
    states("B01", f"{math.log(3.4028234663852886e38):.1f}", near="overflows float32", files="2-first-principles.md")


def test_row_in_registers():
    per = COLS // THREADS
    states("B01", f"{per} floats a thread", near="The lab's row of", files="2-first-principles.md")
    states("B01", f"{COLS * fusion.FLOAT // 1024} KiB", near="The lab's row of", files="2-first-principles.md")
    states("B01", f"{THREADS * MAX_PER:,}", near="The row in registers", files="3-silicon.md")
    states("B01", f"{per} floats a thread at {COLS:,} columns and {MAX_PER} at {THREADS * MAX_PER:,}",
           near="Registers, and with them occupancy", files="6-tradeoffs.md")
    per_sm = LONG_ROWS / hardware.value("h200", "units")
    assert 3 < per_sm < 4
    states("B01", "fewer than four", near="Rows too long for one block", files="5-performance.md")


def test_layernorm_bytes():
    assert fusion.layernorm_bytes(True) == 8
    unfused = fusion.layernorm_bytes(False)
    states("B01", f"moves {unfused} bytes an element", near="seven separate eager operations", files="2-first-principles.md")
    states("B01", f"moves {unfused} bytes", near="seven eager operations", files="9-self-assessment.md")
    assert len(fusion.LAYERNORM_UNFUSED_STEPS) == 7
    assert "4 + 8 + 8 + 4 + 3 x 8 = 48" in ROWS_PY


def test_self_assessment_arithmetic():
    n = 2**26
    states("B01", f"{8 * 5 * n:,}", near="Unfused: $8", files="9-self-assessment.md")
    states("B01", f"{8 * 5 * n / H200_BW * 1e6:.0f} µs", near="Unfused: $8", files="9-self-assessment.md")
    states("B01", f"{8 * n:,}", near="Unfused: $8", files="9-self-assessment.md")
    states("B01", f"{8 * n / H200_BW * 1e6:.0f} µs", near="Unfused: $8", files="9-self-assessment.md")
    s = 3.5 * math.exp(2 - 5) + 1
    states("B01", f"{s:.3f}", near="$v > m$, so", files="9-self-assessment.md")
    states("B01", f"{math.exp(-3):.4f}", near="$v > m$, so", files="9-self-assessment.md")


# ---------------------------------------------------------------- the H200 records
@pytest.fixture(scope="module")
def recs():
    return records(ROOT)


def rec(recs, key):
    assert key in recs, f"no record {key}: run `tutor labs bench B01 --course` on the H200"
    return recs[key]


def share(r) -> float:
    return r["value"] / r["ceiling"]["value"]


def test_fusion_divides_the_time_by_about_k(recs):
    for vendor in ("cuda", "triton"):
        for k in (2, 4, 8):
            fused, unfused = rec(recs, f"B01/chain/fused_{k}/{vendor}"), rec(recs, f"B01/chain/unfused_{k}/{vendor}")
            ratio = fused["value"] / unfused["value"]
            assert 0.8 * k <= ratio <= 1.1 * k, f"{vendor} k={k}: fused/unfused = {ratio:.2f}, not about {k}"
            assert unfused["bytes"] == k * fused["bytes"]


def test_fused_chain_reaches_the_copy(recs):
    for vendor in ("cuda", "triton"):
        assert share(rec(recs, f"B01/chain/fused_8/{vendor}")) >= 0.9


def test_folded_constants_keep_the_chain_memory_bound(recs):
    # k read at run time costs issue slots: more instructions than the budget the page derives, and a
    # lower rate than the kernel with folded constants; the folded kernel fits the budget.
    budget = issue_budget_per_warp() * (N // 4 // 32)
    folded = rec(recs, "B01/chain/chain_fused_k8.smsp__inst_executed.sum/cuda")["value"]
    runtime = rec(recs, "B01/chain/chain_fused_runtime_k8.smsp__inst_executed.sum/cuda")["value"]
    assert folded < budget < runtime, f"folded {folded:,.0f}, budget {budget:,.0f}, run time {runtime:,.0f}"
    fast, slow = rec(recs, "B01/chain/fused_8/cuda"), rec(recs, "B01/chain/fused_runtime_8/cuda")
    assert share(slow) < 0.8 * share(fast)


def test_dram_bytes_of_one_launch(recs):
    # the first bench launch is k = 1 on 2^28 floats: 1 GiB read, 1 GiB written, by either kernel
    for kernel in ("op_step", "chain_fused"):
        for metric in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
            got = rec(recs, f"B01/chain/{kernel}.{metric}/cuda")["value"]
            assert abs(got - 4 * N) <= 0.05 * 4 * N, f"{kernel} {metric}: {got} bytes, not about {4 * N}"


def test_softmax_headline(recs):
    torch_softmax = rec(recs, "B01/rows/torch_softmax/triton")
    # the CUDA headline is the better of its two one-pass kernels (4-byte and 16-byte loads)
    best_cuda = max(share(rec(recs, f"B01/rows/{v}/cuda")) for v in ("softmax_one_pass", "softmax_one_pass_vec"))
    assert best_cuda >= 0.95, f"CUDA one-pass softmax at {100 * best_cuda:.1f}% of copy, below 95%"
    tri = share(rec(recs, "B01/rows/softmax_one_pass/triton"))
    assert tri >= 0.95, f"Triton one-pass softmax at {100 * tri:.1f}% of copy, below 95%"
    tri = rec(recs, "B01/rows/softmax_one_pass/triton")
    assert tri["value"] >= 2 * torch_softmax["value"], "one-pass Triton softmax not twice eager torch.softmax"


def test_layernorm_headline(recs):
    for vendor in ("cuda", "triton"):
        assert share(rec(recs, f"B01/rows/layernorm/{vendor}")) >= 0.85


def test_online_softmax_and_long_rows_are_measured(recs):
    for vendor in ("cuda", "triton"):
        online = rec(recs, f"B01/rows/softmax_online/{vendor}")
        assert online["bytes"] == 12 * ROWS * COLS
        rec(recs, f"B01/rows/softmax_online_long/{vendor}")
    rec(recs, "B01/rows/torch_softmax_long/triton")
    rec(recs, "B01/rows/softmax_online.dram__bytes_read.sum/cuda")


def test_compiled_variants_are_measured(recs):
    for key in ("chain/compiled_8", "rows/compiled_softmax", "rows/compiled_layernorm_unfused",
                "rows/eager_layernorm_unfused", "rows/torch_layer_norm"):
        rec(recs, f"B01/{key}/triton")


def test_what_the_rows_records_say(recs):
    # the 16-byte loads gain little over the 4-byte ones
    vec, scalar = rec(recs, "B01/rows/softmax_one_pass_vec/cuda"), rec(recs, "B01/rows/softmax_one_pass/cuda")
    assert 0.97 <= vec["value"] / scalar["value"] <= 1.05
    # the online softmax's DRAM reads: between one read of the input and two, about half the second from DRAM
    one_read = 4 * ROWS * COLS
    got = rec(recs, "B01/rows/softmax_online.dram__bytes_read.sum/cuda")["value"]
    again = (got - one_read) / one_read
    assert 0.3 <= again <= 0.7, f"{100 * again:.0f}% of the second read from DRAM, not about half"
    # eager softmax is slower, but the page does not blame extra passes: it holds the row in shared memory
    eager, one_pass = rec(recs, "B01/rows/torch_softmax/triton"), rec(recs, "B01/rows/softmax_one_pass/triton")
    assert eager["value"] < 0.6 * one_pass["value"]
    para = states("B01", "its gap is not extra passes", near="**Eager softmax**", files="5-performance.md")
    assert "A hypothesis, not measured here" in para
    never_states("B01", "near the 16 of a three-pass form")


def test_headline_relations_for_both_vendors(recs):
    # the CUDA one-pass softmax, too, is at least twice eager torch.softmax (measured in another process)
    torch_softmax = rec(recs, "B01/rows/torch_softmax/triton")["value"]
    best_cuda = max(rec(recs, f"B01/rows/{v}/cuda")["value"] for v in ("softmax_one_pass", "softmax_one_pass_vec"))
    assert best_cuda >= 2 * torch_softmax
    # "torch.compile fuses the whole chain": within 10% of the hand-fused Triton kernel at every k
    for k in (1, 2, 4, 8):
        compiled = rec(recs, f"B01/chain/compiled_{k}/triton")["value"]
        assert compiled >= 0.9 * rec(recs, f"B01/chain/fused_{k}/triton")["value"], k
    states("B01", "fuses the whole chain", near="`torch.compile`", files="5-performance.md")
