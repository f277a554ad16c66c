"""Claims of module C02 (anatomy of inference), derived here, independently of tutor_build/models/decode.py.

Each test computes its number from first principles: Llama 3.1 8B's published config (cited on the page), the one
hardware table (`tutor_build.models.hardware`) and the lab's H200 records, with the closed forms written out
here. The knee is re-derived by an ordinary least-squares fit (numpy) over every integer knee, not by the
model's own search; the model is then checked against it. Each number is then read back from the module's own
text, printed as the page prints it (tests/claims/prose.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.claims.prose import sources, states
from tutor_build.measurements import records
from tutor_build.models import decode as dm
from tutor_build.models import hardware as hw

ROOT = Path(__file__).parents[2]
ID = "C02"
RECS = records(ROOT)

# meta-llama/Llama-3.1-8B config.json
L, H, HQ, HKV, D, M, V = 32, 4096, 32, 8, 128, 14336, 128256
E = 2  # bf16


def rec(variant: str) -> dict:
    key = f"C02/prefill_decode/{variant}/python"
    if key not in RECS:
        pytest.skip(f"no record {key}")
    return RECS[key]


def val(variant: str) -> float:
    return float(rec(variant)["value"])


BW = val("copy_bandwidth") * 1e9 if "C02/prefill_decode/copy_bandwidth/python" in RECS else float("nan")
RATE = val("mm_bf16") * 1e12 if "C02/prefill_decode/mm_bf16/python" in RECS else float("nan")

PER_LAYER = H * (HQ + 2 * HKV) * D + HQ * D * H + 3 * H * M + 2 * H
P_READ = L * PER_LAYER + H + V * H  # layers, final norm, output head
P_ALL = P_READ + V * H  # and the embedding table
N_MAT = L * (H * (HQ + 2 * HKV) * D + HQ * D * H + 3 * H * M) + V * H  # weights that multiply a token
W_BYTES = E * P_READ
KV_TOK = 2 * L * HKV * D * E
ATT_PAIR = 4 * L * HQ * D
ACT = L * ((H + (HQ + 2 * HKV) * D) + (HQ * D + H) + (H + 2 * M) + (M + H)) + H + V  # per decode token


def f_seq(ctx: int) -> int:
    """FLOP of one sequence's decode step attending over ctx positions."""
    return 2 * N_MAT + ATT_PAIR * ctx


def s_seq(ctx: int) -> int:
    """Bytes one sequence adds to a decode step: embedding row, ctx positions read and 1 written, activations."""
    return E * (H + (KV_TOK // E) * (ctx + 1) + ACT)


def cross(ctx: int) -> float | None:
    d = f_seq(ctx) / RATE - s_seq(ctx) / BW
    return (W_BYTES / BW) / d if d > 0 else None


def decode_pts(ctx: int = 128) -> list[tuple[int, float]]:
    out = []
    for key, r in RECS.items():
        m = re.fullmatch(rf"C02/prefill_decode/decode_ctx{ctx}_b(\d+)/python", key)
        if m:
            out.append((int(m[1]), float(r["value"])))
    if not out:
        pytest.skip("no decode records")
    return sorted(out)


def hinge(pts, exclude=()):
    """Least squares over every integer knee between the second and second-to-last batch."""
    b = np.array([p[0] for p in pts if p[0] not in exclude], float)
    t = np.array([p[1] for p in pts if p[0] not in exclude])
    best = None
    for k in range(int(b[1]), int(b[-2]) + 1):
        X = np.stack([np.ones_like(b), np.minimum(b, k), np.maximum(b - k, 0)], 1)
        c = np.linalg.lstsq(X, t, rcond=None)[0]
        sse = float(((t - X @ c) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, k, c)
    return best[1], best[2]


def row(file: str, first: str, after: str = "") -> list[str]:
    """The cells of the first Markdown table row whose first cell is `first`, after the text `after`."""
    for body in sources(ID, file).values():
        for line in body[body.index(after):].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == first:
                return cells
    raise AssertionError(f"no table row {first!r} in {file}")


def ms(x_s: float, nd: int = 2) -> str:
    return f"{x_s * 1e3:.{nd}f} ms"


def us(x_s: float, nd: int = 2) -> str:
    return f"{x_s * 1e6:.{nd}f} µs"


# ---------------------------------------------------------------- the counts against the records


def test_counts_match_the_records_and_the_model():
    for key, r in RECS.items():
        m = re.fullmatch(r"C02/prefill_decode/decode(?:_eager)?_ctx(\d+)_b(\d+)/python", key)
        if m:
            c, b = int(m[1]), int(m[2])
            assert r["flops"] == b * f_seq(c) == dm.step_flops(b, 1, c)
            assert r["bytes"] == W_BYTES + b * s_seq(c) == dm.step_bytes(b, 1, c)
            assert r["ceiling"]["value"] == pytest.approx(1e3 * max(r["bytes"] / BW, r["flops"] / RATE), rel=1e-9)
    assert dm.params() == (P_READ, V * H)
    assert dm.kv_bytes_per_token() == KV_TOK


def test_parameters_and_flop():
    p = "Parameters a step reads"
    states(ID, f"{PER_LAYER:,}", near=p)
    states(ID, f"{P_READ:,}", near=p)
    states(ID, f"{V * H:,}", near=p)
    states(ID, f"{W_BYTES:,}", near=p)
    q = "FLOP per new token"
    states(ID, f"{N_MAT:,}", near=q)
    states(ID, f"{2 * N_MAT:,}", near=q)
    states(ID, f"{ATT_PAIR:,}", near=q)
    states(ID, f"{f_seq(128):,}", near=q)
    s = "Bytes per sequence"
    states(ID, f"{KV_TOK:,}", near=s)
    assert KV_TOK == 128 * 1024
    states(ID, f"{ACT:,}", near=s)
    states(ID, f"{s_seq(128):,}", near=s)
    states(ID, f"{s_seq(1024):,}", near=s)


def test_ridge_and_crossover():
    ridge = RATE / BW
    states(ID, f"{ridge:.0f} FLOP per byte", near="Their ratio, the **ridge point**")
    p = "The predicted crossover"
    states(ID, f"batch {ridge:.0f}", near=p)
    states(ID, ms(W_BYTES / BW, 3), near=p)
    states(ID, us(f_seq(128) / RATE), near=p)
    states(ID, us(s_seq(128) / BW), near=p)
    b = cross(128)
    assert 224 < b < 256  # the records' verdict flips between those batches
    assert rec("decode_ctx128_b224")["note"].startswith("memory") and rec("decode_ctx128_b256")["note"].startswith("compute")
    states(ID, f"{b:.1f}", near=p)
    assert dm.crossover_batch(128, BW, RATE) == pytest.approx(b)
    assert cross(1024) is None and dm.crossover_batch(1024, BW, RATE) is None
    assert all(rec(f"decode_ctx1024_b{x}")["note"].startswith("memory") for x in (1, 16, 64, 128, 192))


def test_context_where_decode_never_turns_compute_bound():
    # s(c)/BW = f(c)/R, both linear in c
    c_star = (2 * N_MAT / RATE - E * (H + KV_TOK // E + ACT) / BW) / (KV_TOK / BW - ATT_PAIR / RATE)
    p = "When decode can never turn compute-bound"
    states(ID, f"{c_star:.0f} tokens", near=p)
    states(ID, f"{ATT_PAIR // KV_TOK} FLOP per byte", near=p)
    states(ID, us(s_seq(1024) / BW), near=p)
    states(ID, us(f_seq(1024) / RATE), near=p)
    states(ID, f"{f_seq(1024) / s_seq(1024):.1f} FLOP per byte", near=p)
    states(ID, f"about {c_star:.0f} tokens", near="Long contexts.")
    states(ID, f"about {c_star:.0f} tokens", near="Beyond", files="9-self-assessment.md")


def test_prefill_and_cache_savings():
    def pf(t):
        return 2 * (N_MAT - V * H) * t + 2 * V * H + ATT_PAIR * (t * t - t * (t - 1) // 2)
    assert pf(8192) == rec("prefill_t8192")["flops"]
    p = "**Prefill.**"
    states(ID, f"{pf(8192) / rec('prefill_t8192')['bytes']:,.0f}", near=p)
    states(ID, f"{ATT_PAIR * 8192 * 8193 // 2 / pf(8192):.0%}", near=p)
    q = "What the KV cache saves"
    states(ID, f"{pf(1024) / f_seq(1024):.0f} times", near=q)
    states(ID, f"{pf(8192) / f_seq(8192):,.0f} times", near=q)
    states(ID, f"{192 * 1024 * KV_TOK / 1e9:.1f} GB", near=q)
    states(ID, f"{pf(1024) / f_seq(1024):.0f} times", near="The cache saves")


# ---------------------------------------------------------------- silicon


def test_silicon_table():
    for dev, name in (("h200", "H200"), ("mi300x", "MI300X")):
        r = hw.peak(dev, "bf16") / hw.value(dev, "hbm_bw")
        pool = int((hw.value(dev, "hbm_bytes") - E * P_ALL) // KV_TOK)
        col = 1 if dev == "h200" else 2
        assert row("3-silicon.md", "bf16 ridge point, datasheet")[col].startswith(f"{r:.0f} FLOP/byte")
        assert row("3-silicon.md", "decode crossover, weights only, datasheet")[col].startswith(f"batch {r:.0f}")
        assert row("3-silicon.md", "KV pool for Llama 3.1 8B in bf16, all HBM but the weights")[col].startswith(f"{pool:,} tokens")
        states(ID, f"{r:.0f}", near="The datasheet ridge of the")
    p = "The measured ridge on the H200"
    states(ID, f"{RATE / BW:.0f} FLOP per byte", near=p)
    states(ID, f"{BW / hw.value('h200', 'hbm_bw'):.0%}", near=p)
    states(ID, f"{RATE / hw.peak('h200', 'bf16'):.0%}", near=p)
    pools = [(hw.value(d, "hbm_bytes") - E * P_ALL) // KV_TOK for d in ("mi300x", "h200")]
    states(ID, f"{pools[0] / pools[1]:.1f} times", near=p)
    assert row("3-silicon.md", "QKV, output, gate-up and down products")[1].startswith(f"the weights, {E * PER_LAYER / 1e6:.0f} MB")
    assert row("3-silicon.md", "attention over the cache")[1].startswith(f"{KV_TOK // L * 1024 / 1e6:.0f} MB")


def test_lab_page_numbers():
    states(ID, f"{KV_TOK:,}", near="TODO 3, the cache's elements")
    p = "The bench holds the"
    states(ID, f"{E * P_ALL / 1e9:.1f} GB", near=p)
    states(ID, f"{192 * 1024 * KV_TOK / 1e9:.1f} GB", near=p)
    states(ID, f"batch {cross(128):.0f}", near="stop being nearly flat? Compare")


# ---------------------------------------------------------------- performance


def test_decode_table():
    for b in (1, 16, 64, 128, 192, 256, 384, 448, 512):
        r = rec(f"decode_ctx128_b{b}")
        cells = row("5-performance.md", str(b))
        assert cells[1] == f'{{{{ value("C02/prefill_decode/decode_ctx128_b{b}/python") }}}}'
        assert cells[2] == f"{r['ceiling']['value']:.2f} ms"
        assert cells[3] == f"{r['value'] / r['ceiling']['value']:.2f}×"
        assert cells[4] == f"{b / r['value'] * 1e3:,.0f}"
        assert cells[5] == f"{r['flops'] / r['bytes']:.1f}"


def test_throughput_and_step_growth():
    t1, t512 = val("decode_ctx128_b1"), val("decode_ctx128_b512")
    gain, growth = 512 * t1 / t512, t512 / t1
    states(ID, f"{gain:.0f} times", near="Batching is the lever")
    states(ID, f"{val('decode_ctx128_b128') - t1:.2f} ms more per step", near="Batching is the lever")
    states(ID, f"{gain:.0f} times", near="A larger batch makes every step longer")
    states(ID, f"{growth:.2f} times", near="A larger batch makes every step longer")
    states(ID, f"{val('decode_ctx128_b128') / t1:.2f} times", near="A larger batch makes every step longer")
    states(ID, f"{gain:.0f} times the tokens", near="batch 512 decode gives")
    states(ID, f"{growth:.2f} times as long", near="batch 512 decode gives")
    h = "module.yml"
    states(ID, f"{t1:.2f} ms at batch 1", near="", files=h)
    states(ID, f"{t512:.2f} ms at batch 512", near="", files=h)
    states(ID, f"{gain:.0f}x", near="", files=h)
    states(ID, f"{growth:.2f}x", near="", files=h)
    states(ID, f"copy {BW / 1e9:,.0f} GB/s", near="", files=h)
    states(ID, f"torch.mm {RATE / 1e12:.1f} TFLOP/s", near="", files=h)
    states(ID, f"ridge {RATE / BW:.0f} FLOP/byte", near="", files=h)
    states(ID, f"batch {cross(128):.0f}", near="", files=h)


def test_the_knee_is_found_earlier_than_predicted():
    pts = decode_pts(128)
    assert len(pts) == 18
    k, (a, lo, hi) = hinge(pts)
    model = dm.hinge_fit(pts)
    assert model.knee == k and model.below == pytest.approx(lo) and model.above == pytest.approx(hi)
    assert k < cross(128)
    p = "The best knee is at batch"
    states(ID, f"batch {k}", near=p)
    states(ID, f"{lo * 1e3:.1f} µs per sequence", near=p)
    states(ID, f"{hi * 1e3:.1f} µs per sequence", near=p)
    h = "module.yml"
    states(ID, f"batch {k}", near="two-segment fit", files=h)
    states(ID, f"{lo * 1e3:.1f} us per sequence", near="", files=h)
    states(ID, f"{hi * 1e3:.1f} above", near="", files=h)
    q = "Section 2 predicts a bound that is flat"
    states(ID, ms(W_BYTES / BW, 3), near=q)
    states(ID, us(s_seq(128) / BW), near=q)
    states(ID, us(f_seq(128) / RATE), near=q)
    states(ID, f"batch {cross(128):.0f}", near=q)
    states(ID, f"{len(pts)} batches", near=q)
    states(ID, f"{lo * 1e3:.1f} µs per sequence", near="Below the knee the products")
    states(ID, us(s_seq(128) / BW), near="Below the knee the products")
    states(ID, f"{hi * 1e3 / (f_seq(128) / RATE * 1e6):.2f} times the bound's", near="Above the knee")
    states(ID, us(f_seq(128) / RATE), near="Above the knee")
    states(ID, f"{hi * 1e3:.1f} µs", near="Above the knee")
    # without batch 448
    k2, (_, lo2, hi2) = hinge(pts, exclude=(448,))
    p = "Batch 448 is slower than batch 512"
    assert val("decode_ctx128_b448") > val("decode_ctx128_b512")
    states(ID, f"{val('decode_ctx128_b448') / val('decode_ctx128_b512'):.2f} times longer", near=p)
    states(ID, f"batch {k2}", near=p)
    states(ID, f"{lo2 * 1e3:.1f} and {hi2 * 1e3:.1f} µs", near=p)
    states(ID, f"batch {cross(128):.0f}", near="The bound puts the knee at batch", files="9-self-assessment.md")
    states(ID, f"at {k}", near="The bound puts the knee at batch", files="9-self-assessment.md")
    states(ID, f"batch {k}", near="Predicted at batch", files="cards")
    states(ID, f"batch {cross(128):.0f}", near="Predicted at batch", files="cards")
    states(ID, f"batch {k}", near="Beyond batch", files="6-tradeoffs.md")
    states(ID, f"{hi * 1e3:.1f} µs", near="Beyond batch", files="6-tradeoffs.md")


def test_gemm_rates_at_mid_batch():
    mm = val("mm_bf16")
    pct = {m: val(f"mm_m{m}") / mm for m in (128, 256, 384, 512)}
    p = "Below the knee the products are not flat"
    for m, x in pct.items():
        states(ID, f"{x:.0%}", near=p)
    r1 = rec("mm_m1")
    eff1 = r1["bytes"] / (r1["ms"] * 1e-3)
    states(ID, f"{eff1 / 1e9:,.0f} GB/s", near=p)
    states(ID, f"{eff1 / BW:.0%}", near=p)
    r128 = rec("mm_m128")
    states(ID, f"{r128['bytes'] / (r128['ms'] * 1e-3) / BW:.0%}", near=p)
    h = "module.yml"
    states(ID, f"{pct[128]:.0%} (M = 128)", near="", files=h)
    states(ID, f"{pct[256]:.0%} (M = 256)", near="", files=h)
    states(ID, f"{pct[128]:.0%} at $M$ = 128, {pct[256]:.0%} at 256", near="far from their large-matrix rate", files="9-self-assessment.md")


def test_batch_one_and_the_eager_step():
    r1 = rec("decode_ctx128_b1")
    mm1 = rec("mm_m1")
    eff1 = mm1["bytes"] / (mm1["ms"] * 1e-3)
    weights_at_m1 = W_BYTES / eff1  # the step's weights at the M = 1 streaming rate
    rest = r1["value"] * 1e-3 - weights_at_m1
    p = "The bound at batch 1 is the weights"
    states(ID, f"{r1['ceiling']['value']:.2f} ms", near=p)
    states(ID, f"{eff1 / BW:.0%}", near=p)
    states(ID, ms(weights_at_m1), near=p)
    states(ID, ms(rest), near=p)
    g1 = val("decode_eager_ctx128_b1") - val("decode_ctx128_b1")
    g64 = val("decode_eager_ctx128_b64") - val("decode_ctx128_b64")
    states(ID, f"{g64:.2f} ms slower", near=p)
    states(ID, f"{g1:.2f} ms", near=p)
    assert f"{r1['value'] / r1['ceiling']['value']:.2f}" == "1.76"
    states(ID, f"{g1:.2f} ms", near="Replaying a captured graph removes")
    states(ID, f"{g1:.2f} ms at batch 1 and {g64:.2f} ms at batch 64", near="Into the host")
    states(ID, f"{r1['value'] / r1['ceiling']['value']:.2f} times the bound here", near="launch- and")
    states(ID, f"{val('decode_eager_ctx128_b1'):.1f} ms eager against {val('decode_ctx128_b1'):.2f} ms", near="hundreds of small kernels", files="cards")


def test_long_context():
    a, b = rec("decode_ctx1024_b1"), rec("decode_ctx1024_b192")
    p = "At a 1,024-token context each sequence reads"
    states(ID, f"{1024 * KV_TOK / 1e6:.0f} MB", near=p)
    states(ID, f"{(b['value'] - a['value']) / 191 * 1e3:.1f} µs per sequence", near=p)
    states(ID, us(s_seq(1024) / BW), near=p)


def test_prefill_table_and_rates():
    tps = {}
    for t in (32, 128, 512, 2048, 8192):
        r = rec(f"prefill_t{t}")
        cells = row("5-performance.md", f"{t:,}", after="Prefill of one prompt, launched eagerly")
        assert cells[2] == f"{r['ceiling']['value']:.2f} ms"
        tps[t] = t / r["value"] * 1e3
        assert cells[3] == f"{tps[t]:,.0f}"
    p = "A short prompt costs what a launch-bound pass costs"
    assert val("prefill_t128") / val("prefill_t32") - 1 < 0.03
    states(ID, "within 3%", near=p)
    r = rec("prefill_t8192")
    states(ID, f"{r['ceiling']['value'] / r['value']:.0%}", near=p)
    states(ID, f"{tps[2048] * val('decode_ctx128_b1') / 1e3:.0f} times", near=p)
    states(ID, "2,048 times per read", near=p)


def test_cache_pool_and_sequences():
    pool = int((hw.value("h200", "hbm_bytes") - E * P_ALL) // KV_TOK)
    p = "The cache saves"
    states(ID, f"{pool:,} tokens", near=p)
    states(ID, f"{pool // 1024} sequences of 1,024", near=p)
    states(ID, f"{pool // 8192} of 8,192", near=p)
    q = "The weights with the embedding table"
    states(ID, f"{E * P_ALL / 1e9:.1f} GB", near=q)
    states(ID, f"{pool:,}", near=q)


def test_self_assessment_numbers():
    p = "Per layer: $h(32+16)d"
    states(ID, f"{PER_LAYER:,}", near=p)
    states(ID, f"{P_READ:,}", near=p)
    states(ID, f"{W_BYTES:,}", near=p)
    states(ID, ms(W_BYTES / BW, 3), near=p)
    q = "$B^* = (W/\\beta) / (f/R - s/\\beta)$"
    states(ID, ms(W_BYTES / BW, 3), near=q)
    states(ID, us(f_seq(128) / RATE), near=q)
    states(ID, us(s_seq(128) / BW), near=q)
    states(ID, f"{cross(128):.1f}", near=q)
    states(ID, f"{RATE / BW:.0f}", near=q)
    states(ID, f"{KV_TOK:,} bytes", near="KV heads). The weights")
    # TTFT vs decode
    n = 255 * val("decode_ctx128_b1") * 1e-3
    r = "TTFT is the prefill"
    states(ID, f"{n:.2f} s", near=r)
    states(ID, f"{n / (val('prefill_t2048') * 1e-3):.0f} times", near=r)
    assert 2048 // 256 == 8
    c = "Each cached position adds"
    states(ID, f"{KV_TOK:,} bytes", near=c)
    states(ID, f"{ATT_PAIR:,} FLOP", near=c)
    states(ID, us(s_seq(1024) / BW), near=c)
    states(ID, us(f_seq(1024) / RATE), near=c)
    states(ID, f"{f_seq(1024) / s_seq(1024):.1f} FLOP per byte", near=c)
    d = "Count: "
    states(ID, f"{W_BYTES / 1e9:.1f} GB", near=d)
    states(ID, f"{s_seq(128) / 1e6:.1f} MB", near=d)
    states(ID, f"batch {cross(128):.0f}", near=d)
    states(ID, f"{RATE / BW:.0f} for the weights alone", near=d)


def test_cards():
    f = "cards"
    states(ID, f"{KV_TOK:,} bytes", near="2 (K and V) x 32 layers", files=f)
    states(ID, f"{W_BYTES / 1e9:.1f} GB", near="About 15", files=f)
    states(ID, f"{P_READ:,}", near="About 15", files=f)
    states(ID, f"{W_BYTES / BW * 1e3:.2f} ms", near="About 15", files=f)
    states(ID, f"{RATE / BW:.0f}", near="Predicted at batch", files=f)
    states(ID, f"{KV_TOK:,} bytes", near="Each sequence reads its own KV cache", files=f)
    states(ID, f"{ATT_PAIR:,} FLOP", near="Each sequence reads its own KV cache", files=f)
    t1, t512 = val("decode_ctx128_b1"), val("decode_ctx128_b512")
    states(ID, f"{t512 / t1:.2f} times", near="Each user pays in TPOT", files=f)
    states(ID, f"{512 * t1 / t512:.0f} times", near="Each user pays in TPOT", files=f)


def test_never_typed_measurements_in_sections():
    """The measured step times appear on the module's pages only through placeholders."""
    for name, text in sources(ID).items():
        for v in ("decode_ctx128_b1", "decode_ctx128_b512", "prefill_t2048", "decode_ctx128_b448"):
            typed = f"{val(v):.2f} ms" if val(v) < 10 else f"{val(v):.1f} ms"
            assert typed not in text, f"{name} types the measured {typed}"


def test_remaining_derived_numbers():
    states(ID, f"{HQ // HKV} query heads share each KV head", near="Grouped-query attention [@ainslie-gqa-2023] lets")
    def pf_flops(t):
        return 2 * (N_MAT - V * H) * t + 2 * V * H + ATT_PAIR * (t * t - t * (t - 1) // 2)

    def pf_bytes(t):  # weights, the prompt's embedding rows, its cache written, every token's activations
        return E * (P_READ + t * H + (KV_TOK // E) * t + t * (ACT - H - V) + H + V)
    for t in (32, 128, 512, 2048, 8192):
        assert rec(f"prefill_t{t}")["bytes"] == pf_bytes(t) and rec(f"prefill_t{t}")["flops"] == pf_flops(t)
    t_star = next(t for t in range(1, 8193) if pf_flops(t) / RATE > pf_bytes(t) / BW)
    assert rec("prefill_t128")["note"].startswith("memory") and rec("prefill_t512")["note"].startswith("compute")
    assert 128 < t_star < 512
    states(ID, f"{t_star} tokens or more", near="**Prefill.**")
    states(ID, f"ridge point, {RATE / BW:.0f}", near="**Prefill.**")
    r = rec("prefill_t128")
    states(ID, f"{r['flops'] / r['bytes']:.0f} FLOP per byte at $T$ = 128", near="**Prefill.**")
    p = "The ridge point of these two roofs is"
    states(ID, f"{RATE / BW:.0f} FLOP per byte", near=p)
    states(ID, f"{hw.peak('h200', 'bf16') / hw.value('h200', 'hbm_bw'):.0f} FLOP per byte", near=p)
    states(ID, f"{hw.peak('mi300x', 'bf16') / hw.value('mi300x', 'hbm_bw'):.0f}", near=p)
    states(ID, f"batch {RATE / BW:.0f}", near=p)
    states(ID, f"batch {cross(128):.0f}", near=p)
    r1 = rec("decode_ctx128_b1")
    states(ID, f"{r1['value'] / r1['ceiling']['value']:.2f} times its bound", near="Why batch 1 takes")
    states(ID, f"{r1['value'] / r1['ceiling']['value']:.2f} times the bound here", near="launch- and")
    k, (_, _, hi) = hinge(decode_pts(128))
    d = "Expect the measurement to bend earlier"
    states(ID, f"batch {round(k, -1)}", near=d)
    states(ID, f"about {hi * 1e3:.0f} µs", near=d)
    states(ID, f"bound's {f_seq(128) / RATE * 1e6:.0f}", near=d)
    c_star = (2 * N_MAT / RATE - E * (H + KV_TOK // E + ACT) / BW) / (KV_TOK / BW - ATT_PAIR / RATE)
    states(ID, f"about {c_star:.0f} tokens", near="Each sequence reads its own KV cache", files="cards")
    states(ID, "a quarter of its multi-head size", near="Grouped-query attention, which Llama 3.1 uses")
    assert HKV / HQ == 0.25


def test_silicon_hardware_rows_are_the_hardware_table():
    def cells(first):
        return row("3-silicon.md", first)
    assert cells("compute units")[1].startswith(f"{hw.value('h200', 'units'):.0f} SMs")
    assert cells("compute units")[2].startswith(f"{hw.value('mi300x', 'units'):.0f} CUs")
    assert cells("HBM capacity")[1].startswith(f"{hw.value('h200', 'hbm_bytes') / 1e9:.0f} GB")
    assert cells("HBM capacity")[2].startswith(f"{hw.value('mi300x', 'hbm_bytes') / 1e9:.0f} GB")
    assert cells("HBM bandwidth, datasheet")[1].startswith(f"{hw.value('h200', 'hbm_bw') / 1e12:.1f} TB/s")
    assert cells("HBM bandwidth, datasheet")[2].startswith(f"{hw.value('mi300x', 'hbm_bw') / 1e12:.1f} TB/s")
    assert cells("dense bf16, datasheet")[1].startswith(f"{hw.peak('h200', 'bf16') / 1e12:,.1f} TFLOP/s")
    assert cells("dense bf16, datasheet")[2].startswith(f"{hw.peak('mi300x', 'bf16') / 1e12:,.1f} TFLOP/s")
    assert cells("threads a matrix instruction spans")[2].startswith(f"a wavefront of {hw.value('mi300x', 'lanes'):.0f} lanes")
