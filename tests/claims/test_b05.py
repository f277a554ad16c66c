"""Claims of module B05 (collective communication), derived here and read back from the module's text.

One-GPU numbers come from the ring_copies records (H200, CUDA 13.0) and from a byte count of the lab's own
schedule; eight-GPU numbers from the collectives player's alpha-beta model, the hardware table and NCCL's
cited per-step latency. No two-GPU record exists: the test of that state checks that the page says so, and
checks the records instead if a two-GPU run ever adds them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fractions import Fraction

from tests.claims.prose import module_dir, never_states, states
from tutor_build.figures import b05
from tutor_build.measurements import records
from tutor_build.models import collectives as co
from tutor_build.models import hardware as hw

ROOT = Path(__file__).parents[2]
ID = "B05"
RECS = records(ROOT)
PS = (2, 4, 8)
GIB = 2 ** 30


def rec(p: int, k: int) -> dict:
    key = b05.key(p, k)
    if key not in RECS:
        pytest.skip(f"no record {key}")
    return RECS[key]


def b_copy() -> float:
    return rec(2, 30)["ceiling"]["value"]


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


# ---------------------------------------------------------------- the byte count, from the lab's schedule

def hbm_bytes(p: int, n_floats: int) -> int:
    """Bytes of HBM one all-reduce moves in ring_copies: per step and rank, a copy (read + write) of the
    chunk and, in the reduce-scatter, an add (two reads, one write). Chunk bounds as the lab's lo/len."""
    lo = lambda c: n_floats * c // p  # noqa: E731
    ln = lambda c: lo(c + 1) - lo(c)  # noqa: E731
    total = 0
    for s in range(p - 1):
        for r in range(p):
            total += 2 * 4 * ln((r - s) % p)  # the send
            total += 3 * 4 * ln((r - 1 - s) % p)  # the add into the chunk that arrived
    for s in range(p - 1):
        for r in range(p):
            total += 2 * 4 * ln((r + 1 - s) % p)
    return total


@pytest.mark.parametrize("p", PS)
def test_seven_p_minus_one_n(p):
    n = 1 << 20
    assert hbm_bytes(p, n) == 7 * (p - 1) * 4 * n
    assert b05.b_eff_gbps(p, 7.0) == pytest.approx(2.0 / p)


def test_copy_ceiling_stated():
    # one precision everywhere, the one the ceiling placeholder prints
    txt = f"{b_copy():,.0f} GB/s"
    states(ID, txt, near="copy ceiling that is")
    states(ID, txt, near="Setting that equal", files="9-self-assessment.md")
    states(ID, txt, near="copy ceiling of the same run", files="module.yml")
    never_states(ID, f"{b_copy():,.1f}")
    never_states(ID, f"{b_copy():,.1f}", files="module.yml")
    states(ID, "read plus bytes written", near="at the copy bandwidth")


def table_rows() -> dict[int, list[str]]:
    """The rows of section 5's plateau table, by p: each cell as the page writes it."""
    text = (module_dir(ID) / "5-performance.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows[int(cells[0])] = cells
    return rows


@pytest.mark.parametrize("p", PS)
def test_plateau_table_row(p):
    # each number in the row of its own p: a permutation of the rows fails
    row = table_rows()[p]
    assert row[1] == f"{b05.b_eff_gbps(p, b_copy()):.0f} GB/s"
    assert row[2] == f'{{{{ value("{b05.key(p, 30)}") }}}}'
    assert row[3] == pct(rec(p, 30)["value"] / b05.b_eff_gbps(p, b_copy()))


@pytest.mark.parametrize("p", PS)
def test_plateau_predicted(p):
    b = b05.b_eff_gbps(p, b_copy())
    txt = f"{b:.0f} GB/s"
    states(ID, txt, near="which is the plateau bus bandwidth")
    states(ID, txt, near="predicted plateau")
    states(ID, f"{b:.0f}", near="plateau bus bandwidth of 2 B_copy/(7p)", files="module.yml")
    states(ID, f"{b:.0f}", near="bends to a plateau", files="figures.yml")


@pytest.mark.parametrize("p", PS)
def test_share_at_one_gib(p):
    share = rec(p, 30)["value"] / b05.b_eff_gbps(p, b_copy())
    states(ID, pct(share), near="share of the prediction")
    states(ID, pct(share), near="of its predicted plateau", files="module.yml")
    assert 0.85 < share < 1.0


@pytest.mark.parametrize("p", PS)
def test_latency_fit(p):
    k = b05.smallest_full_log2(p)
    assert 2 ** k == 4 * p
    t_us = rec(p, k)["ms"] * 1e3
    states(ID, f"{t_us:.1f} µs", near="whose chunks all hold at least one float")
    states(ID, f"{t_us:.1f} µs", near="The smallest message whose chunks")
    a = t_us / (2 * (p - 1))
    assert a == pytest.approx(b05.alpha_step_us(p, RECS))
    states(ID, f"{a:.3g} µs".replace("9.7 µs", "9.70 µs"), near="fits $\\alpha$ per ring step")
    states(ID, f"{t_us / (3 * p * (p - 1)):.2f} µs", near="per enqueued operation")
    states(ID, f"{t_us:.1f}", near="smallest messages", files="module.yml")
    states(ID, f"{a:.3g}".replace("9.7", "9.70"), near="per ring step", files="module.yml")


def test_latency_per_op_range():
    per_op = [rec(p, b05.smallest_full_log2(p))["ms"] * 1e3 / (3 * p * (p - 1)) for p in PS]
    states(ID, f"{min(per_op):.2f}", near="time per operation stays between")
    states(ID, f"{max(per_op):.2f} µs", near="time per operation stays between")
    for p in PS:
        states(ID, str(3 * p * (p - 1)), near="The number of enqueued operations")


def test_n_half_p2():
    a = b05.alpha_step_us(2, RECS) * 1e-6
    n_half = 2 * a * b05.b_eff_gbps(2, b_copy()) * 1e9
    states(ID, f"{n_half / 1e6:.2f} MB", near="n_{1/2} = p\\alpha B_\\text{eff}")
    assert 2 ** 22 < n_half < 2 ** 23  # the 8 MiB message sits just past it...
    half = rec(2, 23)["value"] / b05.b_eff_gbps(2, b_copy())
    assert 0.45 < half < 0.55  # ...and reaches half the plateau


def test_empty_chunks_trap():
    for p in (4, 8):
        states(ID, f"{rec(p, 3)['ms'] * 1e3:.1f} µs", near="Smaller messages are *faster*")
        assert rec(p, 3)["ms"] < rec(p, b05.smallest_full_log2(p))["ms"]

    def ops(p, n_floats):
        ln = [n_floats * (c + 1) // p - n_floats * c // p for c in range(p)]
        copies_rs = sum(1 for s in range(p - 1) for r in range(p) if ln[(r - s) % p])
        copies_ag = sum(1 for s in range(p - 1) for r in range(p) if ln[(r + 1 - s) % p])
        return copies_rs + copies_ag + p * (p - 1)  # every add launches, empty or not

    assert ops(4, 2) == 24 and ops(4, 4) == 36
    states(ID, f"{ops(4, 2)} instead of {ops(4, 4)}", near="zero-byte copy")
    assert rec(4, 3)["ms"] / rec(4, 4)["ms"] == pytest.approx(ops(4, 2) / ops(4, 4), abs=0.03)


def model_share(p: int, k: int) -> float:
    a, b = b05.alpha_step_us(p, RECS), b05.b_eff_gbps(p, b_copy())
    return rec(p, k)["value"] / b05.model_busbw(p, k, a, b)


@pytest.mark.parametrize("p", PS)
def test_mid_size_gap(p):
    states(ID, pct(model_share(p, 26)), near="At 64 MiB per rank it is")
    # the worst size, by p, as the page names it
    worst = min(range(3, 31), key=lambda k: model_share(p, k))
    mib = f"{2 ** worst >> 20} MiB"
    states(ID, mib, near="The worst size is")
    if p == 2:
        states(ID, f"{mib} per rank for $p = 2$", near="The worst size is")
    else:  # one worst size shared by p = 4 and p = 8
        assert worst == min(range(3, 31), key=lambda k: model_share(12 - p, k))


def test_mid_size_p8_profile():
    names = {20: "1 MiB", 23: "8 MiB", 24: "16 MiB", 25: "32 MiB", 26: "64 MiB", 28: "256 MiB", 30: "1 GiB"}
    for k, name in names.items():
        of = " of it" if k == 20 else ""  # the first of the list: "90% of it at 1 MiB"
        states(ID, f"{pct(model_share(8, k))}{of} at {name}", near="most optimistic at mid sizes")
    never_states(ID, "optimistic by a growing margin")


@pytest.mark.parametrize("p", PS)
def test_one_gib_gap_against_full_model(p):
    # the gap at 1 GiB, against the full model (alpha included): the launches are in the model already
    a, b = b05.alpha_step_us(p, RECS), b05.b_eff_gbps(p, b_copy())
    full = b05.model_busbw(p, 30, a, b)
    near = "The full model, latency included"
    states(ID, f"{full:.1f}", near=near)
    states(ID, f"{100 * rec(p, 30)['value'] / full:.1f}%", near=near)
    states(ID, f"{100 * (1 - full / b):.1f}", near=near)
    never_states(ID, "the launches between steps")


def test_gap_range():
    gaps = [1 - rec(p, 30)["value"] / b05.b_eff_gbps(p, b_copy()) for p in PS]
    states(ID, f"{100 * min(gaps):.0f} to {100 * max(gaps):.0f}%", near="The records sit")


def test_one_kib_dip_p8():
    t = {k: rec(8, k)["ms"] * 1e3 for k in range(5, 14)}
    others = [v for k, v in t.items() if k != 10]
    assert t[10] > 1.2 * max(others)  # the one record off the flat latency end
    near = "One record does not fit the flat latency end"
    states(ID, f"{t[10]:.1f} µs", near=near)
    states(ID, f"{min(others):.1f} to {max(others):.1f} µs", near=near)


def test_intensity_and_ridges():
    # one fp32 add per element of each reduce-scatter chunk, over the bytes the lab's schedule moves
    p, n = 4, 1 << 20
    flop = (p - 1) * p * (n // p)  # p - 1 steps, p ranks, n/p elements each
    ai = Fraction(flop, hbm_bytes(p, n))
    assert ai.denominator == 28 and ai.numerator == 1
    states(ID, f"{float(ai):.3f}", near="arithmetic intensity is therefore")
    states(ID, f"{hw.peak('h200', 'fp32') / hw.value('h200', 'hbm_bw'):.1f} FLOP per byte", near="ridge point of the H200")
    states(ID, f"{hw.peak('mi300x', 'fp32') / hw.value('mi300x', 'hbm_bw'):.1f} FLOP per byte", near="ridge point of the H200")


# ---------------------------------------------------------------- eight GPUs, predicted

def link(g):
    return b05.predicted_8gpu_link_gbps(g)


def test_link_rates_from_table():
    assert link("h200") == hw.value("h200", "link_bw") / 1e9
    assert link("mi300x") == 7 * hw.value("mi300x", "link_bw") / 1e9
    states(ID, f"{link('mi300x'):.0f} GB/s", near="7 × 64")
    states(ID, f"{100 * (1 - link('mi300x') / link('h200')):.1f}%", near="within")


def test_model_is_the_players():
    out = co.compute({"gpus": 8, "log2_bytes": 30, "alpha_us": b05.ALPHA_RING_SIMPLE_US, "link_gbps": link("h200")})
    t = 2 * 7 * b05.ALPHA_RING_SIMPLE_US * 1e-6 + 2 * 7 / 8 * GIB / (link("h200") * 1e9)
    assert out["time_s"] == pytest.approx(t)


@pytest.mark.parametrize("g,name", [("h200", "H200"), ("mi300x", "MI300X")])
def test_eight_gpu_plateau(g, name):
    v = b05.model_busbw(8, 30, b05.ALPHA_RING_SIMPLE_US, link(g))
    states(ID, f"{v:.0f} GB/s", near="These are raw-link bounds")
    states(ID, f"{v:.0f}", near="not measured here", files="module.yml")
    states(ID, f"{v:.0f}", near="climbing from under", files="figures.yml")
    n_half = 8 * b05.ALPHA_RING_SIMPLE_US * 1e-6 * link(g) * 1e9
    states(ID, f"{n_half / 1e6:.1f} MB", near="cross half their")


def test_one_mib_on_h200():
    v1 = b05.model_busbw(8, 20, b05.ALPHA_RING_SIMPLE_US, link("h200"))
    v30 = b05.model_busbw(8, 30, b05.ALPHA_RING_SIMPLE_US, link("h200"))
    states(ID, f"{v1:.1f} GB/s", near="1 MiB per rank on eight H200")
    states(ID, pct(v1 / v30), near="1 MiB per rank on eight H200")


def test_figure_alt_link_rates():
    states(ID, f"{link('h200'):.0f} GB/s", near="8 H200 over NVSwitch at", files="figures.yml")
    states(ID, f"{link('mi300x'):.0f} GB/s", near="8 H200 over NVSwitch at", files="figures.yml")


def test_achievable_rates():
    near = "These are raw-link bounds"
    states(ID, f"{b05.EFFECTIVE_NVLINK_GBPS:.0f} GB/s", near=near)
    states(ID, f"{b05.XGMI_USABLE_GBPS:.0f} GB/s", near=near)
    states(ID, f"{b05.LINKS_MI300X} × {b05.XGMI_USABLE_GBPS:.0f} = {b05.LINKS_MI300X * b05.XGMI_USABLE_GBPS:.0f} GB/s",
           near=near)
    states(ID, f"{b05.LINKS_MI300X * b05.XGMI_USABLE_GBPS:.0f}", near="raw-link bounds", files="module.yml")
    states(ID, f"{b05.EFFECTIVE_NVLINK_GBPS:.0f}", near="raw-link bounds", files="module.yml")
    assert b05.EFFECTIVE_NVLINK_GBPS < link("h200") and b05.LINKS_MI300X * b05.XGMI_USABLE_GBPS < link("mi300x")


def test_nccl_latency_constants():
    near = "NCCL's own cost model (version 2.21)"
    states(ID, f"{b05.ALPHA_RING_SIMPLE_US} µs", near=near)
    states(ID, f"{b05.BASE_RING_SIMPLE_US} µs", near=near)
    states(ID, f"{b05.ALPHA_RING_LL_US} µs", near=near)
    states(ID, f"{b05.BASE_RING_LL_US} µs", near=near)
    never_states(ID, "0.47 µs")


def test_rccl_rings():
    # RCCL's model: 28 rings, 14 orders each used twice; a ring takes one outgoing link of every GPU, so
    # 28 rings over 7 links use each link the same number of times
    rings, orders = 28, 14
    assert rings == 2 * orders and rings % b05.LINKS_MI300X == 0
    states(ID, f"{rings} rings, {orders} orders each used twice", near="seven-link model")


def test_tradeoffs_numbers():
    a = b05.ALPHA_RING_SIMPLE_US
    states(ID, f"{2 * 7 * a:.1f} µs", near="8 GPUs pay")
    states(ID, f"{b05.BASE_RING_SIMPLE_US + 2 * 7 * a:.1f} µs", near="8 GPUs pay")
    states(ID, f"{2 * 1023:,} steps", near="8 GPUs pay")
    states(ID, f"{2 * 1023 * b05.ALPHA_NET_RING_SIMPLE_US / 1e3:.1f} ms", near="8 GPUs pay")
    states(ID, f"{b05.ALPHA_NET_RING_SIMPLE_US:.0f} µs", near="8 GPUs pay")
    never_states(ID, f"{2 * 1023 * a / 1e3:.2f} ms")
    p = 8
    ring = co.compute({"gpus": p, "log2_bytes": 36, "alpha_us": 0, "link_gbps": link("h200")})
    tree = co.compute({"gpus": p, "log2_bytes": 36, "alpha_us": 0, "link_gbps": link("h200"), "algorithm": "tree"})
    states(ID, pct(tree["busbw"] / ring["busbw"]), near="tends to $\\frac{p-1}{p}B$")
    # crossover: 2(p-1) a + 2(p-1)/p n/B = 2 log2(p) a + 2 n/B  ->  n = (2(p-1) - 2 log2 p) a B p / 2
    n_x = (2 * (p - 1) - 2 * math.ceil(math.log2(p))) * a * 1e-6 * link("h200") * 1e9 * p / 2
    assert n_x == pytest.approx(32 * a * 1e-6 * link("h200") * 1e9)
    states(ID, f"{n_x / 1e6:.1f} MB", near="the crossover")
    v30 = b05.model_busbw(8, 30, a, link("h200"))
    states(ID, f"{v30 * p / (2 * (p - 1)):.0f} GB/s", near="algorithm bandwidth of")
    states(ID, pct(p / (2 * (p - 1))), near="algorithm bandwidth of")
    n = 1 << 20
    per_link = Fraction(hbm_bytes(p, n), 2 * (p - 1) * 4 * n)  # HBM bytes over the bytes a real ring sends
    states(ID, f"{float(per_link):.1f}", near="bytes of HBM per byte a real ring")


def test_self_assessment_numbers():
    a, b = b05.ALPHA_RING_SIMPLE_US * 1e-6, link("h200") * 1e9
    t = 14 * a + 1.75 * GIB / b
    states(ID, f"{t * 1e3:.2f} ms", near="latency is 1% of the time", files="9-self-assessment.md")
    states(ID, f"{1.75 * GIB / b * 1e3:.2f} ms", near="latency is 1% of the time", files="9-self-assessment.md")
    states(ID, f"{14 * a * 1e6:.1f} µs", near="latency is 1% of the time", files="9-self-assessment.md")
    states(ID, f"{GIB / t / 1e9:.0f} GB/s", near="latency is 1% of the time", files="9-self-assessment.md")
    states(ID, pct(1.75 * GIB / t / b), near="latency is 1% of the time", files="9-self-assessment.md")
    states(ID, pct(14 * a / t), near="at 1 GiB the", files="9-self-assessment.md")
    alg8 = 400 * 8 / 14
    states(ID, f"{alg8:.0f} GB/s", near="400 GB/s on 2 GPUs", files="9-self-assessment.md")
    states(ID, f"{GIB / 400e9 * 1e3:.1f} ms", near="two-GPU one finishes", files="9-self-assessment.md")
    states(ID, f"{GIB / (alg8 * 1e9) * 1e3:.1f} ms", near="two-GPU one finishes", files="9-self-assessment.md")


def test_reduce_scatter_slots_figure():
    # every column of the drawn schedule holds each chunk once: all links busy, no chunk twice
    for p in (2, 3, 4, 8):
        rows = b05.schedule(p)
        for s in range(2 * (p - 1)):
            assert sorted(r[s] for r in rows) == list(range(p))


# ---------------------------------------------------------------- the two-GPU state, both ways

def test_two_gpu_state():
    two = {k: v for k, v in RECS.items() if k.startswith("B05/ring_allreduce/g")}
    if two:
        for k, r in two.items():
            assert r["unit"] == "GB/s" and r["value"] > 0, k
            assert r["value"] <= r["ceiling"]["value"] * 2 * 1.05, k  # bus bandwidth of a two-way link
    else:
        states(ID, "no two-GPU record exists", near="None of this was measured here")
        states(ID, "no two-GPU run exists", near="not measured here", files="module.yml")
        states(ID, "no record of it exists", near="this course's machine has one GPU")


def test_self_assessment_more():
    states(ID, f"{b05.model_busbw(8, 30, b05.ALPHA_RING_SIMPLE_US, link('h200')):.0f} GB/s",
           near="latency is 1% of the time", files="9-self-assessment.md")
    b = b05.b_eff_gbps(4, b_copy())
    states(ID, f"{b:.0f} GB/s", near="Setting that equal", files="9-self-assessment.md")
    states(ID, pct(rec(4, 30)["value"] / b), near="Setting that equal", files="9-self-assessment.md")
    n_x = 32 * b05.ALPHA_RING_SIMPLE_US * 1e-6 * link("h200") * 1e9
    states(ID, f"{n_x / 1e6:.0f} MB", near="more per rank: for $p = 8$", files="9-self-assessment.md")
    n_half = 8 * b05.ALPHA_RING_SIMPLE_US * 1e-6 * link("h200") * 1e9
    states(ID, f"{n_half / 1e6:.0f} MB", near="rises with slope one", files="9-self-assessment.md")
    states(ID, f"{n_half / 1e6:.0f} MB", near="about 12 MB per rank", files="cards")


def test_lower_bound_qualified():
    # the 2(p-1)/p bound holds for algorithms built on point-to-point sends; in-switch reduction moves less
    states(ID, "point-to-point", near="The bandwidth term cannot be beaten")
    states(ID, "point-to-point", near="least any all-reduce built on", files="module.yml")
    never_states(ID, "the least any all-reduce can,", files="module.yml")
    never_states(ID, "for any all-reduce algorithm")
    never_states(ID, "every step also reads and writes HBM", files="module.yml")
