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
    assert 256 < b < 288  # the records' verdict flips between those batches
    assert rec("decode_ctx128_b256")["note"].startswith("memory") and rec("decode_ctx128_b288")["note"].startswith("compute")
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
        assert row("3-silicon.md", "KV pool for Llama 3.1 8B in bf16, all HBM but the weights (an estimate: no runtime reserve)")[col].startswith(f"{pool:,} tokens")
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


def kernel_terms(batch: int, ctx: int) -> list[tuple[int, int]]:
    """(bytes, FLOP) of each kernel of a decode step, written out here: 4 products a layer and the head
    (weights, input and output once), attention a layer (cache read, pairs x 4 x heads x d), the rest."""
    shapes = [((HQ + 2 * HKV) * D, H), (H, HQ * D), (2 * M, H), (H, M)]
    out = [(E * (n * k + batch * (n + k)), 2 * batch * n * k) for n, k in shapes for _ in range(L)]
    out.append((E * (V * H + batch * (V + H)), 2 * batch * V * H))
    att_b = E * batch * 2 * HKV * D * ctx  # one layer's cached keys and values of every sequence
    out += [(att_b, 4 * batch * HQ * D * ctx) for _ in range(L)]
    total_b = E * (P_READ + batch * (H + 2 * L * HKV * D * (ctx + 1) + ACT))
    total_f = batch * f_seq(ctx)
    out.append((total_b - sum(x for x, _ in out), total_f - sum(y for _, y in out)))
    return out


def kernel_bound(batch: int, ctx: int = 128) -> float:
    return sum(max(b / BW, f / RATE) for b, f in kernel_terms(batch, ctx))


def sse_at(pts, k):
    bs = np.array([p[0] for p in pts], float)
    ts = np.array([p[1] for p in pts], float)
    A = np.stack([np.ones_like(bs), np.minimum(bs, k), np.maximum(bs - k, 0)], 1)
    c, *_ = np.linalg.lstsq(A, ts, rcond=None)
    return float(((A @ c - ts) ** 2).sum())


def f95(dof: int) -> float:
    """95% quantile of F(1, dof): the square of Student's t at 0.975, found by integrating t's density."""
    x = np.linspace(0, 60, 600001)
    pdf = (1 + x * x / dof) ** (-(dof + 1) / 2)
    cdf = np.concatenate([[0], np.cumsum((pdf[1:] + pdf[:-1]) / 2 * np.diff(x))])
    cdf /= cdf[-1] * 2  # the half above 0; the tail beyond 60 is negligible
    return float(np.interp(0.475, cdf, x)) ** 2


def profile(pts):
    """95% profile interval of the knee on a half-batch grid: SSE(k) <= SSE_min (1 + F(1, n-4) / (n-4))."""
    bs = sorted(p[0] for p in pts)
    grid = np.arange(bs[1], bs[-2] + 1e-9, 0.5)
    sse = np.array([sse_at(pts, k) for k in grid])
    n = len(pts)
    ok = grid[sse <= sse.min() * (1 + f95(n - 4) / (n - 4))]
    return float(ok.min()), float(ok.max())


def test_kernel_bound_is_the_records_and_bends_near_205():
    pts = decode_pts(128)
    for b, _ in pts:
        r = rec(f"decode_bound_kernels_ctx128_b{b}")
        assert r["value"] == val(f"decode_ctx128_b{b}")  # the same measured step
        assert r["ceiling"]["value"] == pytest.approx(kernel_bound(b) * 1e3, rel=1e-9)
        assert dm.kernel_bound_ms(b, 128, BW, RATE) == pytest.approx(kernel_bound(b) * 1e3, rel=1e-9)
        assert kernel_bound(b) * 1e3 >= rec(f"decode_ctx128_b{b}")["ceiling"]["value"] - 1e-9
    kpts = [(b, kernel_bound(b) * 1e3) for b, _ in pts]
    kk, (_, _, khi) = hinge(kpts)
    assert dm.hinge_fit(kpts).knee == kk
    p = "The **kernel-by-kernel bound** sums"
    states(ID, f"batch {kk}", near=p)
    states(ID, f"{khi * 1e3:.1f} µs", near=p)
    for name, (n, k) in {"QKV": ((HQ + 2 * HKV) * D, H), "output": (H, HQ * D), "gate-up": (2 * M, H),
                         "down": (H, M), "head": (V, H)}.items():
        m = E * n * k / BW / (2 * n * k / RATE - E * (n + k) / BW)
        states(ID, f"{m:.0f} ({name})", near=p)
    assert kk < cross(128)
    states(ID, f"batch {kk}", near="kernel-by-kernel bound", files="module.yml")
    states(ID, f"batch {cross(128):.0f}", near="whole-step bound", files="module.yml")


def test_the_knee_and_its_uncertainty():
    pts = decode_pts(128)
    assert len(pts) == 18
    k, (a, lo, hi) = hinge(pts)
    model = dm.hinge_fit(pts)
    assert model.knee == k and model.below == pytest.approx(lo) and model.above == pytest.approx(hi)
    p = "The best knee is at batch"
    states(ID, f"batch {k}", near=p)
    states(ID, f"{lo * 1e3:.1f} µs per sequence", near=p)
    states(ID, f"{hi * 1e3:.1f} µs per sequence", near=p)
    plo, phi = profile(pts)
    assert (plo, phi) == dm.profile_interval(pts)
    states(ID, f"batch {plo:.0f} to {phi:.0f}", near=p)
    # the all-points interval holds both bounds' knees: the page must not claim the knee is before them
    kk = hinge([(b, kernel_bound(b) * 1e3) for b, _ in pts])[0]
    assert plo < kk < phi and plo < cross(128) < phi
    boot = dm.bootstrap_knees(pts)
    states(ID, f"between {dm.percentile(boot, 0.05):.0f} and {dm.percentile(boot, 0.95):.0f}", near=p)
    assert dm.percentile(boot, 0.05) < k < dm.percentile(boot, 0.95)
    k512 = hinge([x for x in pts if x[0] != 512])[0]
    states(ID, f"to {k512}", near=p)
    h = "module.yml"
    states(ID, f"{k} with all {len(pts)} points", near="two-segment fit", files=h)
    states(ID, f"{lo * 1e3:.1f} us per sequence", near="", files=h)
    states(ID, f"{hi * 1e3:.1f} above", near="", files=h)
    states(ID, f"{plo:.0f} to {phi:.0f}", near="", files=h)
    q = "Two bounds predict where the step bends"
    states(ID, ms(W_BYTES / BW, 3), near=q)
    states(ID, us(s_seq(128) / BW), near=q)
    states(ID, us(f_seq(128) / RATE), near=q)
    states(ID, f"batch {cross(128):.0f}", near=q)
    states(ID, f"{len(pts)} batches", near="The best knee is at batch")
    states(ID, f"{lo * 1e3:.1f} µs per sequence", near="Below the knee the products")
    states(ID, us(s_seq(128) / BW), near="Below the knee the products")
    states(ID, f"{hi * 1e3 / (f_seq(128) / RATE * 1e6):.2f} times the whole-step bound's", near="Above the knee")
    states(ID, us(f_seq(128) / RATE), near="Above the knee")
    states(ID, f"{hi * 1e3:.1f} µs", near="Above the knee")


def test_the_knee_without_448_and_the_slow_gate_up():
    pts = decode_pts(128)
    rest = [x for x in pts if x[0] != 448]
    k, (a, lo, hi) = hinge(pts)
    k2, (a2, lo2, hi2) = hinge(rest)
    p = "Batch 448 is slower than batch 512"
    assert val("decode_ctx128_b448") > val("decode_ctx128_b512")
    states(ID, f"{val('decode_ctx128_b448') / val('decode_ctx128_b512'):.2f} times longer", near=p)
    states(ID, f"batch {k2}", near=p)
    states(ID, f"{lo2 * 1e3:.1f} and {hi2 * 1e3:.1f} µs", near=p)
    states(ID, f"{sse_at(rest, k2):.2f} instead of", near=p)
    states(ID, f"instead of {sse_at(pts, k):.1f}", near=p)
    plo, phi = profile(rest)
    states(ID, f"{plo:.0f} to {phi:.0f}", near=p)
    boot = dm.bootstrap_knees(rest)
    states(ID, f"between {dm.percentile(boot, 0.05):.0f} and {dm.percentile(boot, 0.95):.0f}", near=p)
    # without 448 the interval ends before both bounds' knees: the "earlier than both" claim rests on it
    kk = hinge([(b, kernel_bound(b) * 1e3) for b, _ in pts])[0]
    assert phi < kk < cross(128)
    states(ID, f"({kk} and {cross(128):.0f})", near=p)
    states(ID, f"batch {k2} to {k}", near=p)
    states(ID, f"batch {k2} to {k}", near="", files="module.yml")
    states(ID, f"{plo:.0f} to {phi:.0f}", near="153 without batch 448", files="module.yml")
    # which product is slow at 448 rows: the gate-up one, and by about the step's excess
    rates = {n: val(f"linear_{n}_m448") / val(f"linear_{n}_m512") for n in dm.LINEAR_SHAPES}
    assert min(rates, key=rates.get) == "gate_up" and rates["gate_up"] < 0.6
    assert all(r > 0.75 for n, r in rates.items() if n != "gate_up")
    g448, g512 = rec("linear_gate_up_m448")["ms"], rec("linear_gate_up_m512")["ms"]
    states(ID, f"{g448:.3f} ms against {g512:.3f} ms", near=p)
    extra = L * (g448 - g512)
    states(ID, f"{extra:.2f} ms more", near=p)
    resid = val("decode_ctx128_b448") - (a2 + lo2 * min(448, k2) + hi2 * max(448 - k2, 0))
    states(ID, f"{resid:.2f} ms by which", near=p)
    assert abs(resid - extra) / extra < 0.1
    kkpts = hinge([(b, kernel_bound(b) * 1e3) for b, _ in pts])
    states(ID, f"{hi2 * 1e3 / (kkpts[1][2] * 1e3):.2f} times the kernel-by-kernel", near="Above the knee")
    states(ID, f"batch {cross(128):.0f}", near="The whole-step bound puts the knee at batch", files="9-self-assessment.md")
    states(ID, f"at {k}", near="The whole-step bound puts the knee at batch", files="9-self-assessment.md")
    states(ID, f"batch {k2}", near="The whole-step bound puts the knee at batch", files="9-self-assessment.md")
    states(ID, f"batch {k2} to {k}", near="Predicted at batch", files="cards")
    states(ID, f"batch {cross(128):.0f}", near="Predicted at batch", files="cards")
    states(ID, f"batch {kk}", near="Predicted at batch", files="cards")
    states(ID, f"batch {k2} to {k}", near="A strict TPOT target past the knee", files="6-tradeoffs.md")
    states(ID, f"{hi2 * 1e3:.1f} to {hi * 1e3:.1f} µs", near="A strict TPOT target past the knee", files="6-tradeoffs.md")


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
    g = rec("linear_gate_up_m128")
    g = dict(g, flops=2 * 128 * 2 * M * H, bytes=E * (2 * M * H + 128 * (2 * M + H)))
    assert f"{g['flops']} FLOPs, {g['bytes']} bytes" in rec("linear_gate_up_m128")["note"]
    roof = g["flops"] / g["bytes"] * BW
    states(ID, f"{roof / 1e12:.0f} TFLOP/s", near=p)
    states(ID, f"{g['value'] * 1e12 / roof:.0%} of it", near=p)
    states(ID, f"{g['flops'] / g['bytes']:.0f} FLOP per byte", near=p)
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
    states(ID, f"{r1['value'] / r1['ceiling']['value']:.2f} times its bound", near="")
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


def test_kernel_count_and_host_cost():
    n1, n256 = rec("kernels_decode_ctx128_b1"), rec("kernels_decode_ctx128_b256")
    assert n1["value"] == 35 * L + 3 and n256["value"] == 34 * L + 3  # the record's own split per layer
    assert f"{35} per layer" in n1["note"]
    states(ID, f"{int(n1['value']):,} kernels", near="torch.profiler counts", files="3-silicon.md")
    states(ID, f"{int(n256['value']):,} at batch 256", near="torch.profiler counts", files="3-silicon.md")
    states(ID, "about 35 kernels", near="The small kernels matter", files="3-silicon.md")
    states(ID, f"{int(n1['value']):,} kernels", near="The bound at batch 1 is the weights")
    states(ID, f"{int(n1['value']):,} kernels", near="A decode step is", files="2-first-principles.md")
    g1 = val("decode_eager_ctx128_b1") - val("decode_ctx128_b1")
    states(ID, f"about {g1 / n1['value'] * 1e3:.1f} µs per kernel", near="The bound at batch 1 is the weights")


def test_the_bound_sections_name_both_bounds():
    kk = hinge([(b, kernel_bound(b) * 1e3) for b, _ in decode_pts(128)])[0]
    states(ID, f"batch {kk}", near="This whole-step bound is the fully overlapped ideal", files="2-first-principles.md")
    states(ID, f"batch {kk}", near="That is a statement", files="2-first-principles.md")
    states(ID, f"batch {kk}", near="Long contexts.", files="6-tradeoffs.md")
    states(ID, f"batch {kk}", near="Kernel by kernel it does not", files="9-self-assessment.md")
    states(ID, f"batch {kk}", near="Each sequence reads its own KV cache", files="cards")
    shapes = [((HQ + 2 * HKV) * D, H), (H, HQ * D), (2 * M, H), (H, M), (V, H)]
    ms_ = [E * n * k / BW / (2 * n * k / RATE - E * (n + k) / BW) for n, k in shapes]
    states(ID, f"batch {min(ms_):.0f} to {max(ms_):.0f}", near="This whole-step bound is the fully overlapped ideal",
           files="2-first-principles.md")
    b256, b288 = rec("decode_ctx128_b256"), rec("decode_ctx128_b288")
    assert b256["note"].startswith("memory") and b288["note"].startswith("compute")
    states(ID, "batches 256 and 288", near="The predicted crossover", files="2-first-principles.md")
    states(ID, f"{val('decode_ctx128_b512') / val('decode_ctx128_b1'):.2f} times", near="Batching is the lever")
