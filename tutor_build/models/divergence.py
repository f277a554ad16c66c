"""Player 6, "Divergence" (modules A03/A05).

A block of ``T`` threads runs ``if (cond(i)) A else B``; path A costs ``a`` cycles, path B
``b`` cycles. A warp (32 lanes) or wavefront (64 lanes) whose lanes disagree runs both
paths one after the other with the other lanes masked off. Over the block,

$$ \\eta = \\frac{\\sum_i c(i)}{L \\sum_{\\text{warps } w} \\big(a\\,[\\exists i \\in w: A] + b\\,[\\exists i \\in w: B]\\big)} $$

where ``c(i)`` is the cost of thread ``i``'s own path and ``L`` the lane count (lanes
past the end of the block count as idle). Patterns of ``cond(i)``:

* ``threshold``: ``i < k`` (a boundary; only the warp that straddles ``k`` diverges);
* ``modulo``: ``i mod k == 0`` (every ``k``-th thread, e.g. odd/even with ``k = 2``);
* ``random``: each thread independently with probability ``p``; the model reports the ratio of
  expectations, ``(p a + (1-p) b) / (a (1 - (1-p)^L) + b (1 - p^L))`` for a full warp.
"""

from __future__ import annotations

from typing import Any, Mapping

from ._common import ceil_div, clamp_inputs

INPUTS: dict[str, dict[str, Any]] = {
    "pattern": {"kind": "choice", "choices": ["threshold", "modulo", "random"],
                "default": "modulo", "label": "Branch pattern"},
    "k": {"kind": "int", "min": 1, "max": 1024, "default": 3,
          "label": "k (threshold index or modulus)"},
    "p": {"kind": "float", "min": 0, "max": 1, "default": 0.5,
          "label": "p (probability of path A, random pattern)"},
    "cost_a": {"kind": "float", "min": 0, "max": 1000, "default": 10, "label": "Cost of path A (cycles)"},
    "cost_b": {"kind": "float", "min": 0, "max": 1000, "default": 20, "label": "Cost of path B (cycles)"},
    "threads": {"kind": "int", "min": 1, "max": 1024, "default": 256, "label": "Threads per block"},
}


def efficiency(pattern: str, k: int, p: float, a: float, b: float, threads: int, lanes: int) -> dict[str, float]:
    """SIMT efficiency and the number of warps that run both paths."""
    if pattern == "random":
        warps = ceil_div(threads, lanes)
        useful = threads * (p * a + (1 - p) * b)
        issued = 0.0
        mixed = 0.0
        for w in range(warps):
            active = min(lanes, threads - w * lanes)
            issued += lanes * (a * (1 - (1 - p) ** active) + b * (1 - p ** active))
            mixed += 1 - p ** active - (1 - p) ** active
        eff = useful / issued if issued > 0 else 1.0
        return {"efficiency": eff, "mixed_warps": mixed, "warps": warps}
    warps = ceil_div(threads, lanes)
    useful = 0.0
    issued = 0.0
    mixed = 0
    for w in range(warps):
        has_a = has_b = False
        for i in range(w * lanes, min((w + 1) * lanes, threads)):
            take_a = (i < k) if pattern == "threshold" else (i % k == 0)
            if take_a:
                has_a = True
                useful += a
            else:
                has_b = True
                useful += b
        issued += lanes * ((a if has_a else 0.0) + (b if has_b else 0.0))
        mixed += 1 if (has_a and has_b) else 0
    eff = useful / issued if issued > 0 else 1.0
    return {"efficiency": eff, "mixed_warps": float(mixed), "warps": warps}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """SIMT efficiency of the branch for 32-lane warps and 64-lane wavefronts."""
    v, clamped = clamp_inputs(INPUTS, raw)
    args = (v["pattern"], v["k"], v["p"], v["cost_a"], v["cost_b"], v["threads"])
    return {"inputs": v, "clamped": clamped,
            "lanes32": efficiency(*args, 32), "lanes64": efficiency(*args, 64)}
