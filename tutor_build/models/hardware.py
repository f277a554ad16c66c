"""Hardware presets of the concept players, one value per field, each with its source.

Every number is a :class:`Spec` carrying the bibliography key of the document it comes
from (keys of ``references.yml``). The players' JavaScript receives the same table
through the generated ``docs/assets/js/players/presets.js`` (``python -m
tutor_build.models.vectors``), so the page and the Python models read one table.

Peak rates are dense (no structured sparsity). NVIDIA's datasheets print the Tensor
Core rates *with* 2:4 sparsity and say so in a footnote; the dense rate is half of the
printed figure, which is what is stored here (``note`` says so where it applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Spec:
    """One hardware number, its unit and the bibliography key of its source."""

    value: float
    unit: str
    cite: str
    note: str = ""


KIB = 1024

_H100_SM = "nvidia-h100-whitepaper"
_CUDA = "nvidia-cuda-guide"
_HOPPER = "nvidia-hopper-tuning-guide"
_H200 = "nvidia-h200-datasheet"
_H100DS = "nvidia-h100-datasheet"
_MI300X = "amd-mi300x-datasheet"
_ROCM_SPECS = "amd-rocm-gpu-specs"
_LLVM_OCC = "llvm-calc-occupancy"

_HALF = "datasheet figure is with 2:4 sparsity; dense is half"


def _hopper_sm() -> dict[str, Spec]:
    """Per-SM limits of compute capability 9.0, shared by H100 SXM and H200."""
    return {
        "lanes": Spec(32, "threads/warp", _CUDA),
        "regs_per_unit": Spec(65536, "32-bit registers/SM", _HOPPER),
        "reg_alloc_unit": Spec(256, "registers/warp granule", _CUDA,
                               "CUDA occupancy calculator allocation unit for cc 9.0"),
        "max_regs_per_thread": Spec(255, "registers/thread", _HOPPER),
        "shared_per_unit": Spec(228 * KIB, "bytes/SM", _HOPPER),
        "shared_per_block_max": Spec(227 * KIB, "bytes/block", _HOPPER),
        "shared_reserved_per_block": Spec(1 * KIB, "bytes/block", _CUDA,
                                          "reserved by the system per resident block"),
        "shared_alloc_unit": Spec(128, "bytes", _CUDA),
        "max_warps_per_unit": Spec(64, "warps/SM", _HOPPER),
        "max_blocks_per_unit": Spec(32, "blocks/SM", _HOPPER),
        "max_threads_per_block": Spec(1024, "threads/block", _CUDA),
        "shared_banks": Spec(32, "banks of 4 bytes", _CUDA),
    }


DEVICES: dict[str, dict[str, Any]] = {
    "h100-sxm": {
        "name": "NVIDIA H100 SXM",
        "vendor": "nvidia",
        "units": Spec(132, "SMs", _H100_SM),
        **_hopper_sm(),
        "hbm_bytes": Spec(80e9, "bytes", _H100DS),
        "l2_bytes": Spec(50e6, "bytes", _H100_SM, "the 50 MB L2 of the H100 SXM5"),
        "hbm_bw": Spec(3.35e12, "bytes/s", _H100DS),
        "link_bw": Spec(450e9, "bytes/s per direction", _H100DS,
                        "NVLink 900 GB/s is the sum of both directions"),
        "peak": {
            "fp64": Spec(67e12, "FLOP/s", _H100DS, "FP64 Tensor Core"),
            "fp32": Spec(67e12, "FLOP/s", _H100DS),
            "tf32": Spec(494.5e12, "FLOP/s", _H100DS, _HALF),
            "bf16": Spec(989.5e12, "FLOP/s", _H100DS, _HALF),
            "fp8": Spec(1979e12, "FLOP/s", _H100DS, _HALF),
        },
    },
    "h200": {
        "name": "NVIDIA H200 SXM",
        "vendor": "nvidia",
        "units": Spec(132, "SMs", _H100_SM, "the H200 is the GH100 SXM5 part of the H100 whitepaper"),
        **_hopper_sm(),
        "hbm_bytes": Spec(141e9, "bytes", _H200),
        "hbm_bw": Spec(4.8e12, "bytes/s", _H200),
        "link_bw": Spec(450e9, "bytes/s per direction", _H200,
                        "NVLink 900 GB/s is the sum of both directions"),
        "pcie_bw": Spec(64e9, "bytes/s per direction", _H100_SM,
                        "PCIe Gen5 x16: the datasheet's 128 GB/s is the sum of both directions"),
        "peak": {
            "fp64": Spec(67e12, "FLOP/s", _H200, "FP64 Tensor Core"),
            "fp32": Spec(67e12, "FLOP/s", _H200),
            "tf32": Spec(494.5e12, "FLOP/s", _H200, _HALF),
            "bf16": Spec(989.5e12, "FLOP/s", _H200, _HALF),
            "fp8": Spec(1979e12, "FLOP/s", _H200, _HALF),
        },
    },
    "mi300x": {
        "name": "AMD Instinct MI300X",
        "vendor": "amd",
        "units": Spec(304, "CUs", _MI300X),
        "lanes": Spec(64, "work-items/wavefront", _ROCM_SPECS),
        "simds_per_unit": Spec(4, "SIMDs/CU", _LLVM_OCC),
        "max_waves_per_simd": Spec(8, "waves/SIMD", _LLVM_OCC),
        "vgprs_per_simd_lane": Spec(512, "VGPRs/lane/SIMD", _LLVM_OCC,
                                    "unified VGPR+AGPR file of gfx90a/gfx94x"),
        "vgpr_alloc_unit": Spec(8, "VGPRs", _LLVM_OCC),
        "max_regs_per_thread": Spec(512, "VGPRs/work-item: 256 architected + 256 accumulation (AccVGPR)", _LLVM_OCC),
        "shared_per_unit": Spec(64 * KIB, "bytes LDS/CU", _ROCM_SPECS),
        "shared_per_block_max": Spec(64 * KIB, "bytes LDS/workgroup", _ROCM_SPECS),
        "max_threads_per_block": Spec(1024, "work-items/workgroup", _ROCM_SPECS),
        "shared_banks": Spec(32, "LDS banks of 4 bytes", "amd-cdna3-isa"),
        "hbm_bytes": Spec(192e9, "bytes", _MI300X),
        "l2_bytes": Spec(32 * 1024 * KIB, "bytes", _ROCM_SPECS, "4 MiB per XCD, 8 XCDs"),
        "infinity_cache_bytes": Spec(256 * 1024 * KIB, "bytes", _ROCM_SPECS,
                                     "the 256 MiB last-level Infinity Cache (MALL) in front of HBM"),
        "hbm_bw": Spec(5.3e12, "bytes/s", _MI300X),
        "link_bw": Spec(64e9, "bytes/s per direction per peer", _MI300X,
                        "Infinity Fabric link: 128 GB/s counted both directions"),
        "peak": {
            "fp64": Spec(163.4e12, "FLOP/s", _MI300X, "FP64 matrix"),
            "fp32": Spec(163.4e12, "FLOP/s", _MI300X, "FP32 vector, the same as FP32 matrix"),
            "tf32": Spec(653.7e12, "FLOP/s", _MI300X),
            "bf16": Spec(1307.4e12, "FLOP/s", _MI300X),
            "fp8": Spec(2614.9e12, "FLOP/s", _MI300X),
        },
    },
}

PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp8")
DEVICE_KEYS = tuple(DEVICES)


def value(device: str, field: str) -> float:
    """The plain number of ``DEVICES[device][field]``."""
    return DEVICES[device][field].value


def peak(device: str, precision: str) -> float:
    """Dense peak rate in FLOP/s of ``device`` at ``precision``."""
    return DEVICES[device]["peak"][precision].value


def as_plain() -> dict[str, Any]:
    """The table as JSON-ready dicts: ``{device: {field: value, ...}, "_cite": {...}}``."""
    out: dict[str, Any] = {}
    for key, dev in DEVICES.items():
        plain: dict[str, Any] = {}
        cites: dict[str, str] = {}
        for field, spec in dev.items():
            if isinstance(spec, Spec):
                plain[field] = spec.value
                cites[field] = spec.cite
            elif isinstance(spec, dict):
                plain[field] = {p: s.value for p, s in spec.items()}
                for p, s in spec.items():
                    cites[f"{field}.{p}"] = s.cite
            else:
                plain[field] = spec
        plain["cite"] = cites
        out[key] = plain
    return out
