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

from tests.claims.prose import states
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
    states(ID, f"{b_copy():,.1f} GB/s", near="copy ceiling that is")
    states(ID, f"{b_copy():,.1f} GB/s", near="4,243.6", files="9-self-assessment.md")


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
    states(ID, pct(share), near="1 GiB per rank reaches", files="module.yml")
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
    states(ID, f"{a:.3g} µs".replace("9.7 µs", "9.70 µs"), near="which fits $\\alpha$ per ring step")
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


@pytest.mark.parametrize("p", PS)
def test_mid_size_gap(p):
    a, b = b05.alpha_step_us(p, RECS), b05.b_eff_gbps(p, b_copy())
    share = rec(p, 26)["value"] / b05.model_busbw(p, 26, a, b)
    states(ID, pct(share), near="at 64 MiB per rank the measurement is")


def test_intensity_and_ridges():
    # (p-1) n/4 FLOP over 7 (p-1) n bytes
    states(ID, f"{1 / 28:.3f}", near="arithmetic intensity is therefore")
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
    states(ID, f"{v:.0f} GB/s", near="Both plateau near their link rate")
    states(ID, f"{v:.0f}", near="not measured here", files="module.yml")
    states(ID, f"{v:.0f}", near="climbing from under", files="figures.yml")
    n_half = 8 * b05.ALPHA_RING_SIMPLE_US * 1e-6 * link(g) * 1e9
    states(ID, f"{n_half / 1e6:.1f} MB", near="cross half their")


def test_one_mib_on_h200():
    v1 = b05.model_busbw(8, 20, b05.ALPHA_RING_SIMPLE_US, link("h200"))
    v30 = b05.model_busbw(8, 30, b05.ALPHA_RING_SIMPLE_US, link("h200"))
    states(ID, f"{v1:.1f} GB/s", near="1 MiB per rank on eight H200")
    states(ID, pct(v1 / v30), near="1 MiB per rank on eight H200")


def test_tradeoffs_numbers():
    a = b05.ALPHA_RING_SIMPLE_US
    states(ID, f"{2 * 7 * a:.1f} µs", near="8 GPUs pay")
    states(ID, f"{2 * 1023 * a / 1e3:.2f} ms", near="8 GPUs pay")
    p = 8
    ring = co.compute({"gpus": p, "log2_bytes": 36, "alpha_us": 0, "link_gbps": link("h200")})
    tree = co.compute({"gpus": p, "log2_bytes": 36, "alpha_us": 0, "link_gbps": link("h200"), "algorithm": "tree"})
    states(ID, pct(tree["busbw"] / ring["busbw"]), near="tends to $\\frac{p-1}{p}B$")
    # crossover: 2(p-1) a + 2(p-1)/p n/B = 2 log2(p) a + 2 n/B  ->  n = (2(p-1) - 2 log2 p) a B p / 2
    n_x = (2 * (p - 1) - 2 * math.ceil(math.log2(p))) * a * 1e-6 * link("h200") * 1e9 * p / 2
    assert n_x == pytest.approx(32 * a * 1e-6 * link("h200") * 1e9)
    states(ID, f"{n_x / 1e6:.1f} MB", near="the crossover")
    v30 = b05.model_busbw(8, 30, a, link("h200"))
    states(ID, f"{v30 / 1.75:.0f} GB/s", near="algorithm bandwidth of")
    states(ID, f"{7 / 2:.1f}", near="bytes of HBM per byte a real ring")


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
