"""Claims of module B06 (data parallelism, ZeRO and FSDP), derived from the models and the hardware table,
read back from the module's own text, and pinned on the measurement records.

The first part derives every number the sections print: the GPT-2 and Llama 2 parameter counts, the bytes
per parameter and GB per GPU of each ZeRO stage, the bytes sent per step, the link ridge points and the
tokens per rank above them, DDP's buckets for GPT-2 small, the answers of the self-assessment. Each is
formatted as the page prints it and found in the paragraph that states it (tests/claims/prose.py).

The second part reads the records the labs write on the H200 (`tutor labs bench B06 --course`). Until they
exist these tests fail: that is the state of a module whose measurement day has not come.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tutor_build.measurements import records
from tutor_build.models import data_parallel as dp
from tutor_build.models import hardware, training_memory

from prose import states

ROOT = Path(__file__).parents[2]
LLAMA = training_memory.MODELS["llama2-7b"]["params"]
XL = dp.gpt2_params(**dp.GPT2["gpt2-xl"])
SMALL = dp.gpt2_params(**dp.GPT2["gpt2"])
H200_HBM = hardware.value("h200", "hbm_bytes")
MI300X_HBM = hardware.value("mi300x", "hbm_bytes")
H200_BF16 = hardware.peak("h200", "bf16")
MI300X_BF16 = hardware.peak("mi300x", "bf16")
H200_LINK = hardware.value("h200", "link_bw")
MI300X_LINK = hardware.value("mi300x", "link_bw")  # per direction per peer


def _gb(x: float, d: int = 1) -> str:
    return f"{x / 1e9:.{d}f} GB"


# --------------------------------------------------------------------------------------------- derived


def test_gpt2_counts_from_the_shapes():
    for cfg in dp.GPT2.values():
        assert dp.gpt2_params(**cfg) == sum(dp.numel(s) for _, s in dp.gpt2_tensors(**cfg))
    states("B06", "124{,}439{,}808", near="GPT-2 small")
    states("B06", "1{,}557{,}611{,}200", near="GPT-2 XL, 48 layers")
    for shape in dp.LAB_SHAPES.values():
        assert dp.gpt2_params(**shape) == sum(dp.numel(s) for _, s in dp.gpt2_tensors(**shape))
    states("B06", f"{dp.gpt2_params(**dp.LAB_SHAPES['full']):,}".replace(",", "{,}"), near="4 CPU ranks, rank 0")


def test_bytes_per_parameter_by_stage():
    assert [dp.bytes_per_param(8, s) for s in dp.STAGES] == [16, 5.5, 3.75, 2]
    assert [dp.bytes_per_param(4, s) for s in dp.STAGES] == [16, 7, 5.5, 4]
    for s, b in zip(dp.STAGES, ("16", "5.5", "3.75", "2")):
        states("B06", b, near="| bytes per parameter | GB per GPU", files="2-first-principles.md")


@pytest.mark.parametrize("stage", dp.STAGES)
def test_headline_llama_by_stage(stage):
    gb = dp.per_rank(LLAMA, 8, stage)["states"]
    states("B06", f"{gb / 1e9:.1f}", near="| bytes per parameter | GB per GPU", files="2-first-principles.md")
    headline = (ROOT / "modules/B06-data-parallel-zero-fsdp/module.yml").read_text()
    assert _gb(gb) in headline


def test_share_of_h200_at_stage_0():
    share = dp.per_rank(LLAMA, 8, 0)["states"] / H200_HBM
    states("B06", f"{share:.0%}", near="the states alone take")
    assert dp.per_rank(LLAMA, 8, 3)["states"] / H200_HBM < 0.1


def test_bytes_sent_per_step():
    s0, s3 = dp.sent_per_rank(LLAMA, 8, 0), dp.sent_per_rank(LLAMA, 8, 3)
    assert dp.sent_per_rank(LLAMA, 8, 1) == dp.sent_per_rank(LLAMA, 8, 2) == s0
    assert s3 / s0 == pytest.approx(1.5)
    states("B06", f"{s0 / 1e9:.2f} GB", near="sent per rank per step at stages 0 to 2")
    states("B06", f"{s3 / 1e9:.2f} GB", near="sent per rank per step at stages 0 to 2")
    states("B06", f"{s3 / 1e9:.2f} GB", near="1.5 times the bytes", files="6-tradeoffs.md")
    ms = s0 / H200_LINK * 1e3
    states("B06", f"{ms:.0f} ms", near="at the link rate", files="3-silicon.md")


def test_silicon_table():
    s0 = dp.per_rank(LLAMA, 8, 0)["states"]
    states("B06", f"{(H200_HBM - s0) / 1e9:.0f} GB left", near="Llama 2 7B states at stage 0")
    states("B06", f"{(MI300X_HBM - s0) / 1e9:.0f} GB left", near="Llama 2 7B states at stage 0")
    xl = 16 * XL
    states("B06", f"{xl / 1e9:.2f} GB", near="GPT-2 XL states at stage 0")
    states("B06", f"{xl / H200_HBM:.0%}", near="GPT-2 XL states at stage 0")
    states("B06", f"{xl / MI300X_HBM:.0%}", near="GPT-2 XL states at stage 0")
    thirteen = 13e9
    states("B06", f"{16 * thirteen / 1e9:.0f} GB", near="a 13B model")
    states("B06", f"{dp.per_rank(thirteen, 8, 1)['states'] / 1e9:.1f} GB", near="a 13B model")
    assert dp.per_rank(thirteen, 8, 1)["states"] < H200_HBM < 16 * thirteen
    states("B06", f"{(MI300X_HBM - H200_HBM) / 1e9:.0f} GB", near="a 13B model")


def test_link_ridge_points_and_tokens():
    ridge = H200_BF16 / H200_LINK
    states("B06", f"{ridge:,.0f}", near="over 450 GB/s out of each GPU")
    n = 8
    t0 = ridge / (1.5 * n / (n - 1))
    t3 = ridge / (n / (n - 1))
    states("B06", f"{t0:,.0f} tokens", near="stays compute-bound above about")
    states("B06", f"{t3:,.0f}", near="stays compute-bound above about")
    mi_dir = 7 * MI300X_LINK
    states("B06", f"{mi_dir / 1e9:.0f} GB/s", near="all seven links give in one")
    states("B06", f"{MI300X_BF16 / mi_dir:,.0f} FLOP", near="all seven links give in one")


def test_gpt2_xl_baseline_states():
    states("B06", f"{16 * XL / 1e9:.2f} GB", near="moments take", files="2-first-principles.md")
    states("B06", f"{16 * XL / 1e9:.2f} GB", near="The states are exactly")


def test_ddp_buckets_of_gpt2_small():
    b = dp.ddp_buckets(dp.GPT2["gpt2"])
    assert sum(b) == 4 * SMALL
    states("B06", str(len(b)), near="buckets at the default limits")
    fig = (ROOT / "modules/B06-data-parallel-zero-fsdp/figures.yml").read_text()
    assert f"{b[0] / dp.MiB:.1f} MiB" in fig and f"{b[-1] / dp.MiB:.1f} MiB" in fig
    assert f"{b[1] / dp.MiB:.1f} MiB" in fig and b.count(b[1]) == len(b) - 2


def test_bucket_rule_on_the_lab_models():
    """The lab's own rule and the model's agree; the caps the lab uses produce several buckets."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ddp_buckets", ROOT / "labs/B06/python/ddp_buckets.py")
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    for key, (shape, caps) in lab.SHAPES.items():
        assert shape == dp.LAB_SHAPES[key]
        for cap in caps:
            sizes = dp.ready_sizes(shape)
            assert lab.buckets(sizes, lab.limits_for(cap)) == dp.ddp_buckets(shape, cap)


def test_the_modelled_ready_order_is_the_real_one():
    """The figure's and the page's buckets rest on ready_sizes: it must be the order backward really
    finishes the gradients (recorded by the lab's hooks), for the lab shapes and GPT-2 small itself."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("ddp_buckets", ROOT / "labs/B06/python/ddp_buckets.py")
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    shapes = list(dp.LAB_SHAPES.values()) + [{k: v for k, v in dp.GPT2["gpt2"].items() if k != "name"}]
    for shape in shapes:
        tokens = torch.randint(0, shape["vocab"], (1, 16))
        assert lab.ready_order(shape, 0, tokens, "cpu") == dp.ready_sizes(shape)


def test_zero1_rank0_owns_the_token_table():
    shape = dp.LAB_SHAPES["full"]
    t = dp.gpt2_tensors(**shape)
    psi, wte = dp.gpt2_params(**shape), dp.numel(dict(t)["wte"])
    assert wte > psi / 4
    states("B06", f"{wte:,}", near="gives rank 0 the")
    states("B06", f"{psi // 4:,}", near="gives rank 0 the")
    assert psi % 4 == 0
    n = 4  # the fp32 replica of the CPU ranks: 4 + 4 bytes whole, 8 of Adam state split n ways, of 16
    states("B06", f"{(4 + 4 + 8 / n) / 16:.1%}", near="would give")


def test_self_assessment_numbers():
    p = 13e9
    got = [dp.per_rank(p, 8, s)["states"] / 1e9 for s in dp.STAGES]
    assert got == pytest.approx([208, 71.5, 48.75, 26])
    for x in ("208 GB", "71.5 GB", "48.75 GB", "26 GB", "69.5 GB", "92.25 GB", "115 GB"):
        states("B06", x, near="Bytes per parameter: 16", files="9-self-assessment.md")
    s0, s3 = dp.sent_per_rank(p, 8, 0), dp.sent_per_rank(p, 8, 3)
    states("B06", f"{s0 / 1e9:.1f} GB", near="an all-reduce of", files="9-self-assessment.md")
    states("B06", f"{s3 / 1e9:.2f}", near="an all-reduce of", files="9-self-assessment.md")
    states("B06", f"{s0 / H200_LINK * 1e3:.0f} ms", near="an all-reduce of", files="9-self-assessment.md")
    states("B06", f"{s3 / H200_LINK * 1e3:.0f} ms", near="an all-reduce of", files="9-self-assessment.md")
    full = dp.gpt2_params(**dp.LAB_SHAPES["full"])
    states("B06", f"{4 * full:,}".replace(",", "{,}"), near="The buckets together hold", files="9-self-assessment.md")


# --------------------------------------------------------------------------------------------- records

RECS = records(ROOT)


def _rec(key: str) -> dict:
    assert key in RECS, f"no record {key}: run `tutor labs bench B06 --course` on the H200"
    return RECS[key]


@pytest.mark.parametrize("mode", ["ddp", "zero1", "shard_grad_op", "full_shard"])
def test_cpu_rank_bytes(mode):
    """Rank 0's bytes on 4 CPU ranks: within the padding and step counters of the ideal split, never below."""
    r = _rec(f"B06/zero_memory/ranks4_{mode}/python")
    full = dp.gpt2_params(**dp.LAB_SHAPES["full"])
    ntens = len(dp.gpt2_tensors(**dp.LAB_SHAPES["full"]))
    assert r["ceiling"]["value"] * 2**20 == pytest.approx({"ddp": 16 * full, "zero1": 8 * full + 2 * full,
                                                           "shard_grad_op": 4 * full, "full_shard": 4 * full}[mode])
    got = r["bytes"]
    if mode == "ddp":
        assert got == 16 * full + 4 * ntens
    if mode == "zero1":  # rank 0 owns the token table alone (section 5)
        wte = dp.numel(dict(dp.gpt2_tensors(**dp.LAB_SHAPES["full"]))["wte"])
        assert got == 8 * full + 8 * wte + 4
    if mode in ("shard_grad_op", "full_shard"):
        rows = sum(-(-s[0] // 4) * dp.numel(s[1:]) for _, s in dp.gpt2_tensors(**dp.LAB_SHAPES["full"]))
        assert got == 16 * rows + 4 * ntens  # rank 0 holds a full chunk of every tensor


def test_full_shard_is_about_a_quarter_of_ddp():
    a, b = _rec("B06/zero_memory/ranks4_full_shard/python"), _rec("B06/zero_memory/ranks4_ddp/python")
    assert a["value"] / b["value"] == pytest.approx(0.25, abs=0.01)


def test_baseline_states_are_16_bytes_and_the_peak_above_them():
    st = _rec("B06/zero_memory/stage0_states/python")
    saved = _rec("B06/zero_memory/stage0_saved/python")
    peak = _rec("B06/zero_memory/stage0_peak/python")
    b, seq = _baseline_size()
    vocab = dp.GPT2["gpt2-xl"]["vocab"]
    assert st["bytes"] == 16 * XL
    # at the peak (end of forward, start of backward) the 2 bytes a parameter of gradients do not exist yet;
    # the loss adds at most four b x s x V buffers of fp32 (section 5)
    assert 14 * XL + saved["bytes"] <= peak["bytes"] <= 16 * XL + saved["bytes"] + 4 * 4 * b * seq * vocab
    assert peak["bytes"] <= peak["ceiling"]["value"] * 1e9  # it ran: the peak fits in HBM


def _baseline_size() -> tuple[int, int]:
    import re

    src = (ROOT / "labs/B06/python/zero_memory.py").read_text()
    m = re.search(r'baseline\("gpt2-xl", batch=(\d+), seq=(\d+)\)', src)
    assert m, "the baseline call of zero_memory.py changed"
    return int(m.group(1)), int(m.group(2))


def test_baseline_size_on_the_page():
    b, seq = _baseline_size()
    states("B06", f"{b} sequences of {seq} tokens", near="GPT-2 XL, one step at")


@pytest.mark.parametrize("cap", ["cap_0p5MiB", "cap_2MiB", "cap_default"])
def test_ddp_calls_match_the_rule(cap):
    import re

    r = _rec(f"B06/ddp_buckets/{cap}/python")
    assert r["value"] == r["ceiling"]["value"]
    assert r["bytes"] == 4 * dp.gpt2_params(**dp.LAB_SHAPES["full"])
    c = {"cap_0p5MiB": 0.5, "cap_2MiB": 2, "cap_default": None}[cap]
    m = re.search(r"limits (\d+) then (\d+) bytes", r["ceiling"]["name"])
    limits = [int(m.group(1)), int(m.group(2))]
    # the limits section 2 states: a 1 MiB first bucket at the default cap, else the cap for every bucket
    cap_bytes = dp.MiB * 25 if c is None else int(c * dp.MiB)
    assert limits == ([dp.MiB, cap_bytes] if c is None else [cap_bytes, cap_bytes])
    assert r["value"] == len(dp.buckets(dp.ready_sizes(dp.LAB_SHAPES["full"]), limits))
    assert r["value"] == len(dp.ddp_buckets(dp.LAB_SHAPES["full"], c))  # the rule figure B06.3 draws


def test_the_parameter_counts_come_from_the_published_shapes():
    # Llama 2 7B: untied embedding and output, 4 h^2 attention, a gated MLP of 3 h f, two RMSNorms a layer
    h, f, layers, vocab = 4096, 11008, 32, 32000
    llama = 2 * vocab * h + layers * (4 * h * h + 3 * h * f + 2 * h) + h
    assert llama == 6_738_415_616 and f"{llama / 1e9:.2f}" == f"{LLAMA / 1e9:.2f}"
    para = states("B06", "6.74 \\times 10^9", near="counted from its shapes")
    assert "11,008" in para and "32,000" in para and "4,096" in para
    # GPT-2 small: tied output, learned positions, biases and two LayerNorms a block
    h, layers, vocab, ctx = 768, 12, 50257, 1024
    block = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h)
    assert vocab * h + ctx * h + layers * block + 2 * h == 124_439_808



def test_the_update_transient_of_the_token_table():
    # GPT-2 XL's token table, 50,257 x 1,600: its fp32 gradient and the two bias-corrected moments at once
    table = 50257 * 1600
    states("B06", f"{3 * 4 * table / 1e9:.2f} GB", near="three of one tensor's size", files="5-performance.md")
