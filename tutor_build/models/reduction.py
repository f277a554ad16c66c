"""Reductions, scans and the order of a floating-point sum (module A05).

Shuffle trees. A warp (NVIDIA, 32 lanes) or wavefront (AMD CDNA, 64 lanes) sums one value per lane by
shuffling down: at offset ``d`` lane ``l`` adds the value of lane ``l + d``. The offsets halve from
``lanes / 2`` to 1, so the tree takes

$$ \\text{steps} = \\log_2(\\text{lanes}) $$

steps: 5 for 32 lanes, 6 for 64. After the step with offset ``d`` the lanes below ``d`` hold the sums
that still matter.

Contention. ``one_address_serial`` counts the additions that must happen one after another when every
element is added to one address (all of them), against a tree (``ceil(log2 n)`` rounds).

Look-back. ``lookback`` simulates a single-pass scan with decoupled look-back (Merrill and Garland,
2016) on a toy clock: tile ``t`` starts at ``t * stagger``, publishes its own total (an aggregate) after
``work``, then reads its predecessors one per ``read`` time unit, nearest first, until it meets one that
has published an inclusive prefix; it waits on a predecessor that has published nothing.

Summation order. ``gamma(k) = k u / (1 - k u)`` with ``u = 2^-24`` (float32's unit roundoff) bounds the
relative error of a sum whose every term passes through at most ``k`` additions (Higham 2002, ch. 4):
``k = n - 1`` for a left-to-right sum, ``ceil(log2 n)`` for a pairwise (tree) sum. ``order_demo`` sums
one float32 array three ways with NumPy, each addition rounded to float32, and compares with the exact
(float64, then exactly rounded through ``math.fsum``) sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

U32 = 2.0 ** -24  # unit roundoff of float32 (round to nearest)
INVALID, AGGREGATE, PREFIX = 0, 1, 2


# ---------------------------------------------------------------- shuffle trees
def shuffle_offsets(lanes: int) -> list[int]:
    """The offsets of the shuffle-down tree, as the labs' loop produces them: lanes/2, lanes/4, ..., 1."""
    if lanes < 2 or lanes & (lanes - 1):
        raise ValueError("lanes must be a power of two >= 2")
    out, d = [], lanes // 2
    while d > 0:
        out.append(d)
        d //= 2
    return out


def tree_steps(lanes: int) -> int:
    return len(shuffle_offsets(lanes))


def shuffle_tree(lanes: int) -> list[list[tuple[int, int]]]:
    """For each step, the (receiving lane, sending lane) pairs whose sums still matter: lane l < d adds l + d."""
    return [[(lane, lane + d) for lane in range(d)] for d in shuffle_offsets(lanes)]


def tree_sum_lanes(values: list[float]) -> float:
    """Lane 0's value after the shuffle-down tree over len(values) lanes (every lane adds, as on the GPU)."""
    v = list(values)
    for d in shuffle_offsets(len(v)):
        v = [v[lane] + (v[lane + d] if lane + d < len(v) else 0.0) for lane in range(len(v))]
    return v[0]


def one_address_serial(n: int) -> int:
    """Additions that must happen one after another when all n values go to one address."""
    return n


def tree_rounds(n: int) -> int:
    """Rounds of a pairwise tree over n values."""
    return math.ceil(math.log2(n)) if n > 1 else 0


# ---------------------------------------------------------------- decoupled look-back (toy clock)
@dataclass(frozen=True)
class Tile:
    start: float
    aggregate_at: float
    prefix_at: float
    reads: int  # predecessor words read before the prefix was known


def lookback(tiles: int, stagger: float = 1.0, work: float = 6.0, read: float = 1.0) -> list[Tile]:
    out: list[Tile] = []
    for t in range(tiles):
        start = t * stagger
        agg = start + work
        if t == 0:
            out.append(Tile(start, agg, agg, 0))
            continue
        clock, j, reads = agg, t - 1, 0
        while True:
            p = out[j]
            clock = max(clock, p.aggregate_at)  # nothing published yet: wait for it
            clock += read
            reads += 1
            if p.prefix_at <= clock - read:  # it had its inclusive prefix when read
                break
            j -= 1
        out.append(Tile(start, agg, clock, reads))
    return out


def status_at(tile: Tile, time: float) -> int | None:
    """None: not started; INVALID: running, nothing published; AGGREGATE; PREFIX."""
    if time < tile.start:
        return None
    if time >= tile.prefix_at:
        return PREFIX
    if time >= tile.aggregate_at:
        return AGGREGATE
    return INVALID


# ---------------------------------------------------------------- summation order
def gamma(k: int, u: float = U32) -> float:
    return k * u / (1 - k * u)


def sequential_bound(n: int) -> float:
    """Relative bound (to sum |x|) of a left-to-right sum of n terms: gamma(n - 1)."""
    return gamma(n - 1)


def pairwise_bound(n: int) -> float:
    """Relative bound (to sum |x|) of a pairwise sum of n terms: gamma(ceil(log2 n))."""
    return gamma(tree_rounds(n))


def _pairwise(x: np.ndarray) -> np.float32:
    while x.size > 1:
        if x.size % 2:
            x = np.append(x, np.float32(0.0))
        x = (x[0::2] + x[1::2]).astype(np.float32)
    return np.float32(x[0])


def order_demo(n: int = 1 << 20, seed: int = 5) -> dict[str, float]:
    """One float32 array (uniform in [0, 1)) summed left to right, right to left and pairwise, every
    addition rounded to float32; the exact sum; and each one's error relative to sum |x|."""
    x = np.random.default_rng(seed).random(n, dtype=np.float32)
    exact = math.fsum(float(v) for v in x)
    forward = float(np.cumsum(x, dtype=np.float32)[-1])
    backward = float(np.cumsum(x[::-1], dtype=np.float32)[-1])
    pairwise = float(_pairwise(x.copy()))
    mag = float(np.abs(x.astype(np.float64)).sum())
    return {"n": n, "exact": exact, "forward": forward, "backward": backward, "pairwise": pairwise,
            "err_forward": abs(forward - exact) / mag, "err_backward": abs(backward - exact) / mag,
            "err_pairwise": abs(pairwise - exact) / mag,
            "bound_sequential": sequential_bound(n), "bound_pairwise": pairwise_bound(n)}
