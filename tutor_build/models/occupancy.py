"""Player 3, "Warps, wavefronts and occupancy" (module A03).

One kernel configuration -- threads per block ``T``, registers per thread ``R``, shared
memory (LDS) per block ``S`` -- evaluated on a Hopper SM and on a CDNA 3 CU.

Hopper (32-lane warps). With ``w = ceil(T/32)`` warps per block, registers allocated per
warp in units of 256 from the 16,384 of the warp's own SM sub-partition (four per SM; CUDA's
``cuda_occupancy.h``, ``cudaOccMaxBlocksPerSMRegsLimit``, computes the register limit the same
way), and shared memory in units of 128 bytes plus 1 KiB the system keeps per block, the
resident blocks per SM are

$$ n = \\min\\Big(\\Big\\lfloor\\frac{64}{w}\\Big\\rfloor,\\;
      \\Big\\lfloor\\frac{4 \\lfloor 16384 / \\lceil 32R \\rceil_{256} \\rfloor}{w}\\Big\\rfloor,\\;
      \\Big\\lfloor\\frac{228\\,\\text{KiB}}{\\lceil S + 1\\,\\text{KiB}\\rceil_{128}}\\Big\\rfloor,\\; 32\\Big) $$

and the occupancy is ``n w / 64``.

CDNA 3 (64-lane wavefronts). A CU has 4 SIMDs of 8 wave slots each; a wave using ``R``
VGPRs (rounded up to 8) leaves ``min(8, floor(512 / R))`` slots per SIMD. Pooling the
slots of the CU, a workgroup of ``w = ceil(T/64)`` waves fits

$$ n = \\min\\Big(\\Big\\lfloor\\frac{4 \\min(8, \\lfloor 512/\\lceil R \\rceil_8 \\rfloor)}{w}\\Big\\rfloor,\\;
      \\Big\\lfloor\\frac{64\\,\\text{KiB}}{S}\\Big\\rfloor\\Big) $$

times, and the occupancy is ``n w / 32``. Pooling ignores how the waves of one workgroup
are spread over the four SIMDs, so this is an upper bound.

The limiting resource is the term that attains the minimum (ties name the first of
warps/waves, registers, shared memory, block limit). A configuration that cannot run
at all (too many threads, registers or bytes for one block) reports occupancy 0 and the
reason.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import hardware
from ._common import ceil_div, clamp_inputs

# SM sub-partitions of a Hopper SM, each with its own quarter of the register file (H100 whitepaper's
# SM diagram; cuda_occupancy.h's cudaOccSubPartitionsPerMultiprocessor). A warp's registers come from
# its own sub-partition, so the register limit is counted per quarter, then times four.
SUB_PARTITIONS = 4

INPUTS: dict[str, dict[str, Any]] = {
    "threads": {"kind": "int", "min": 1, "max": 1024, "default": 256,
                "label": "Threads per block"},
    "registers": {"kind": "int", "min": 1, "max": 512, "default": 32,
                  "label": "Registers per thread"},
    "shared_kib": {"kind": "float", "min": 0, "max": 256, "default": 0,
                   "label": "Shared memory / LDS per block (KiB)"},
}


def _pick(limits: dict[str, int]) -> tuple[int, str]:
    name = min(limits, key=lambda k: limits[k])  # first minimum in insertion order
    return limits[name], name


def hopper(device: str, threads: int, registers: int, shared: float) -> dict[str, Any]:
    """Resident blocks, warps and occupancy of one SM of ``device`` (an NVIDIA part)."""
    d = {k: s.value for k, s in hardware.DEVICES[device].items() if isinstance(s, hardware.Spec)}
    lanes = int(d["lanes"])
    w = ceil_div(threads, lanes)
    max_warps = int(d["max_warps_per_unit"])
    if registers > d["max_regs_per_thread"]:
        return _dead("registers", w, max_warps, lanes)
    if shared > d["shared_per_block_max"]:
        return _dead("shared memory", w, max_warps, lanes)
    unit = int(d["reg_alloc_unit"])
    regs_per_warp = ceil_div(registers * lanes, unit) * unit
    warps_by_regs = SUB_PARTITIONS * (int(d["regs_per_unit"]) // SUB_PARTITIONS // regs_per_warp)
    smem_alloc = int(d["shared_alloc_unit"])
    smem_block = ceil_div(int(-(-shared // 1)) + int(d["shared_reserved_per_block"]), smem_alloc) * smem_alloc
    limits = {
        "warps": max_warps // w,
        "registers": warps_by_regs // w,
        "shared memory": int(d["shared_per_unit"]) // smem_block,
        "blocks": int(d["max_blocks_per_unit"]),
    }
    n, limit = _pick(limits)
    return {"blocks": n, "warps_per_block": w, "warps": n * w, "max_warps": max_warps,
            "lanes": lanes, "occupancy": n * w / max_warps, "limit": limit, "limits": limits}


def cdna3(device: str, threads: int, registers: int, shared: float) -> dict[str, Any]:
    """Resident workgroups, waves and occupancy of one CU of ``device`` (an AMD part)."""
    d = {k: s.value for k, s in hardware.DEVICES[device].items() if isinstance(s, hardware.Spec)}
    lanes = int(d["lanes"])
    w = ceil_div(threads, lanes)
    slots_simd = int(d["max_waves_per_simd"])
    simds = int(d["simds_per_unit"])
    max_waves = slots_simd * simds
    if registers > d["max_regs_per_thread"]:
        return _dead("registers", w, max_waves, lanes)
    if shared > d["shared_per_block_max"]:
        return _dead("shared memory", w, max_waves, lanes)
    unit = int(d["vgpr_alloc_unit"])
    alloc = ceil_div(registers, unit) * unit
    waves_by_regs = simds * min(slots_simd, int(d["vgprs_per_simd_lane"]) // alloc)
    limits = {
        "warps": max_waves // w,
        "registers": waves_by_regs // w,
        "shared memory": int(d["shared_per_unit"] // shared) if shared > 0 else max_waves,
    }
    n, limit = _pick(limits)
    return {"blocks": n, "warps_per_block": w, "warps": n * w, "max_warps": max_waves,
            "lanes": lanes, "occupancy": n * w / max_waves, "limit": limit, "limits": limits}


def _dead(reason: str, w: int, max_warps: int, lanes: int) -> dict[str, Any]:
    return {"blocks": 0, "warps_per_block": w, "warps": 0, "max_warps": max_warps, "lanes": lanes,
            "occupancy": 0.0, "limit": f"{reason} (one block does not fit)", "limits": {}}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Occupancy of the configuration on H100/H200 (one table: same SM) and MI300X."""
    v, clamped = clamp_inputs(INPUTS, raw)
    shared = v["shared_kib"] * 1024
    nv = hopper("h200", v["threads"], v["registers"], shared)
    amd = cdna3("mi300x", v["threads"], v["registers"], shared)
    return {"inputs": v, "clamped": clamped, "hopper": nv, "cdna3": amd}
