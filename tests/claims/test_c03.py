"""Claims of module C03 (KV cache management), derived here and read back from the module's own text.

Each number is computed from first principles: the published configs (restated below, as the page cites them),
the one hardware table (`tutor_build.models.hardware`) and the measurement records of the two labs, with the
closed forms written out here rather than called from `kvcache.py` (the model is checked against them). The
number is then found, printed as the page prints it, in the paragraph that states it (tests/claims/prose.py).
Measured numbers appear on the page only through placeholders; the tests check the records behind them and
that the placeholders name those records. The records exist, so nothing here skips.
"""

from __future__ import annotations

import math
import random

import pytest

from tests.claims.prose import never_states, sources, states
from tutor_build.measurements import records
from tutor_build.models import hardware as hw
from tutor_build.models import kvcache as kv

from pathlib import Path

ROOT = Path(__file__).parents[2]
ID = "C03"
RECS = records(ROOT)
PA, KF = "C03/paged_attention", "C03/kv_fragmentation"

# The published configs (config.json of each model, cited on the page): layers, query heads, KV heads, head dim.
CONFIGS = {
    "Llama 2 7B": (32, 32, 32, 4096 // 32),  # MHA: num_key_value_heads = num_attention_heads
    "Llama 3.1 8B": (32, 32, 8, 128),
    "Mistral 7B": (32, 32, 8, 4096 // 32),
    "Llama 3.1 70B": (80, 64, 8, 8192 // 64),
    "Falcon 7B": (32, 71, 1, 4544 // 71),  # multi_query: one KV head
}
DSV3 = dict(layers=61, heads=128, kv_lora_rank=512, rope=64, nope=128, v=128)
BF16 = 2


def rec(variant: str, lab: str = PA, vendor: str = "triton") -> float:
    return RECS[f"{lab}/{variant}/{vendor}"]["value"]


def frag(variant: str) -> float:
    return rec(variant, KF, "python")


def text(files: str = "*.md") -> str:
    return "\n".join(sources(ID, files).values())


def table_row(first: str) -> list[str]:
    for line in sources(ID, "2-first-principles.md")[next(iter(sources(ID, "2-first-principles.md")))].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith(first + " [@"):
            return cells
    raise AssertionError(f"no table row for {first}")


def mha_bytes(layers, kv_heads, dim, b=BF16):
    return 2 * layers * kv_heads * dim * b


MLA_BYTES = DSV3["layers"] * (DSV3["kv_lora_rank"] + DSV3["rope"]) * BF16
MLA_AS_MHA = DSV3["layers"] * DSV3["heads"] * (DSV3["nope"] + DSV3["rope"] + DSV3["v"]) * BF16

# ---------------------------------------------------------------- the bytes-per-token table


@pytest.mark.parametrize("name", list(CONFIGS))
def test_table_row_from_the_config(name):
    layers, q_heads, kv_heads, dim = CONFIGS[name]
    b = mha_bytes(layers, kv_heads, dim)
    full = mha_bytes(layers, q_heads, dim)
    cells = table_row(name)
    assert cells[2] == f"{layers} × {kv_heads} × {dim}"
    assert cells[3] == f"{b:,}" and cells[4] == f"{full:,}"
    share = b / full
    assert cells[5] == (f"{share:.0%}" if share >= 0.2 else f"{share:.1%}" if share >= 0.1 else f"{share:.2%}")
    m = kv.BY_NAME[name]  # the model the figure and the page draw from agrees with the config
    assert kv.bytes_per_token(m) == b and kv.mha_equivalent_bytes(m) == full


def test_mla_row_and_model():
    cells = table_row("DeepSeek-V3")
    assert cells[3] == f"{MLA_BYTES:,}" and cells[4] == f"{MLA_AS_MHA:,}"
    assert cells[5] == f"{MLA_BYTES / MLA_AS_MHA:.2%}"
    assert kv.bytes_per_token(kv.BY_NAME["DeepSeek-V3"]) == MLA_BYTES
    assert kv.mha_equivalent_bytes(kv.BY_NAME["DeepSeek-V3"]) == MLA_AS_MHA
    states(ID, f"{MLA_BYTES:,}", near="The latent cache.")
    states(ID, f"{DSV3['kv_lora_rank'] + DSV3['rope']} values per layer", near="The latent cache.")


def test_headline_bytes_per_token():
    for name in ("Llama 2 7B", "Llama 3.1 8B", "Falcon 7B"):
        layers, _, kv_heads, dim = CONFIGS[name]
        states(ID, f"{mha_bytes(layers, kv_heads, dim):,}", near=name, files="module.yml")
    states(ID, f"{MLA_BYTES:,}", near="DeepSeek-V3", files="module.yml")
    assert mha_bytes(80, 8, 128) == 327_680  # the figure C07 uses
    states(ID, "327,680", near="C07 sizes a serving node")


def test_conversation_sizes():
    para = "A 4,096-token conversation"
    assert 4096 * mha_bytes(*CONFIGS["Llama 2 7B"][::2][:1], 32, 128) == 2 * 2**30
    states(ID, f"{4096 * mha_bytes(32, 32, 128) // 2**30} GiB", near=para)
    states(ID, f"{4096 * mha_bytes(32, 8, 128) // 2**20} MiB", near=para)


# ---------------------------------------------------------------- a decode step's bytes and FLOP


def _lens():
    nbytes = RECS[f"{PA}/contiguous/triton"]["bytes"]
    per_token = 2 * 8 * 128 * BF16
    assert nbytes % per_token == 0
    return nbytes, nbytes // per_token


def test_step_bytes_and_tokens():
    nbytes, tokens = _lens()
    for r in ("copy", "contiguous", "paged_b16", "paged_b32"):
        assert RECS[f"{PA}/{r}/triton"]["bytes"] == nbytes  # every variant read the same bytes
    states(ID, f"{nbytes:,}".replace(",", "{,}"), near="What a decode step reads")
    states(ID, f"{tokens:,}".replace(",", "{,}"), near="What a decode step reads")
    states(ID, f"{nbytes:,}".replace(",", "{,}"), near="**Bytes.**")
    states(ID, f"{tokens:,}", near="The bench runs one attention layer")
    floor_h = nbytes / hw.value("h200", "hbm_bw") * 1e3
    floor_m = nbytes / hw.value("mi300x", "hbm_bw") * 1e3
    states(ID, f"{floor_h:.3f} ms", near="What a decode step reads")
    states(ID, f"{floor_h:.3f} ms", near="floor of the lab's")
    states(ID, f"{floor_m:.3f} ms", near="floor of the lab's")
    states(ID, f"{floor_m:.3f} ms", near="Nothing in this module was measured on an MI300X")


def test_flop_intensity_and_ridge():
    _, tokens = _lens()
    g, d = 32 // 8, 128
    per = 4 * g * d
    states(ID, f"{per:,}".replace(",", "{,}"), near="**FLOP.**")
    states(ID, f"{per * tokens * 8:,}", near="**FLOP.**")
    intensity = per / (2 * d * BF16)
    assert intensity == 2 * g / BF16 == 4
    states(ID, f"{intensity:.0f} FLOP/byte", near="Why it is a memory read")
    ridge_h = hw.peak("h200", "bf16") / hw.value("h200", "hbm_bw")
    ridge_m = hw.peak("mi300x", "bf16") / hw.value("mi300x", "hbm_bw")
    states(ID, f"{ridge_h:.0f} FLOP/byte", near="Why it is a memory read")
    states(ID, f"{ridge_h:.0f} FLOP per byte", near="**Arithmetic intensity.**")
    states(ID, f"{ridge_m:.0f}", near="**Arithmetic intensity.**")
    states(ID, f"{ridge_h:.0f} FLOP per byte", near="ridge point of")
    states(ID, f"{ridge_m:.0f} on the MI300X", near="ridge point of")
    states(ID, f"{hw.peak('h200', 'bf16') / 1e12:.1f} TFLOP/s", near="**Arithmetic intensity.**")
    states(ID, f"{hw.peak('mi300x', 'bf16') / 1e12:,.1f} TFLOP/s", near="**Arithmetic intensity.**")
    assert ridge_h / intensity > 50 and ridge_m / intensity > 50  # "fifty times left of either ridge"


def test_silicon_table():
    for gpu, col in (("h200", 1), ("mi300x", 2)):
        cap = hw.value(gpu, "hbm_bytes")
        states(ID, f"{math.floor(cap / mha_bytes(80, 8, 128)):,}", near="Llama 3.1 70B KV tokens")
        states(ID, f"{cap / 1e9:.0f} GB", near="HBM capacity")
        states(ID, f"{hw.value(gpu, 'hbm_bw') / 1e12:.1f} TB/s", near="HBM bandwidth")
    states(ID, f"{hw.value('h200', 'units')} SMs", near="compute units")
    states(ID, f"{hw.value('mi300x', 'units')} CUs", near="compute units")
    programs = 64 * 8
    states(ID, f"{programs}", near="the lab's bench launches")
    states(ID, f"{programs / hw.value('h200', 'units'):.1f} programs per SM", near="the lab's bench launches")
    states(ID, f"{programs / hw.value('mi300x', 'units'):.1f}", near="the lab's bench launches")
    states(ID, f"{hw.value('h200', 'shared_per_unit') // 1024} KiB", near="on-chip scratch")
    states(ID, f"{hw.value('mi300x', 'shared_per_unit') // 1024} KiB", near="on-chip scratch")
    states(ID, f"{hw.value('mi300x', 'infinity_cache_bytes') // 2**20} MiB", near="last-level cache")


# ---------------------------------------------------------------- the block table


def test_page_and_table_bytes():
    for page in (16, 32):
        share = 4 / (page * 2 * 128 * BF16)
        assert kv.table_share(page, 128) == share
        states(ID, f"{share:.3%}", near="The price of a page is one lookup")
        states(ID, f"{share:.3%}", near="Section 2 counted the table's extra bytes")
    assert kv.page_bytes(16, 8, 128) == 16 * 8 * 128 * BF16 == 32 * 1024
    states(ID, "32 KiB of K", near="The price of a page is one lookup")
    states(ID, f"{kv.page_bytes(32, 8, 128) // 1024:.0f} KiB of each", near="The price of a page is one lookup")
    states(ID, "32 KiB of K", near="A page of 16 tokens × 8 KV heads")
    states(ID, f"{128 * BF16} contiguous bytes per token", near="A page of 16 tokens × 8 KV heads")
    states(ID, f"{8 * 128 * BF16:,} bytes further on", near="A page of 16 tokens × 8 KV heads")
    width = math.ceil(4096 / 16)
    states(ID, f"{width} entries × 4 bytes, {64 * width * 4 // 1024} KiB", near="A page of 16 tokens × 8 KV heads")
    states(ID, f"{2 * 128 * BF16} bytes of K and V per token", near="The price of a page is one lookup")


def test_q3_table_share():
    per_page = 32 * 2 * 128 * BF16
    states(ID, f"{per_page:,}".replace(",", "{,}"), near="Per page:")
    states(ID, f"{4 / per_page:.3%}", near="Per page:")


# ---------------------------------------------------------------- the headline: paged vs contiguous, same run


def test_headline_paged_reaches_90_percent_of_contiguous():
    contiguous = rec("contiguous")
    for page in (16, 32):
        share = rec(f"paged_b{page}") / contiguous
        assert share >= 0.90, f"pages of {page}: {share:.1%} of the contiguous bandwidth"
        states(ID, f"{share:.1%}", near="reads 32-token pages", files="module.yml")
    states(ID, f"{rec('contiguous') / rec('copy'):.0%} of a copy", near="reads 32-token pages", files="module.yml")
    for v in ("paged_b32", "paged_b16", "contiguous"):
        states(ID, f"{rec(v):,.0f}", near="reads 32-token pages", files="module.yml")
    body = text("5-performance.md")
    for a, b in (("paged_b32", "contiguous"), ("paged_b16", "contiguous"), ("contiguous", "copy")):
        assert f'{{{{ share("{PA}/{a}/triton", "{PA}/{b}/triton") }}}}' in body
    # every record of the comparison comes from one run: same GPU, toolkit, date and source hash
    runs = {(RECS[k]["gpu"], RECS[k]["toolkit"], RECS[k]["date"], RECS[k]["source_sha256"])
            for k in RECS if k.startswith(PA + "/")}
    assert len(runs) == 1


def test_losses_stated_in_tradeoffs():
    c = rec("contiguous")
    l32, l16 = 1 - rec("paged_b32") / c, 1 - rec("paged_b16") / c
    states(ID, f"{l32:.1%} of its bandwidth with pages of 32", near="The lab's decode kernel loses")
    states(ID, f"{l16:.1%} with pages of 16", near="The lab's decode kernel loses")
    states(ID, f"{(l16 - l32) * 100:.1f}-point", near="twice the entries")
    states(ID, f"{l32:.1%}", near="The measured loss")


SHAPES = ("n32_w4_s2", "n64_w4_s2", "n64_w4_s3", "n128_w4_s2", "n128_w8_s2")
LAYOUTS = ("contiguous", "paged_b32", "paged_b16", "paged_b16_ordered")


def cands(layout):
    found = {k.split("/")[2][len(layout) + 1:]: v["value"] for k, v in RECS.items()
             if k.startswith(f"{PA}/{layout}_n")}
    assert sorted(found) == sorted(SHAPES)
    return found


def test_best_tiles():
    for layout in LAYOUTS:
        c = cands(layout)
        assert rec(layout) == max(c.values())  # the layout's record is its best candidate
        assert max(c, key=c.get) == "n64_w4_s2"  # "the best tile is 64 tokens, 4 warps, 2 stages for every layout"
        assert rec(f"{layout}_n32_w4_s2") / rec(layout) < 0.95  # "reaches only": a short tile loses more than pages do
    states(ID, "the best tile is 64 tokens, 4 warps, 2 stages for every\nlayout".replace("\n", " "),
           near="Five tile shapes")
    never_states(ID, "the 128-token tile wins narrowly")
    # "at that shape and at both 128-token shapes the paged kernels are faster than the contiguous one"
    for shape in ("n64_w4_s3", "n128_w4_s2", "n128_w8_s2"):
        for layout in LAYOUTS[1:]:
            assert cands(layout)[shape] > cands("contiguous")[shape], (layout, shape)
    # "one peak well above its other shapes": the contiguous best leads its next shape by more than any paged best
    def lead(layout):
        v = sorted(cands(layout).values())
        return v[-1] / v[-2]
    assert lead("contiguous") > 1.05 and all(lead(x) < lead("contiguous") for x in LAYOUTS[1:])
    body = text("5-performance.md")
    for ref in ('share("C03/paged_attention/contiguous_n64_w4_s3/triton", "C03/paged_attention/contiguous/triton")',
                'value("C03/paged_attention/paged_b32_n128_w4_s2/triton")',
                'value("C03/paged_attention/contiguous_n128_w4_s2/triton")'):
        assert ref in body


def test_ordered_control():
    c = rec("contiguous")
    shuffled, ordered = 1 - rec("paged_b16") / c, 1 - rec("paged_b16_ordered") / c
    assert 0 < ordered < shuffled  # placement costs something, the lookup most of it
    assert ordered > shuffled / 2  # "most of the cost goes with the lookup"
    states(ID, f"{shuffled * 100:.1f}\npoints".replace("\n", " "), near="The shuffled and the ordered 16-token caches")
    states(ID, f"{ordered * 100:.1f} remain", near="The shuffled and the ordered 16-token caches")
    states(ID, f"{rec('paged_b16_ordered') / c:.1%}", near="16-token pages handed out in order reach", files="module.yml")
    assert RECS[f"{PA}/paged_b16_ordered/triton"]["bytes"] == RECS[f"{PA}/contiguous/triton"]["bytes"]
    states(ID, f"{ordered:.1%} with 16-token pages handed out in order", near="The lab's decode kernel loses")


def test_read_ceiling():
    c, read, copy = rec("contiguous"), rec("read"), rec("copy")
    assert read > copy  # a read-only stream is the higher, closer ceiling for a kernel that only reads
    assert RECS[f"{PA}/read/triton"]["bytes"] == RECS[f"{PA}/copy/triton"]["bytes"]
    states(ID, f"{c / read:.0%} of a read-only stream", near="reads 32-token pages", files="module.yml")
    body = text("5-performance.md")
    assert f'{{{{ share("{PA}/contiguous/triton", "{PA}/read/triton") }}}}' in body
    never_states(ID, "100% of the")


def test_extra_bytes_of_q_o_and_table():
    nbytes, _ = _lens()
    q = 64 * 32 * 128 * BF16
    table = 64 * math.ceil(4096 / 16) * 4
    extra = 2 * q + table
    states(ID, f"{q:,} bytes each", near="**Bytes.**")
    states(ID, f"{table:,} bytes", near="**Bytes.**")
    states(ID, f"{extra:,} bytes, {extra / nbytes:.2%}", near="**Bytes.**")
    never_states(ID, "under 0.1%")


def test_tokens_per_second_estimate():
    # Llama 3.1 8B's config: vocab 128,256, hidden 4,096, MLP 14,336, 32 layers, 8 KV heads of 128, untied embeddings
    V, H, I, L, KVD = 128256, 4096, 14336, 32, 8 * 128
    params = 2 * V * H + L * (2 * H * H + 2 * H * KVD + 3 * H * I + 2 * H) + H
    w = params * BF16 / 1e9
    pool = 65536 * mha_bytes(32, 8, 128) / 1e9
    near = "What the batch buys."
    states(ID, f"{params / 1e9:.2f} billion parameters", near=near)
    states(ID, f"{w:.2f} GB in bf16", near=near)
    states(ID, f"{pool:.2f} GB", near=near)
    fit = w + frag("contiguous_fit_used") / 100 * pool
    base = frag("contiguous_fit_batch")
    for scheme, step_x, tps_x in (("paged_b16", "1.22×", "1.65×"), ("paged_b16_wm5", "1.20×", "1.61×")):
        step = w + frag(f"{scheme}_used") / 100 * pool
        states(ID, f"{frag(scheme + '_used') / 100:.3f} \\times {pool:.2f} = {step:.1f}$", near=near)
        assert f"{step / fit:.2f}×" == step_x and f"{frag(scheme + '_batch') / base / (step / fit):.2f}×" == tps_x
        states(ID, step_x, near=near)
        states(ID, tps_x, near=near)
    states(ID, f"{w:.2f} + {frag('contiguous_fit_used') / 100:.3f} \\times {pool:.2f} = {fit:.1f}$", near=near)
    states(ID, f"{frag('paged_b16_batch') / base:.2f}× batch", near=near)
    never_states(ID, "nearly twice the tokens per second")
    never_states(ID, "sits at the low end of their")


def test_preemption_and_watermark():
    for s in ("paged_b16", "paged_b32", "paged_b16_wm5"):
        assert frag(f"{s}_recomputed_share") == pytest.approx(
            100 * frag(f"{s}_recomputed") / RECS[f"{KF}/{s}_recomputed/python"]["ceiling"]["value"])
    hl = "module.yml"
    states(ID, f"{frag('paged_b16_preempted'):,.0f} times for 2,000 requests", near="but only by preempting", files=hl)
    states(ID, f"{frag('paged_b16_recomputed_share'):.1f}% of all prompt tokens", near="but only by preempting", files=hl)
    states(ID, f"{frag('paged_b16_wm5_used'):.1f}%", near="stay free keeps", files=hl)
    states(ID, f"{frag('paged_b16_wm5_batch'):.1f}", near="stay free keeps", files=hl)
    states(ID, f"{frag('paged_b16_wm5_preempted'):.0f} preemptions", near="stay free keeps", files=hl)
    states(ID, f"{frag('paged_b16_wm5_recomputed_share'):.1f}% of the prompt tokens", near="stay free keeps", files=hl)
    assert RECS[f"{KF}/paged_b16_preempted/python"]["ceiling"]["value"] == 2000
    assert frag("paged_b16_wm5_recomputed_share") < 1 < 80 < frag("paged_b16_recomputed_share")  # "almost all of it off"
    body = text("5-performance.md") + text("6-tradeoffs.md")
    for v in ("paged_b16_preempted", "paged_b16_recomputed_share", "paged_b32_preempted", "paged_b32_recomputed_share",
              "paged_b16_wm5_preempted", "paged_b16_wm5_recomputed_share", "paged_b16_wm5_used"):
        assert f'{{{{ value("{KF}/{v}/python") }}}}' in body
    for s in ("contiguous_max", "contiguous_fit", "paged_b16", "paged_b32", "paged_b16_wm5"):
        assert frag(f"{s}_batch") <= RECS[f"{KF}/{s}_batch/python"]["ceiling"]["value"]  # the stated bound holds
    bound = RECS[f"{KF}/paged_b16_batch/python"]["ceiling"]["value"]
    assert all(RECS[f"{KF}/{s}_batch/python"]["ceiling"]["value"] == bound for s in ("contiguous_fit", "paged_b32"))
    states(ID, f"{bound:.1f} requests in this\nworkload".replace("\n", " "), near="No mean batch can exceed")
    assert frag("paged_b16_batch") / bound > 0.9  # "the paged schemes come close to it"


def test_free_share_is_too_little_for_an_average_prompt():
    pages_free = frag("paged_b16_free") / 100 * 65536 / 16
    mean_prompt = RECS[f"{KF}/paged_b16_recomputed/python"]["ceiling"]["value"] / 2000
    assert pages_free < mean_prompt / 16  # "fewer than an average prompt needs"
    states(ID, "fewer than an average prompt needs", near="The free share that remains")


def test_cards_and_drills_numbers():
    c = rec("contiguous")
    pool = 65536
    for page in (16, 32):
        pred = frag(f"paged_b{page}_batch_waiting") * (page - 1) / 2 / pool
        states(ID, f"{pred:.3%}", near="in the lab's pool,", files="cards")
    states(ID, f"{1 - rec('paged_b16') / c:.1%} of the contiguous bandwidth", near="0.049%", files="cards")
    states(ID, f"{4 / (16 * 512):.3%}", near="One 4-byte entry per 16 x 512", files="cards")
    states(ID, f"{mha_bytes(32, 1, 64):,} bytes per token", near="Falcon 7B caches", files="cards")
    states(ID, f"{mha_bytes(32, 71, 64):,}", near="Falcon 7B caches", files="cards")
    states(ID, f"{mha_bytes(32, 1, 64) / mha_bytes(32, 71, 64):.2%}", near="Falcon 7B caches", files="cards")
    states(ID, f"{1 - rec('paged_b16') / c:.1%} of the bandwidth", near="Table size, allocator work")
    states(ID, f"{1 - rec('paged_b32') / c:.1%}", near="Table size, allocator work")
    for old in ("4.5%", "0.87%", "1.77%"):
        never_states(ID, old, files="cards")


def test_mla_against_mqa():
    mqa = DSV3["layers"] * (DSV3["nope"] + DSV3["rope"] + DSV3["v"]) * BF16
    for near in ("MLA\ncaches about".replace("\n", " "), "The share equals Falcon 7B"):
        states(ID, f"{mqa:,}".replace(",", "{,}"), near=near)
        states(ID, f"{MLA_BYTES / mqa:.1f}×", near=near)
    never_states(ID, "as small as MQA")
    never_states(ID, "caches as little as MQA")


def test_cdna_program_imbalance():
    programs, cus = 64 * 8, hw.value("mi300x", "units")
    two = programs - cus
    states(ID, f"{two}\nCUs run two programs".replace("\n", " "), near="the lab's bench launches")
    states(ID, f"{cus - two} run one", near="the lab's bench launches")


# ---------------------------------------------------------------- the pool


def test_pool_parts_sum_and_headline():
    for s in ("contiguous_max", "contiguous_fit", "paged_b16", "paged_b32"):
        parts = sum(frag(f"{s}_{p}") for p in ("used", "internal", "external", "free"))
        assert parts == pytest.approx(100.0, abs=1e-6)
    states(ID, f"{frag('paged_b16_used'):.1f}%", near="pages of 16 use", files="module.yml")
    states(ID, f"{frag('contiguous_fit_used'):.1f}%", near="pages of 16 use", files="module.yml")
    states(ID, f"{frag('contiguous_fit_batch'):.1f}", near="running batch doubles", files="module.yml")
    states(ID, f"{frag('paged_b16_batch'):.1f} requests", near="running batch doubles", files="module.yml")
    assert 1.9 <= frag("paged_b16_batch") / frag("contiguous_fit_batch") <= 2.1  # "doubles"


def test_paged_internal_prediction():
    pool = 65536
    for page in (16, 32):
        batch = frag(f"paged_b{page}_batch_waiting")  # the batch over the same steps the parts are averaged over
        pred = batch * (page - 1) / 2 / pool
        states(ID, f"{pred:.3%}", near="that predicts")
        states(ID, f"{pred:.3%}\npredicted".replace("\n", " "), near="The paged internal waste matches")
        assert f'{{{{ value("{KF}/paged_b{page}_batch_waiting/python") }}}}' in states(ID, "predicts", near="that predicts")
        measured = frag(f"paged_b{page}_internal") / 100
        assert measured == pytest.approx(pred, rel=0.005)  # "matches"
    states(ID, f"{(16 - 1) / 2}", near="that predicts")
    states(ID, f"{pool * 128 * 1024 // 2**30} GiB", near="A server gives the cache a pool")
    assert mha_bytes(32, 8, 128) == 128 * 1024


def test_pool_words_in_tradeoffs_and_drills():
    """Measured shares in sections 6 and 9 come through placeholders naming the right records."""
    body = text("6-tradeoffs.md") + text("9-self-assessment.md")
    for v in ("paged_b16_internal", "paged_b32_internal", "contiguous_fit_internal"):
        assert f'{{{{ value("{KF}/{v}/python") }}}}' in body
    for a in ("paged_b32", "paged_b16"):
        assert f'{{{{ share("{PA}/{a}/triton", "{PA}/contiguous/triton") }}}}' in body
    # what the drill says of them holds: pages waste little against a reservation
    assert frag("paged_b32_internal") < 2 < frag("contiguous_fit_internal") / 10
    for typed in ("0.87%", "1.77%", "38.6%", "98.1%", "97.4%", "98.2%", "98.6%", "83.5%"):  # never typed by hand on the pages
        for name, t in sources(ID).items():
            assert typed not in t, f"{name} types the measured {typed}"


def test_prefix_sharing():
    S, U, N, P = 1000, 256, 64, 16
    plain = N * math.ceil((S + U) / P)
    shared = S // P + N * (math.ceil((S + U) / P) - S // P)
    assert (plain, shared) == kv.prefix_pages(S, [U] * N, P)
    saved = 1 - shared / plain
    assert frag("prefix_saved") == pytest.approx(100 * saved, abs=1e-9)  # the lab counted the closed form
    states(ID, f"{shared:,} pages instead of", near="Sharing a prefix.")
    states(ID, f"{plain:,}", near="Sharing a prefix.")
    states(ID, f"{saved:.1%} fewer", near="Sharing a prefix.")
    states(ID, f"{saved:.1%} of the closed form", near="Prefix sharing saves")
    states(ID, f"{plain:,}".replace(",", "{,}"), near="Without: $64")
    states(ID, f"{shared:,}".replace(",", "{,}"), near="Without: $64")
    states(ID, f"{S // P}", near="Without: $64")
    states(ID, f"{S // P} full pages of 16, {S // P * 16} tokens", near="Prefix sharing works in whole pages")
    states(ID, f"share {S // 128}, {S // 128 * 128} tokens", near="Prefix sharing works in whole pages")


def test_self_assessment_numbers():
    b = mha_bytes(32, 8, 128)
    states(ID, f"{b:,}".replace(",", "{,}"), near="$2 \\times 32 \\times 8")
    states(ID, f"{math.floor(40e9 / b):,}", near="40 GB /")
    states(ID, f"{math.floor(40e9 / b / 4096)} whole sequences", near="40 GB /")
    states(ID, f"{72 * 7.5 / 65536:.2%}", near="$(P-1)/2$ slots per request")
    states(ID, f"{72 * 127.5 / 65536:.0%}", near="$(P-1)/2$ slots per request")
    seq = 4096 * mha_bytes(80, 8, 128)
    states(ID, f"{seq / 1e9:.2f} GB", near="From the config: $2")
    states(ID, f"{seq / 8 / 1e6:.1f} MB", near="From the config: $2")
    states(ID, f"{MLA_BYTES / MLA_AS_MHA:.2%}", near="MLA caches $512")
    falcon = mha_bytes(32, 1, 64) / mha_bytes(32, 71, 64)
    assert f"{falcon:.2%}" == f"{MLA_BYTES / MLA_AS_MHA:.2%}"  # "the same share as Falcon 7B"


def test_kwon_numbers_quoted_consistently():
    for near in ("Kwon et al. measured", "Kwon et al., SOSP 2023"):
        para = states(ID, "20.4%", near=near)
        assert "38.2%" in para and "2-4×" in para


def test_group_padding_and_kernel_count():
    g, pad = 32 // 8, 16  # the kernel pads the group to max(16, next power of two)
    states(ID, f"{pad - g} of the {pad} rows are", near="Each program holds the")
    states(ID, f"$g = {g}$", near="Each program holds the")
    layouts, candidates = 4, 5
    assert sum(1 for k in RECS if k.startswith(PA + "/") and "_n" in k) == layouts * candidates
    states(ID, "all twenty kernels", near="Each record is the median of five rounds")


def test_the_max_new_answer_is_the_simulation_rerun():
    """The collapsed answer of the MAX_NEW task quotes a run that is not recorded: the simulation is seeded, so
    the lab itself, with MAX_NEW = 256, reproduces each number the answer prints."""
    import importlib.util
    import sys

    path = ROOT / "labs/C03/python/kv_fragmentation.py"
    sys.path.insert(0, str(ROOT / "labs/common/python"))
    spec = importlib.util.spec_from_file_location("kv_fragmentation_max_new_256", path)
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    lab.MAX_NEW = 256
    reqs = lab.workload(lab.N_REQUESTS, lab.WORKLOAD_SEED)
    near = "one run of the lab with that change"
    fit = lab.simulate("contiguous_fit", reqs)
    fixed = lab.simulate("contiguous_max", reqs)
    paged = lab.simulate("paged_b16", reqs)
    states(ID, f"{fit['batch']:.1f} against", near=near, files="4-labs.md")
    states(ID, f"({fixed['batch']:.1f})", near=near, files="4-labs.md")
    states(ID, f"to {paged['batch']:.1f} mostly", near=near, files="4-labs.md")
    states(ID, f"to {lab.batch_ceiling(reqs):.1f}", near=near, files="4-labs.md")
    states(ID, f"to {paged['preempted']:,}.", near=near, files="4-labs.md")
