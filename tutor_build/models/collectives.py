"""Player 9, "Collectives" (module B05): the alpha-beta model of ring and tree.

``p`` GPUs, a message of ``n`` bytes per GPU, a link with start-up latency ``alpha`` and
bandwidth ``B`` (so ``beta = 1/B`` seconds per byte):

$$ T_\\text{ring, all-reduce} = 2 (p-1)\\,\\alpha + 2\\,\\frac{p-1}{p}\\,\\frac{n}{B} $$
$$ T_\\text{ring, reduce-scatter} = T_\\text{ring, all-gather} = (p-1)\\,\\alpha + \\frac{p-1}{p}\\,\\frac{n}{B} $$
$$ T_\\text{tree, all-reduce} = 2 \\lceil \\log_2 p \\rceil\\,\\alpha + 2\\,\\frac{n}{B} $$

(the tree reduces up and broadcasts down a binary tree, pipelined in small chunks so
each byte crosses a link twice; the latency term grows with the depth). Algorithm
bandwidth is ``n / T``; bus bandwidth rescales it by the bytes each GPU must move so it
can be compared with the link rate: ``2 (p-1)/p`` for all-reduce, ``(p-1)/p`` for
reduce-scatter and all-gather.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ._common import clamp_inputs

INPUTS: dict[str, dict[str, Any]] = {
    "operation": {"kind": "choice", "choices": ["all-reduce", "reduce-scatter", "all-gather"],
                  "default": "all-reduce", "label": "Collective"},
    "algorithm": {"kind": "choice", "choices": ["ring", "tree"], "default": "ring",
                  "label": "Algorithm"},
    "gpus": {"kind": "int", "min": 2, "max": 1024, "default": 8, "label": "GPUs"},
    "log2_bytes": {"kind": "int", "min": 0, "max": 36, "default": 26,
                   "label": "Message size, log2 bytes"},
    "alpha_us": {"kind": "float", "min": 0, "max": 1000, "default": 5,
                 "label": "Latency alpha per step (µs)"},
    "link_gbps": {"kind": "float", "min": 0.1, "max": 10000, "default": 450,
                  "label": "Link bandwidth per direction (GB/s)"},
}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Time, algorithm bandwidth and bus bandwidth of one collective."""
    v, clamped = clamp_inputs(INPUTS, raw)
    p = v["gpus"]
    n = float(2 ** v["log2_bytes"])
    alpha = v["alpha_us"] * 1e-6
    bw = v["link_gbps"] * 1e9
    op, algo = v["operation"], v["algorithm"]
    note = ""
    if algo == "tree" and op != "all-reduce":
        algo, note = "ring", "tree is modelled for all-reduce only; ring shown"
    if op == "all-reduce":
        factor = 2 * (p - 1) / p
        if algo == "ring":
            latency, transfer = 2 * (p - 1) * alpha, factor * n / bw
        else:
            latency, transfer = 2 * math.ceil(math.log2(p)) * alpha, 2 * n / bw
    else:
        factor = (p - 1) / p
        latency, transfer = (p - 1) * alpha, factor * n / bw
    t = latency + transfer
    algbw = n / t if t > 0 else 0.0
    return {"inputs": v, "clamped": clamped, "algorithm_used": algo, "note": note,
            "bytes": n, "latency_s": latency, "transfer_s": transfer, "time_s": t,
            "algbw": algbw, "busbw": algbw * factor, "bus_factor": factor,
            "latency_share": latency / t if t > 0 else 0.0}
