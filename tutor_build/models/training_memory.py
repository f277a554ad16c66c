"""Player 10, "Training memory" (modules B06/B08): bytes per GPU by kind.

Mixed-precision Adam keeps, per parameter, 2 bytes of bf16/fp16 weights, 2 bytes of
gradients and 12 bytes of optimizer state (fp32 master weights, momentum, variance):
16 bytes in all. ZeRO partitions these over the ``N_d`` data-parallel ranks:

$$ \\text{stage 0: } 16\\Psi \\quad \\text{1: } 4\\Psi + \\frac{12\\Psi}{N_d} \\quad
   \\text{2: } 2\\Psi + \\frac{14\\Psi}{N_d} \\quad \\text{3: } \\frac{16\\Psi}{N_d} $$

Activations of one transformer layer (sequence ``s``, micro-batch ``b``, hidden ``h``,
``a`` heads, 16-bit activations, no tensor parallelism):

$$ A_\\text{none} = s b h \\Big(34 + \\frac{5 a s}{h}\\Big), \\quad
   A_\\text{selective} = 34\\, s b h, \\quad A_\\text{full} = 2\\, s b h $$

bytes, times ``L`` layers (full recomputation keeps only each layer's input). Data
parallelism does not divide activations: each rank holds its own micro-batch.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import hardware
from ._common import clamp_inputs

MODELS: dict[str, dict[str, Any]] = {
    "llama2-7b": {"name": "Llama 2 7B", "params": 6.74e9, "layers": 32, "hidden": 4096, "heads": 32,
                  "cite": "touvron2023llama2"},
    "llama2-70b": {"name": "Llama 2 70B", "params": 68.98e9, "layers": 80, "hidden": 8192, "heads": 64,
                   "cite": "touvron2023llama2"},
    "gpt3-175b": {"name": "GPT-3 175B", "params": 175e9, "layers": 96, "hidden": 12288, "heads": 96,
                  "cite": "brown2020gpt3"},
}

INPUTS: dict[str, dict[str, Any]] = {
    "params_b": {"kind": "float", "min": 0.001, "max": 2000, "default": 6.74,
                 "label": "Parameters (billions)"},
    "layers": {"kind": "int", "min": 1, "max": 256, "default": 32, "label": "Layers L"},
    "hidden": {"kind": "int", "min": 64, "max": 65536, "default": 4096, "label": "Hidden size h"},
    "heads": {"kind": "int", "min": 1, "max": 512, "default": 32, "label": "Attention heads a"},
    "seq": {"kind": "int", "min": 1, "max": 1048576, "default": 4096, "label": "Sequence length s"},
    "micro_batch": {"kind": "int", "min": 1, "max": 1024, "default": 1, "label": "Micro-batch b"},
    "zero_stage": {"kind": "choice", "choices": [0, 1, 2, 3], "default": 0, "label": "ZeRO stage"},
    "dp": {"kind": "int", "min": 1, "max": 65536, "default": 8, "label": "Data-parallel size"},
    "recompute": {"kind": "choice", "choices": ["none", "selective", "full"], "default": "none",
                  "label": "Activation recomputation"},
    "device": {"kind": "choice", "choices": list(hardware.DEVICE_KEYS), "default": "h200",
               "label": "GPU (for the HBM line)"},
}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Bytes per GPU of weights, gradients, optimizer state and activations."""
    v, clamped = clamp_inputs(INPUTS, raw)
    psi = v["params_b"] * 1e9
    nd, z = v["dp"], v["zero_stage"]
    weights = 2 * psi / (nd if z >= 3 else 1)
    grads = 2 * psi / (nd if z >= 2 else 1)
    optim = 12 * psi / (nd if z >= 1 else 1)
    s, b, h, a, L = v["seq"], v["micro_batch"], v["hidden"], v["heads"], v["layers"]
    sbh = s * b * h
    per_layer = {"none": sbh * (34 + 5 * a * s / h), "selective": 34 * sbh, "full": 2 * sbh}
    acts = L * per_layer[v["recompute"]]
    total = weights + grads + optim + acts
    hbm = hardware.value(v["device"], "hbm_bytes")
    return {"inputs": v, "clamped": clamped, "weights": weights, "gradients": grads,
            "optimizer": optim, "activations": acts, "total": total, "hbm": hbm,
            "fits": total <= hbm, "hbm_share": total / hbm}
