"""Player 4, "Roofline explorer" (module A04).

A kernel of arithmetic intensity ``I`` (FLOP per byte of DRAM traffic) on a device of
peak rate ``P`` and memory bandwidth ``B`` attains at most

$$ F(I) = \\min(P,\\; I \\cdot B), \\qquad I^* = P / B $$

where ``I*`` is the ridge point: below it the kernel is memory-bound, at or above it
compute-bound. A measured point (``I``, ``F_meas``) is placed against the roof; its
fraction of the roof is ``F_meas / F(I)``.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import hardware
from ._common import clamp_inputs

INPUTS: dict[str, dict[str, Any]] = {
    "device": {"kind": "choice", "choices": list(hardware.DEVICE_KEYS), "default": "h200",
               "label": "GPU"},
    "precision": {"kind": "choice", "choices": list(hardware.PRECISIONS), "default": "bf16",
                  "label": "Precision"},
    "intensity": {"kind": "float", "min": 0.01, "max": 10000, "default": 10,
                  "label": "Arithmetic intensity (FLOP/byte)"},
    "measured_tflops": {"kind": "float", "min": 0, "max": 10000, "default": 0,
                        "label": "Measured rate (TFLOP/s, 0 = none)"},
}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Attainable rate, ridge point, bound, and the measured point's share of the roof."""
    v, clamped = clamp_inputs(INPUTS, raw)
    p = hardware.peak(v["device"], v["precision"])
    b = hardware.value(v["device"], "hbm_bw")
    i = v["intensity"]
    attainable = min(p, i * b)
    ridge = p / b
    measured = v["measured_tflops"] * 1e12
    return {
        "inputs": v,
        "clamped": clamped,
        "peak_flops": p,
        "bandwidth": b,
        "ridge": ridge,
        "attainable_flops": attainable,
        "bound": "memory" if i < ridge else "compute",
        "measured_fraction": measured / attainable if measured > 0 else None,
        "measured_above_roof": measured > attainable,
    }
