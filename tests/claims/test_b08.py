"""Claims of module B08 (activation memory and recomputation): derived here, then read from the module's text.

The first part checks the module's model (tutor_build.models.activations) against the lab's own prediction
and against a real run of the lab's block on the CPU: the saved bytes of every mode, for both attention cores,
at several odd shapes, to the byte. The second part derives every number the sections print (the GPT-3 layer's
MiB per mode, the FLOP overheads, intensities, ridge points, times at peak, the answers of section 9) from
the model, the hardware table and the lab's own GPU shapes, and finds each one, formatted as the page prints
it, in the paragraph that states it (tests/claims/prose.py).

The third part reads the H200 records of the `recompute` lab and checks the relations section 5 and the
headline draw from them. The lab runs on one GPU, so a missing record is a failure, not a skip: on a branch
measured nowhere yet, that part fails until `tutor labs bench B08 --course` has run.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import torch

from prose import states
from tutor_build.measurements import records
from tutor_build.models import activations as act
from tutor_build.models import hardware

ROOT = Path(__file__).parents[2]
LAB_PATH = ROOT / "labs/B08/python/recompute.py"
MiB = 2**20
GiB = 2**30


def _load_lab():
    spec = importlib.util.spec_from_file_location("b08_recompute_lab", LAB_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LAB = _load_lab()
G = dict(LAB.GPT3)  # the lab's GPU shapes: h, a, s, b
S, B, H, A = G["s"], G["b"], G["h"], G["a"]
H200_BF16 = hardware.peak("h200", "bf16")
H200_HBM = hardware.value("h200", "hbm_bw")
H200_PCIE = hardware.value("h200", "pcie_bw")
H200_CAP = hardware.value("h200", "hbm_bytes")
MI300X_BF16 = hardware.peak("mi300x", "bf16")
MI300X_HBM = hardware.value("mi300x", "hbm_bw")
MI300X_CAP = hardware.value("mi300x", "hbm_bytes")
SHAPES = [(1, 7, 16, 2), (2, 11, 24, 3), (3, 13, 48, 4), (1, 2048, 12288, 96)]


def _mib(x: float) -> str:
    return f"{x / MiB:,.0f}"


# --------------------------------------------------------------------------------------------
# The model, the lab's prediction and the lab's block agree
# --------------------------------------------------------------------------------------------

def test_inventories_sum_to_the_formulas():
    assert act.coefficients("none", paper=True) == (34, 5)
    assert act.coefficients("selective", paper=True) == (34, 0)
    assert act.coefficients("full", paper=True) == (2, 0)
    assert act.coefficients("none") == (16, 1)
    assert act.coefficients("selective") == (16, 0)
    assert act.coefficients("full") == (1, 0)
    # the block is the paper without dropout: two sbh masks, the P mask and the dropped-out P removed
    dropout = [t for t in act.PAPER_TERMS if "dropout" in t.name]
    assert sum(t.sbh for t in dropout) == 2 and sum(t.as2b for t in dropout) == 3
    assert 2 * act.coefficients("none")[0] == 34 - 2 and 2 * act.coefficients("none")[1] == 5 - 3


@pytest.mark.parametrize("b, s, h, a", SHAPES)
def test_lab_prediction_is_the_model(b, s, h, a):
    for mode in act.MODES:
        for core in ("math", "sdpa"):
            for elem in (2, 4):
                assert LAB.predicted_bytes(mode, s, b, h, a, elem=elem, core=core) == \
                    act.block_bytes(mode, s, b, h, a, elem=elem, core=core)
        assert LAB.paper_bytes(mode, s, b, h, a) == pytest.approx(act.paper_bytes(mode, s, b, h, a))
    for mode in ("none", "selective", "full", "offload"):
        assert LAB.step_flops(mode, s, b, h) == act.step_flops(mode, s, b, h)
    assert act.block_bytes("none", s, b, h, a) == LAB.predicted_bytes("offload", s, b, h, a, 2)


@pytest.mark.parametrize("b, s, h, a", SHAPES[:3])
def test_the_block_on_the_cpu_keeps_what_the_model_says(b, s, h, a):
    torch.manual_seed(0)
    p = LAB.make_block(h, 1, "cpu", torch.float32)
    x = torch.randn(b, s, h, requires_grad=True)
    g = torch.randn(b, s, h)
    for core_name, core in (("math", LAB.core_math), ("sdpa", LAB.core_sdpa)):
        for mode in ("none", "selective", "full", "offload"):
            meter = LAB.run_step(mode, x, p, a, core, g)
            model_mode = "none" if mode == "offload" else mode
            assert meter.total == act.block_bytes(model_mode, s, b, h, a, elem=4, core=core_name), (core_name, mode)


# --------------------------------------------------------------------------------------------
# Numbers the sections print
# --------------------------------------------------------------------------------------------

def test_gpt3_layer_bytes():
    none, sel, full = (act.block_bytes(m, S, B, H, A) for m in act.MODES)
    states("B08", "1,536 MiB", near="The block keeps", files="2-first-principles.md")
    assert _mib(none) == "1,536" and _mib(sel) == "768" and _mib(full) == "48"
    assert _mib(act.paper_bytes("none", S, B, H, A)) == "2,736" and _mib(act.paper_bytes("selective", S, B, H, A)) == "816"
    para = states("B08", "2,736 MiB", near="The block keeps", files="2-first-principles.md")
    for text in ("768 MiB", "816 MiB", "48 MiB", "25{,}165{,}824", "$as/h = 16$"):
        assert text in para, text
    assert S * B * H == 25_165_824 and A * S // H == 16
    sel_pct = act.overhead("selective", S, B, H)
    states("B08", f"{sel_pct:.1%}".replace("%", "\\%"), near="Selective costs", files="2-first-principles.md")
    para = states("B08", f"{1 - full / none:.1%}", near="Selective costs", files="2-first-principles.md")
    assert f"full costs {act.overhead('full', S, B, H):.0%}" in para
    for where in ("module.yml",):
        states("B08", "1,536 MiB", near="byte for byte", files=where)
        states("B08", "768 MiB", near="byte for byte", files=where)
        states("B08", "2,736", near="byte for byte", files=where)
        states("B08", f"{sel_pct:.1%}", near="byte for byte", files=where)
        states("B08", f"{full / none:.1%}", near="byte for byte", files=where)


def test_96_layers_against_capacity():
    L = act.GPT3_175B["layers"]
    none, sel, full = (L * act.block_bytes(m, S, B, H, A) for m in act.MODES)
    para = states("B08", "144 GiB", near="Across GPT-3's 96 layers", files="2-first-principles.md")
    assert f"{none / GiB:.0f} GiB" == "144 GiB" and f"{sel / GiB:.0f} GiB" in para and f"{full / GiB:.1f} GiB" in para
    assert none > H200_CAP  # "more than an H200's 141 GB"
    assert f"{H200_CAP / 1e9:.0f} GB" in para
    states("B08", "four fifths", near="Capacity.", files="3-silicon.md")
    assert round(none / MI300X_CAP, 1) == 0.8


def test_times_at_peak():
    step = act.step_flops("none", S, B, H)
    para = states("B08", f"{step / 1e12:.1f}", near="Recomputation time.", files="3-silicon.md")
    for x in (step / H200_BF16, step / MI300X_BF16):
        assert f"{x * 1e3:.1f} ms" in para
    f = act.forward_flops(S, B, H)
    assert f"({f / H200_BF16 * 1e3:.1f} and {f / MI300X_BF16 * 1e3:.1f} ms)" in para
    sel = 4 * B * S * S * H
    assert f"({sel / H200_BF16 * 1e3:.2f} and {sel / MI300X_BF16 * 1e3:.2f} ms)" in para
    none = act.block_bytes("none", S, B, H, A)
    para = states("B08", f"{none / H200_PCIE * 1e3:.0f} ms", near="Offload time.", files="3-silicon.md")
    assert f"{H200_PCIE / 1e9:.0f} GB/s" in para


def test_intensities_and_ridge_points():
    assert f"{H200_BF16 / H200_HBM:.0f}" == "206" and f"{MI300X_BF16 / MI300X_HBM:.0f}" == "247"
    states("B08", "206", near="ridge point", files="5-performance.md")
    states("B08", "247", near="ridge point", files="5-performance.md")
    sel = act.flops_per_byte_saved("selective", S, B, H, A)
    assert sel == 2 * H // A == 256
    states("B08", "256", near="FLOP paid per byte", files="5-performance.md")
    states("B08", f"{sel / 2:.0f} FLOP per byte of traffic avoided", near="Selective recomputation spends",
           files="5-performance.md")
    full = act.flops_per_byte_saved("full", S, B, H, A)
    assert round(full, -2) == 4900 and round(full / 2, -1) == 2440
    para = states("B08", "4,900", near="Full recomputation spends", files="5-performance.md")
    assert "2,440" in para and "twelve times" in para and round(full / 2 / (H200_BF16 / H200_HBM)) == 12
    ridge = H200_BF16 / H200_PCIE
    tex = lambda x: f"{round(x, -2):,.0f}".replace(",", "{,}")  # noqa: E731  (a thousands comma in TeX)
    para = states("B08", tex(ridge), near="Offloading spends", files="5-performance.md")
    step_per_byte = act.step_flops("none", S, B, H) / act.block_bytes("none", S, B, H, A)
    assert tex(step_per_byte) in para and step_per_byte < ridge
    assert f"$12h^2 = {12 * H * H / 1e9:.2f}$ billion" in sources_text("5-performance.md")
    states("B08", f"{act.forward_flops(S, B, H) / 1e12:.2f} TFLOP", near="FLOP paid per byte", files="5-performance.md")


def test_selective_saving_at_short_and_long_sequences():
    s = 512
    assert A * s // H == 4
    saving = 1 - act.block_bytes("selective", s, B, H, A) / act.block_bytes("none", s, B, H, A)
    assert round(saving, 2) == 0.2
    states("B08", "$as/h = 4$", near="At short", files="6-tradeoffs.md")
    s = 8192
    para = states("B08", "3.3\\%", near="221{,}184", files="9-self-assessment.md")
    assert f"{act.overhead('selective', s, B, H):.1%}" == "3.3%"
    none, sel = act.block_bytes("none", s, B, H, A), act.block_bytes("selective", s, B, H, A)
    assert f"{none / GiB:.0f} GiB" in para and f"{sel / GiB:.0f} GiB" in para and f"{1 - sel / none:.0%}" in para


def test_self_assessment_answers():
    b, s, h, a = 1, 7, 16, 2
    none, sel = act.block_bytes("none", s, b, h, a, elem=4), act.block_bytes("selective", s, b, h, a, elem=4)
    para = states("B08", f"{none:,}".replace(",", "{,}"), near="$sbh = 112$", files="9-self-assessment.md")
    assert f"{sel:,}".replace(",", "{,}") in para and str(none - sel) in para
    assert round(34 * H / (5 * A)) == 870
    states("B08", "870", near="Paper:", files="9-self-assessment.md")
    lse = 4 * B * A * S
    states("B08", f"{lse / MiB:.2f} MiB", near="logsumexp", files="9-self-assessment.md")


def sources_text(files: str) -> str:
    from prose import sources
    return "\n".join(sources("B08", files).values())


# --------------------------------------------------------------------------------------------
# The H200 records
# --------------------------------------------------------------------------------------------

RECS = records(ROOT)
MODES = ("none", "selective", "full", "offload")


def _rec(metric: str, core: str, mode: str) -> dict:
    key = f"B08/recompute/{metric}_{core}_{mode}/python"
    assert key in RECS, f"no record {key}: run `tutor labs bench B08 --course` on the H200"
    return RECS[key]


def test_every_key_the_page_quotes_is_a_variant_the_lab_writes():
    text = sources_text("*.md")
    keys = set(re.findall(r'"(B08/recompute/[a-z_]+/python)"', text))
    variants = {f"{m}_{c}_{mode}" for m in ("saved", "alloc", "step", "rate") for c in ("math", "sdpa") for mode in MODES}
    variants |= {f"fwd_{c}" for c in ("math", "sdpa")}
    assert keys and all(k.split("/")[2] in variants for k in keys), keys


def test_measured_saved_bytes_equal_the_derivation():
    for core in ("math", "sdpa"):
        for mode in MODES:
            r = _rec("saved", core, mode)
            want = act.block_bytes("none" if mode == "offload" else mode, S, B, H, A, core=core)
            if core == "math" or mode in ("selective", "full"):
                assert r["bytes"] == want, (core, mode)
            else:  # the GPU's fused kernel may keep a few more bytes (its RNG state): at most 1 KiB above
                assert want <= r["bytes"] <= want + 1024, (core, mode, r["bytes"] - want)


def test_measured_shares_and_the_allocator():
    none = _rec("saved", "math", "none")["value"]
    assert _rec("saved", "math", "selective")["value"] / none == pytest.approx(0.5, abs=1e-4)
    assert _rec("saved", "math", "full")["value"] / none == pytest.approx(1 / 32, rel=1e-3)
    assert _rec("saved", "sdpa", "none")["value"] / none == pytest.approx(0.5, abs=0.002)
    for mode in ("none", "selective", "full"):
        assert _rec("alloc", "math", mode)["value"] >= _rec("saved", "math", mode)["value"]
    # one block: the recomputed forward rebuilds the whole inventory before the block's backward runs
    assert _rec("alloc", "math", "full")["value"] >= _rec("saved", "math", "none")["value"]
    # offload keeps nothing on the GPU between forward and backward: its peak is below no recompute's
    assert _rec("alloc", "math", "offload")["value"] < _rec("alloc", "math", "none")["value"]


def early_stop_ratio(h: int, s: int) -> float:
    """Step FLOPs of torch's full checkpoint over the plain step's: the rerun skips the last product, 8 b s h^2."""
    return 1 + (4 * h + s) / (18 * h + 3 * s)


def test_the_early_stop_is_derived_on_the_page():
    states("B08", f"{early_stop_ratio(H, S):.3f}", near="not rerun", files="2-first-principles.md")
    states("B08", f"{early_stop_ratio(H, S):.3f}", near="skip the block's last product", files="5-performance.md")


def test_measured_step_times():
    t = {mode: _rec("step", "math", mode)["value"] for mode in MODES}
    key = "B08/recompute/fwd_math/python"
    assert key in RECS, f"no record {key}: run `tutor labs bench B08 --course` on the H200"
    fwd = RECS[key]["value"]
    # full recomputation reruns the whole forward (the lab turns torch's early stop off): its step grows by
    # more than one forward timed alone (on the H200, 1.19 of it with the math core, 1.10 fused)
    assert 1.0 * fwd <= t["full"] - t["none"] <= 1.3 * fwd, (t, fwd)
    assert 1.15 <= (t["full"] - t["none"]) / fwd <= 1.25  # "about a fifth more"
    assert fwd >= 0.95 * RECS[key]["ceiling"]["value"]
    assert 0.98 <= t["selective"] / t["none"] <= 1.15  # 0.9% more FLOPs; the math core's passes again
    assert t["offload"] > t["none"]
    for mode in MODES:  # no step beats the matrix FLOPs at torch.mm's rate
        r = _rec("step", "math", mode)
        assert r["value"] >= 0.95 * r["ceiling"]["value"]
    assert _rec("step", "sdpa", "none")["value"] < t["none"]
    fused = {mode: _rec("step", "sdpa", mode)["value"] for mode in ("none", "full")}
    fwd_fused = RECS["B08/recompute/fwd_sdpa/python"]["value"]
    assert 1.0 * fwd_fused <= fused["full"] - fused["none"] <= 1.3 * fwd_fused, (fused, fwd_fused)
    assert 1.05 <= (fused["full"] - fused["none"]) / fwd_fused <= 1.15  # "about a tenth more"


def test_torch_checkpoint_skips_the_last_product_in_its_rerun():
    """Section 2's early stop, shown on the lab's own block: the matrix products of backward, counted by op,
    are one fewer under torch's default checkpoint than with set_checkpoint_early_stop(False)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket in (torch.ops.aten.mm, torch.ops.aten.addmm, torch.ops.aten.bmm):
                self.count += 1
            return func(*args, **(kwargs or {}))

    h, a = 16, 2
    p = LAB.make_block(h, 0, "cpu", torch.float32)
    x = torch.randn(2, 5, h, requires_grad=True)

    def backward_products(early_stop: bool) -> int:
        with set_checkpoint_early_stop(early_stop):
            out = checkpoint(LAB.block, x, p, a, LAB.core_math, use_reentrant=False)
        counter = Products()
        with counter:
            out.sum().backward()
        return counter.count

    assert backward_products(True) == backward_products(False) - 1
    # the lab's full mode is the whole rerun, not the default
    counter = Products()
    out = LAB.forward("full", x, p, a, LAB.core_math)
    with counter:
        out.sum().backward()
    assert counter.count == backward_products(False)


def test_drill_two_counts_the_state_before_the_activations():
    """Drill 2: GPT-3's 96 layers at h = 12288 hold 12 L h^2 parameters, 16 bytes each, more than a node of
    eight H200s (141 GB each) holds; the answer says so before it turns to activations."""
    params = 12 * 96 * 12288**2
    assert round(params / 1e9) == 174
    state = 16 * params
    assert state > 8 * 141e9
    states("B08", "174 billion", near="Count first", files="9-self-assessment.md")
    states("B08", f"{state / 1e12:.1f} TB", near="Count first", files="9-self-assessment.md")
