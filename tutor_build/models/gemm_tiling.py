"""Player 5, "GEMM tiling" (modules A06/A07).

A block computes a ``BM x BN`` tile of ``C = A B`` (``M x N``, inner dimension ``K``),
stepping through ``K`` in slices of ``BK``. Per slice it loads ``(BM + BN) BK`` elements of
``b`` bytes and does ``2 BM BN BK`` FLOPs, so its intensity with respect to global memory is

$$ I_\\text{tile} = \\frac{2\\,BM\\,BN\\,BK}{(BM + BN)\\,BK\\,b} = \\frac{2\\,BM\\,BN}{(BM + BN)\\,b}. $$

Shared memory (LDS) per block with ``s`` pipeline stages is ``s (BM + BN) BK b`` bytes;
fp32 accumulators take ``BM BN / T`` registers per thread for ``T`` threads. The grid has
``ceil(M/BM) ceil(N/BN)`` tiles; with ``r`` tiles resident per SM/CU (limited by shared
memory and by the accumulator registers) and ``U`` SMs/CUs, the launch runs in

$$ \\text{waves} = \\Big\\lceil \\frac{\\text{tiles}}{r U} \\Big\\rceil, \\qquad
   \\text{wave efficiency} = \\frac{\\text{tiles}}{\\text{waves} \\cdot r U}. $$
"""

from __future__ import annotations

from typing import Any, Mapping

from . import hardware
from ._common import ceil_div, clamp_inputs

TILE_CHOICES = [16, 32, 64, 128, 256]

INPUTS: dict[str, dict[str, Any]] = {
    "device": {"kind": "choice", "choices": list(hardware.DEVICE_KEYS), "default": "h200",
               "label": "GPU"},
    "m": {"kind": "int", "min": 1, "max": 65536, "default": 4096, "label": "M"},
    "n": {"kind": "int", "min": 1, "max": 65536, "default": 4096, "label": "N"},
    "k": {"kind": "int", "min": 1, "max": 65536, "default": 4096, "label": "K"},
    "bm": {"kind": "choice", "choices": TILE_CHOICES, "default": 128, "label": "Tile BM"},
    "bn": {"kind": "choice", "choices": TILE_CHOICES, "default": 128, "label": "Tile BN"},
    "bk": {"kind": "choice", "choices": [16, 32, 64, 128], "default": 32, "label": "Tile BK"},
    "stages": {"kind": "int", "min": 1, "max": 8, "default": 2, "label": "Pipeline stages"},
    "threads": {"kind": "choice", "choices": [64, 128, 256, 512, 1024], "default": 256,
                "label": "Threads per block"},
    "bytes_per_element": {"kind": "choice", "choices": [1, 2, 4], "default": 2,
                          "label": "Input element size (bytes)"},
}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Tile intensity, shared memory, registers, residency and wave quantization."""
    v, clamped = clamp_inputs(INPUTS, raw)
    dev = hardware.DEVICES[v["device"]]
    bm, bn, bk, b = v["bm"], v["bn"], v["bk"], v["bytes_per_element"]
    intensity = 2 * bm * bn / ((bm + bn) * b)
    smem = v["stages"] * (bm + bn) * bk * b
    acc_regs = bm * bn / v["threads"]
    tiles = ceil_div(v["m"], bm) * ceil_div(v["n"], bn)
    units = int(dev["units"].value)
    smem_unit = dev["shared_per_unit"].value
    smem_block_max = dev["shared_per_block_max"].value
    max_regs = dev["max_regs_per_thread"].value
    if dev["vendor"] == "nvidia":
        regfile = dev["regs_per_unit"].value
    else:
        regfile = (dev["vgprs_per_simd_lane"].value * dev["lanes"].value
                   * dev["simds_per_unit"].value)
    if smem > smem_block_max:
        resident, limit = 0, "shared memory (one tile does not fit)"
    elif acc_regs > max_regs:
        resident, limit = 0, "registers (accumulators exceed the per-thread limit)"
    else:
        by_smem = int(smem_unit // smem)
        by_regs = int(regfile // (bm * bn))
        resident, limit = (by_smem, "shared memory") if by_smem <= by_regs else (by_regs, "registers")
    slots = resident * units
    waves = ceil_div(tiles, slots) if slots else 0
    eff = tiles / (waves * slots) if slots else 0.0
    flops = 2.0 * v["m"] * v["n"] * v["k"]
    ideal_bytes = (v["m"] * v["k"] + v["k"] * v["n"] + v["m"] * v["n"]) * b
    return {
        "inputs": v,
        "clamped": clamped,
        "tile_intensity": intensity,
        "shared_bytes": smem,
        "acc_registers": acc_regs,
        "tiles": tiles,
        "resident_per_unit": resident,
        "residency_limit": limit,
        "units": units,
        "waves": waves,
        "wave_efficiency": eff,
        "gemm_flops": flops,
        "gemm_min_bytes": ideal_bytes,
        "gemm_intensity": flops / ideal_bytes,
    }
