"""The twelve concept players: name -> (inputs spec, compute), and the adapters of players
7, 11 and 12 onto the models of modules B04 (:mod:`fp8`), B07 (:mod:`pipeline`) and C07
(:mod:`serving`).

Every ``compute(raw)`` clamps its inputs with :func:`._common.clamp_inputs` and returns a
JSON-ready dict with ``inputs`` (the values used) and ``clamped`` (the names changed).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from . import (attention_io, coalescing, collectives, divergence, fp8, gemm_tiling, hardware,
               occupancy, pipeline, roofline, serving, training_memory, where_time_goes)
from ._common import clamp_inputs

# ------------------------------------------------------------------ 7 number formats

FP8_FORMATS = ("e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz")

NUMBER_FORMATS_INPUTS: dict[str, dict[str, Any]] = {
    "bits": {"kind": "int", "min": 0, "max": 255, "default": 0x38, "label": "Byte (0-255)"},
    "value": {"kind": "float", "min": -1e6, "max": 1e6, "default": 1.1,
              "label": "Value to round"},
    "saturate": {"kind": "choice", "choices": ["yes", "no"], "default": "no",
                 "label": "Saturate on overflow"},
}


def _num(x: float) -> float | str:
    """JSON-safe float: NaN and infinities as strings."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def round_ieee(x: float, ebits: int, mbits: int) -> float:
    """``x`` rounded to nearest, ties to even, in the IEEE binary format with ``ebits``
    exponent and ``mbits`` mantissa bits (bf16: 8, 7; fp16: 5, 10). Overflow gives inf."""
    if not math.isfinite(x) or x == 0:
        return x
    bias = (1 << (ebits - 1)) - 1
    a = abs(x)
    _, e2 = math.frexp(a)
    e = max(e2 - 1, 1 - bias)  # exponent of the binade (subnormals share the lowest)
    q = math.ldexp(1.0, e - mbits)
    n = a / q
    f = math.floor(n)
    r = n - f
    if r > 0.5 or (r == 0.5 and f % 2 == 1):
        f += 1
    v = f * q
    largest = math.ldexp(2.0 - math.ldexp(1.0, -mbits), bias)
    if v > largest:
        v = math.inf
    return math.copysign(v, x)


def number_formats(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The byte read under the four fp8 formats; the typed value encoded in each, and
    rounded to bf16 and fp16."""
    v, clamped = clamp_inputs(NUMBER_FORMATS_INPUTS, raw)
    sat = v["saturate"] == "yes"
    decoded = {f: _num(fp8.decode(v["bits"], f)) for f in FP8_FORMATS}
    encoded = {}
    for f in FP8_FORMATS:
        code = fp8.encode(v["value"], f, sat)
        encoded[f] = {"code": code, "value": _num(fp8.decode(code, f))}
    return {"inputs": v, "clamped": clamped, "decoded": decoded, "encoded": encoded,
            "bf16": _num(round_ieee(v["value"], 8, 7)),
            "fp16": _num(round_ieee(v["value"], 5, 10))}


# ------------------------------------------------------------------ 11 pipeline schedules

PIPELINE_INPUTS: dict[str, dict[str, Any]] = {
    "schedule": {"kind": "choice", "choices": list(pipeline.SCHEDULES), "default": "1f1b",
                 "label": "Schedule"},
    "stages": {"kind": "int", "min": 1, "max": 16, "default": 4, "label": "Stages S"},
    "micro_batches": {"kind": "int", "min": 1, "max": 64, "default": 8, "label": "Micro-batches M"},
    "virtual": {"kind": "int", "min": 1, "max": 4, "default": 2,
                "label": "Chunks per device v (interleaved)"},
    "t_f": {"kind": "float", "min": 0.1, "max": 10, "default": 1, "label": "Forward time t_f"},
    "t_b": {"kind": "float", "min": 0.1, "max": 10, "default": 2, "label": "Backward time t_b"},
}


def pipeline_schedules(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Timeline, bubble and in-flight activations of one schedule (B07's simulator)."""
    v, clamped = clamp_inputs(PIPELINE_INPUTS, raw)
    notes = []
    virtual, m = v["virtual"], v["micro_batches"]
    if v["schedule"] != "interleaved":
        virtual = 1
    elif m % v["stages"]:
        m = min(64 - 64 % v["stages"], m + v["stages"] - m % v["stages"])
        notes.append(f"interleaved needs M divisible by S: M = {m}")
    r = pipeline.simulate(v["schedule"], v["stages"], m, virtual, v["t_f"], v["t_b"])
    out = r.to_dict()
    out.update({"inputs": v, "clamped": clamped, "notes": notes})
    return out


# ------------------------------------------------------------------ 12 serving sizing

SERVING_MODELS = {"llama3-70b": serving.LLAMA3_70B, "llama3-8b": serving.LLAMA3_8B}

SERVING_INPUTS: dict[str, dict[str, Any]] = {
    "model": {"kind": "choice", "choices": list(SERVING_MODELS), "default": "llama3-70b",
              "label": "Model"},
    "device": {"kind": "choice", "choices": list(hardware.DEVICE_KEYS), "default": "h200",
               "label": "GPU"},
    "n_gpus": {"kind": "int", "min": 1, "max": 8, "default": 8, "label": "GPUs (tensor parallel)"},
    "weights": {"kind": "choice", "choices": ["bf16", "fp8", "fp8-weight-only"], "default": "bf16",
                "label": "Weights and GEMMs (fp8 = W8A8; weight-only = fp8 storage, bf16 math)"},
    "kv": {"kind": "choice", "choices": ["bf16", "fp8"], "default": "bf16", "label": "KV cache"},
    "context": {"kind": "int", "min": 128, "max": 1048576, "default": 4096,
                "label": "Context per sequence (tokens)"},
    "slo_ms": {"kind": "float", "min": 1, "max": 1000, "default": 30,
               "label": "Time per output token SLO (ms)"},
    "mem_util": {"kind": "float", "min": 0.1, "max": 1, "default": 0.9,
                 "label": "HBM share for weights + KV"},
    "bw_eff": {"kind": "float", "min": 0.05, "max": 1, "default": 1,
               "label": "Achieved / datasheet bandwidth"},
    "attention": {"kind": "choice", "choices": list(serving.ATTN_ROOFS), "default": "tensor_tile",
                  "label": "Attention roof (tensor cores, group rows of a 64-row tile; full; CUDA cores)"},
    "allreduce": {"kind": "choice", "choices": ["none", "ring"], "default": "none",
                  "label": "Tensor-parallel all-reduces (ring over the link bandwidth)"},
}


def serving_sizing(raw: Mapping[str, Any]) -> dict[str, Any]:
    """KV pool, SLO-capped tokens, which bound binds, decode regime (C07's model)."""
    v, clamped = clamp_inputs(SERVING_INPUTS, raw)
    s = serving.Scenario(
        model=SERVING_MODELS[v["model"]], gpu=serving.gpu_from_table(v["device"]),
        n_gpus=v["n_gpus"], weight_bytes=2.0 if v["weights"] == "bf16" else 1.0,
        kv_bytes=1.0 if v["kv"] == "fp8" else 2.0, context=v["context"],
        slo_s=v["slo_ms"] * 1e-3, mem_util=v["mem_util"], bw_eff=v["bw_eff"],
        gemm_fp8=v["weights"] == "fp8", attn_roof=v["attention"])
    if v["allreduce"] == "ring":
        s = s.with_(link_bw=s.gpu.link_bw)
    out = serving.size(s).to_dict()
    fits = out["kv_pool_tokens"] > 0
    out.update({"inputs": v, "clamped": clamped,
                "note": "" if fits else "the weights do not fit in the HBM share: no KV pool"})
    return out


# ------------------------------------------------------------------ registry

Compute = Callable[[Mapping[str, Any]], dict]

PLAYERS: dict[str, tuple[dict[str, dict[str, Any]], Compute]] = {
    "where_time_goes": (where_time_goes.INPUTS, where_time_goes.compute),
    "coalescing": (coalescing.INPUTS, coalescing.compute),
    "occupancy": (occupancy.INPUTS, occupancy.compute),
    "roofline": (roofline.INPUTS, roofline.compute),
    "gemm_tiling": (gemm_tiling.INPUTS, gemm_tiling.compute),
    "divergence": (divergence.INPUTS, divergence.compute),
    "number_formats": (NUMBER_FORMATS_INPUTS, number_formats),
    "attention_io": (attention_io.INPUTS, attention_io.compute),
    "collectives": (collectives.INPUTS, collectives.compute),
    "training_memory": (training_memory.INPUTS, training_memory.compute),
    "pipeline_schedules": (PIPELINE_INPUTS, pipeline_schedules),
    "serving_sizing": (SERVING_INPUTS, serving_sizing),
}
