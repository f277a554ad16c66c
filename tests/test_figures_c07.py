"""Figures of module C07: each is drawn from the course as the site draws it, parsed, and checked against the
sizing model (tutor_build/models/serving.py), so a figure that drifts from the model, or a model change the
figures do not follow, fails here."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from svgparse import ROOT, draw, module_fixtures, placed, texts
from tutor_build.figures import c07
from tutor_build.models import hardware
from tutor_build.models import serving as sv

NS = {"s": "http://www.w3.org/2000/svg"}

module, figs = module_fixtures("C07")


def titled_rects(root: ET.Element) -> dict[str, dict]:
    """Rects with a <title> 'name: value unit', keyed by name (in drawing order within the dict)."""
    out = {}
    for r in root.iter("{http://www.w3.org/2000/svg}rect"):
        t = r.find("s:title", NS)
        if t is None:
            continue
        name, _, value = t.text.rpartition(": ")
        out[name] = {"x": float(r.get("x")), "y": float(r.get("y")), "w": float(r.get("width")),
                     "h": float(r.get("height")), "cls": r.get("class"), "value": value}
    return out


def ms(value: str) -> float:
    assert value.endswith(" ms"), value
    return float(value[:-3]) / 1e3


# ---------------------------------------------------------------- placement


def test_every_figure_is_placed_in_the_section_it_explains(module, figs):
    where = placed(module)
    assert where == {"kitchen-round": 1, "hbm-budget": 2, "decode-terms": 2, "context-bounds": 3,
                     "latency-throughput": 6}
    assert set(figs) == set(where)
    for f in figs.values():
        assert f.alt.strip() and f.caption.strip()
        draw(figs, f.id)  # parses as XML


# ---------------------------------------------------------------- kitchen-round (section 1)


def test_kitchen_rounds_are_the_models_decode_steps(figs):
    root = draw(figs, "kitchen-round")
    s = sv.SCENARIO
    batches = [1, sv.gemm_crossover_batch(s), sv.slo_batch(s), sv.kv_pool_tokens(s) / s.context]
    labels = [t for t in texts(root) if "diner" in t and "(" not in t]
    assert [int(re.match(r"\d+", t).group()) for t in labels] == [round(b) for b in batches]
    assert labels[2].endswith("promise reached") and labels[3].endswith("room full")
    # one horizontal scale for every bar: pixels per second is the same everywhere
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("s:title", NS) is not None]
    assert len(rects) == 3 * len(batches)
    per_s: list[tuple[float, float]] = []
    for i, b in enumerate(batches):
        st = sv.step(s, b)
        long_, short, read = rects[3 * i: 3 * i + 3]
        want_long = ("shelf walk" if st.weight_read_s >= st.gemm_compute_s else "cooking")
        assert long_.find("s:title", NS).text.startswith(want_long)
        for r, t in ((long_, st.gemm_s), (short, min(st.weight_read_s, st.gemm_compute_s)), (read, st.attn_s)):
            assert ms(r.find("s:title", NS).text.rpartition(": ")[2]) == pytest.approx(t, abs=6e-6)
            per_s.append((float(r.get("width")), t))
        # the reading starts where the longer of walk and cooking ends
        assert float(read.get("x")) == pytest.approx(float(long_.get("x")) + float(long_.get("width")), abs=0.01)
    scale = max(per_s, key=lambda wt: wt[1])
    for w, t in per_s:
        assert w == pytest.approx(t * scale[0] / scale[1], abs=0.02)
    shares = [t for t in texts(root) if t.endswith("%")]
    assert shares == [f"{sv.step(s, b).total_s / s.slo_s:.0%}" for b in batches]
    assert shares[2] == "100%" and int(shares[3][:-1]) > 100  # the promise breaks before the room is full


# ---------------------------------------------------------------- hbm-budget (section 2)


@pytest.mark.parametrize("prec, scen", [("bf16", sv.SCENARIO), ("fp8", sv.SCENARIO_FP8)])
def test_hbm_bars_are_the_models_budget_of_one_gpu(figs, prec, scen):
    root = draw(figs, "hbm-budget")
    n, hbm = scen.n_gpus, scen.gpu.hbm_bytes
    kv_tok = sv.kv_bytes_per_token(scen.model, scen.kv_bytes)
    want = {  # recomputed here from the model's public functions, per GPU
        "weights": sv.weight_bytes_resident(scen) / n,
        "KV read each step": sv.slo_tokens(scen) * kv_tok / n,
        "KV pool, unread": (sv.kv_pool_tokens(scen) - sv.slo_tokens(scen)) * kv_tok / n,
        "outside vLLM's share": (1 - scen.mem_util) * hbm,
    }
    assert sv.size(scen).binds == "latency"
    assert sum(want.values()) == pytest.approx(hbm, rel=1e-6)
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("s:title", NS) is not None]
    bar = {0: rects[:4], 1: rects[4:8]}[("bf16", "fp8").index(prec)]
    names = [r.find("s:title", NS).text.rpartition(": ")[0] for r in bar]
    assert names == list(want)
    total_h = sum(float(r.get("height")) for r in bar)
    y = float(bar[0].get("y")) + float(bar[0].get("height"))  # stacked from the bottom, no gaps
    for r, (name, b) in zip(bar, want.items()):
        assert float(r.get("y")) + float(r.get("height")) == pytest.approx(y, abs=0.01)
        y = float(r.get("y"))
        assert float(r.get("height")) / total_h == pytest.approx(b / hbm, abs=0.002), name
        assert r.find("s:title", NS).text.endswith(f"{b / 1e9:.1f} GB")
    assert f"{sv.slo_tokens(scen) / 1e6:.2f} M tokens" in texts(root)


def test_hbm_alt_text_states_the_models_numbers(figs):
    alt = figs["hbm-budget"].alt
    for prec in ("bf16", "fp8"):
        for _, b in c07.hbm_segments(prec):
            assert f"{b / 1e9:.1f} GB" in alt
    for scen in (sv.SCENARIO, sv.SCENARIO_FP8):
        assert f"{sv.slo_tokens(scen) / 1e6:.2f} million tokens" in alt
    assert "that a 30 ms step cannot read" in alt and "outside vLLM's 90%" in alt


def test_hbm_budget_says_what_vllms_share_holds(figs):
    """vLLM's gpu_memory_utilization is the budget of its whole model executor, activations included: the band
    outside it is other processes and the driver, not activations, and the pool drawn is an upper bound."""
    spec = figs["hbm-budget"]
    words = texts(draw(figs, "hbm-budget"))
    s = sv.SCENARIO
    assert f"outside vLLM's {s.mem_util:.0%} (other processes, driver)" in words
    assert "KV that fits but a 30 ms step cannot read" in words
    assert not any("activation" in w or "headroom" in w for w in words)
    cap = spec.caption
    assert "upper bound" in cap and "activations" in cap and "other processes and the driver" in cap
    assert f"{1 - s.mem_util:.0%} outside the {s.mem_util:.0%}" in cap
    # latency binds while the executor's own buffers stay under the part of the pool no step reads
    unread = dict(c07.hbm_segments("bf16"))["KV pool, unread"]
    assert f"{unread / 1e9:.1f} GB per GPU in bf16 that no step reads" in cap
    assert unread == pytest.approx((sv.kv_pool_tokens(s) - sv.slo_tokens(s)) * sv.kv_bytes_per_token(s.model, s.kv_bytes)
                                   / s.n_gpus, rel=1e-5)


# ---------------------------------------------------------------- decode-terms (section 2)


@pytest.mark.parametrize("panel, scen", [(0, sv.SCENARIO), (1, sv.SCENARIO_FP8)])
def test_decode_terms_are_the_models_roofline_terms(figs, panel, scen):
    root = draw(figs, "decode-terms")
    st = sv.step(scen, sv.slo_batch(scen))
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("s:title", NS) is not None]
    mine = rects[6 * panel: 6 * panel + 6]
    want = [("weight GEMMs, bytes / bandwidth", st.weight_read_s, st.gemm_bound == "memory"),
            ("weight GEMMs, FLOP / FLOP/s", st.gemm_compute_s, st.gemm_bound == "compute"),
            ("attention over the KV cache, bytes / bandwidth", st.attn_read_s, st.attn_bound == "memory"),
            ("attention over the KV cache, FLOP / FLOP/s", st.attn_compute_s, st.attn_bound == "compute"),
            ("step, weight GEMMs", st.gemm_s, True), ("step, attention", st.attn_s, True)]
    x0 = float(mine[0].get("x"))
    per_s = float(mine[2].get("width")) / st.attn_read_s
    for r, (name, t, solid) in zip(mine, want):
        title = r.find("s:title", NS).text
        assert title.rpartition(": ")[0] == name
        assert ms(title.rpartition(": ")[2]) == pytest.approx(t, abs=6e-6)
        assert float(r.get("width")) == pytest.approx(max(t * per_s, 1.5), abs=0.02), name
        assert ("fi-bg" not in r.get("class")) == solid, name  # the shorter term of a group is hollow
    # decode stays memory-bound where it matters: attention reads, in either format
    assert st.attn_bound == "memory"
    assert st.total_s == pytest.approx(scen.slo_s)
    assert float(mine[5].get("x")) + float(mine[5].get("width")) == pytest.approx(x0 + scen.slo_s * per_s, abs=0.02)
    assert f"batch {sv.slo_batch(scen):,.1f}" in " ".join(texts(root))


# ---------------------------------------------------------------- context-bounds (section 3)


def test_context_curves_are_the_models_pool_and_slo_cap(figs):
    spec = figs["context-bounds"]
    root = draw(figs, "context-bounds")
    prec, gpus = spec.args["precision"], spec.args["gpus"]
    y_max = c07.concurrency_y_max(prec, gpus)
    lines = list(root.iter("{http://www.w3.org/2000/svg}polyline"))
    assert len(lines) == 2 * len(gpus)
    for p, gpu in enumerate(gpus):
        s = c07.scenario(prec, gpu)
        sx, sy = c07.concurrency_scales(p, y_max)
        for k, line in enumerate(lines[2 * p: 2 * p + 2]):
            pts = [tuple(map(float, xy.split(","))) for xy in line.get("points").split()]
            assert len(pts) > 20
            for px, py in pts:
                cx = 10 ** (math.log10(sx.lo) + (px - sx.a) / (sx.b - sx.a) * (math.log10(sx.hi) - math.log10(sx.lo)))
                tokens = sy.lo + (py - sy.a) / (sy.b - sy.a) * (sy.hi - sy.lo)
                want = sv.kv_pool_tokens(s) if k == 0 else sv.slo_batch(s.with_(context=cx)) * cx
                assert tokens == pytest.approx(want, rel=2e-3, abs=2e3), (gpu, k, cx)
    words = " ".join(texts(root))
    h200 = c07.scenario(prec, "h200")
    flip = sv.context_where_binding_flips(h200)
    assert flip is not None and f"{flip:,.0f}" in words
    assert sv.context_where_binding_flips(c07.scenario(prec, "mi300x")) is None
    assert "latency binds at every context" in words
    pool_b, slo_b = sv.kv_pool_tokens(h200) / h200.context, sv.slo_batch(h200)
    assert f"{round(pool_b)} sequences fit, {round(slo_b)} meet the SLO" in words
    assert f"{flip:,.0f}" in spec.caption and f"{round(pool_b)} sequences" in spec.caption


def test_kitchen_and_decode_alt_texts_state_the_models_numbers(figs):
    s, f = sv.SCENARIO, sv.SCENARIO_FP8
    alt = figs["kitchen-round"].alt
    for _, b in c07.kitchen_rows():
        assert f"{round(b)}" in alt
    assert f"{sv.step(s, sv.kv_pool_tokens(s) / s.context).total_s / s.slo_s:.0%}" in alt
    alt = figs["decode-terms"].alt
    for scen in (s, f):
        st = sv.step(scen, sv.slo_batch(scen))
        assert f"{sv.slo_batch(scen):,.1f}" in alt
        for t in (st.weight_read_s, st.gemm_compute_s, st.attn_read_s, st.attn_compute_s):
            assert f"{t * 1e3:.2f}" in alt


# ---------------------------------------------------------------- one meaning per colour, across the module


def fills(root: ET.Element) -> list[tuple[str, str]]:
    """(fill class, title) of every titled rect, and (stroke class, "curve") of every polyline."""
    out = []
    for r in root.iter("{http://www.w3.org/2000/svg}rect"):
        t = r.find("s:title", NS)
        if t is not None:
            cls = r.get("class").split()
            fill = cls[0][3:] if cls[0] != "fi-bg" else cls[1][3:]  # a hollow rect shows its stroke
            out.append((fill, t.text))
    return out


def test_each_colour_means_one_thing_in_the_module(figs):
    meaning = {c07.C_WEIGHTS: "weights", c07.C_KV_READ: "KV read", c07.C_KV_POOL: "KV pool", c07.C_FLOP: "FLOP"}
    assert len(set(meaning)) == 4

    def concept(title: str) -> str | None:
        name = title.rpartition(": ")[0].lower()
        if name.startswith("step, "):
            return None  # the step's parts take the colour of the longer term: checked below
        if "shelf walk" in name or name == "weights" or ("weight gemms" in name and "bytes" in name):
            return "weights"
        if "notebooks" in name or name == "kv read each step" or ("attention" in name and "bytes" in name):
            return "KV read"
        if name == "kv pool, unread":
            return "KV pool"
        if "cooking" in name or "flop" in name:
            return "FLOP"
        return None

    seen: dict[str, set[str]] = {}
    for fig_id in ("kitchen-round", "hbm-budget", "decode-terms"):
        for fill, title in fills(draw(figs, fig_id)):
            k = concept(title)
            if k is not None:
                seen.setdefault(fill, set()).add(k)
                assert meaning.get(fill) == k, (fig_id, title, fill)
    assert set(seen) == set(meaning)  # every colour is used, each for its one thing
    # the legends say the same: each swatch (an untitled 16-unit square) is followed by its label
    legend_concept = {"shelf walk": "weights", "weights": "weights", "cooking": "FLOP", "flop": "FLOP",
                      "notebooks": "KV read", "kv a 30 ms step reads": "KV read", "kv cache ÷": "KV read",
                      "slo cap": "KV read", "kv that fits": "KV pool", "kv pool": "KV pool"}
    swatches = 0
    for fig_id in ("kitchen-round", "hbm-budget", "decode-terms", "context-bounds"):
        els = list(draw(figs, fig_id).iter())
        for k, el in enumerate(els):
            if el.tag.endswith("rect") and el.get("width") == "16" and el.find("s:title", NS) is None:
                label = next(e.text for e in els[k + 1:] if e.tag.endswith("text")).lower()
                cls = el.get("class").split()
                colour = cls[0][3:] if cls[0] != "fi-bg" else cls[1][3:]
                if colour in ("grid", "muted"):
                    continue
                want = next(v for key, v in legend_concept.items() if label.startswith(key) or key in label)
                assert meaning[colour] == want, (fig_id, label, colour)
                swatches += 1
    assert swatches == 3 + 3 + 3
    # C07.4 keys its curves with line samples: the pool's is dashed, as its curve is
    root = draw(figs, "context-bounds")
    els = list(root.iter())
    keys = {}
    for k, el in enumerate(els):
        if el.tag == "{http://www.w3.org/2000/svg}line" and el.get("stroke-width") == "3":
            label = next(e.text for e in els[k + 1:] if e.tag.endswith("text")).lower()
            keys[label] = (el.get("class")[3:], el.get("stroke-dasharray"))
    assert keys == {"kv pool: what hbm holds": (c07.C_KV_POOL, c07.POOL_DASH),
                    "slo cap: what a 30 ms step reads": (c07.C_KV_READ, None)}
    curves = [(pl.get("class").split()[0][3:], pl.get("stroke-dasharray")) for pl in root.iter("{http://www.w3.org/2000/svg}polyline")]
    assert curves == list(keys.values()) * 2
    # the step bars of C07.3: GEMM compute (the longer GEMM term at the SLO batch) and KV reads
    root = draw(figs, "decode-terms")
    steps = [(f, t) for f, t in fills(root) if t.startswith("step, ")]
    assert [f for f, _ in steps] == [c07.C_FLOP, c07.C_KV_READ] * 2


def test_node_names_use_the_multiplication_sign(figs):
    words = texts(draw(figs, "context-bounds"))
    assert "8× H200, bf16" in words and "8× MI300X, bf16" in words
    assert not any(re.search(r"\d+x ", w) for fig in figs for w in texts(draw(figs, fig)))


# ---------------------------------------------------------------- section 6: latency-throughput


def test_latency_throughput_points_are_the_models_slo_batches(figs):
    """Each format's marked point at 30 ms is the sizing model's SLO batch at the efficiency the kv_read
    record gives (achieved over the datasheet bandwidth), with the ring all-reduces charged."""
    from tutor_build.measurements import records

    rec = records(ROOT)[sv.ETA_RECORD]
    eta = rec["value"] * 1e9 / hardware.value("h200", "hbm_bw")
    root = draw(figs, "latency-throughput")
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    for key, label, _ in c07.LT_VARIANTS:
        s = sv.VARIANTS[key].with_(bw_eff=eta, link_bw=hardware.value("h200", "link_bw"))
        b = sv.slo_batch(s)
        assert f"{label}: batch {b:,.1f}, {b / 0.030:,.0f} tokens/s at 30 ms" in titles
    curves = c07.latency_throughput_curves()
    for key, cur in curves.items():
        ts = [t for _, t, _ in cur]
        assert ts == sorted(ts)  # the step grows with the batch
        assert all(abs(v - b / t) < 1e-6 * v for b, t, v in cur)
    # weight-only fp8 meets bf16 at the SLO: the GEMMs are compute-bound there
    assert sv.slo_batch(sv.with_node_costs(sv.SCENARIO_WO8, eta)) == sv.slo_batch(sv.with_node_costs(sv.SCENARIO, eta))
