"""Player 1, "Where the time goes" (module A01): a vector add's whole program.

A program that adds two vectors of ``n`` elements of ``b`` bytes on a GPU spends its
wall-clock time in four places:

$$ T = T_\\text{ctx} + 3\\,T_\\text{alloc} + \\frac{3 n b}{B_\\text{copy}} + \\Big(T_\\text{launch} + \\frac{3 n b}{B_\\text{HBM}}\\Big) $$

* context creation ``T_ctx`` (once per process, independent of ``n``), or nothing when the
  program reuses a context that is already warm (a long-lived process);
* three device allocations (``a``, ``b``, ``c``) of ``T_alloc`` each;
* copies: two vectors in, one out, ``3 n b`` bytes over the host link. From pinned host memory
  the copy engine moves them at the link rate ``B_link``; from pageable memory the driver
  stages them through a pinned buffer first [nvidia-cuda-best-practices], at the lower rate
  ``B_pageable`` (never above ``B_link``);
* the kernel: a launch overhead plus ``3 n b`` bytes of HBM traffic (two reads and
  one write per element) at the device's HBM bandwidth.

The kernel share is ``T_kernel / T``. Context, allocation, launch and link rates are
inputs (measure your own in A01's lab); the HBM bandwidth is the device's datasheet
figure, so the kernel time is a lower bound.
"""

from __future__ import annotations

from typing import Any, Mapping

from . import hardware
from ._common import clamp_inputs

INPUTS: dict[str, dict[str, Any]] = {
    "log2_n": {"kind": "int", "min": 10, "max": 32, "default": 20,
               "label": "Problem size, log2 of elements"},
    "bytes_per_element": {"kind": "choice", "choices": [2, 4, 8], "default": 4,
                          "label": "Bytes per element"},
    "device": {"kind": "choice", "choices": list(hardware.DEVICE_KEYS), "default": "h200",
               "label": "GPU"},
    "context_ms": {"kind": "float", "min": 0, "max": 5000, "default": 60,
                   "label": "Context creation (ms)"},
    "alloc_us": {"kind": "float", "min": 0, "max": 100000, "default": 200,
                 "label": "One allocation (µs)"},
    "context": {"kind": "choice", "choices": ["create", "reuse"], "default": "create",
                "label": "Context: create, or reuse a warm one"},
    "host_memory": {"kind": "choice", "choices": ["pageable", "pinned"], "default": "pageable",
                    "label": "Host memory of the copies"},
    # 64 GB/s: PCIe Gen5 x16, each way [nvidia-h100-whitepaper], as the MI300X's link
    # [amd-cdna3-whitepaper]; the rate pinned copies reach at best.
    "link_gbps": {"kind": "float", "min": 0.1, "max": 1000, "default": 64,
                  "label": "Host link, pinned copies (GB/s)"},
    # 7 GB/s: the A01 timeline lab's pageable copies on an H200, 12.6 MB (8.4 MB in, 4.2 MB
    # out at n = 2^20) in 1.334 + 0.462 ms (measurements/transcripts/A01-timeline-cuda-h200.txt).
    "pageable_gbps": {"kind": "float", "min": 0.1, "max": 1000, "default": 7,
                      "label": "Pageable copies, achieved (GB/s)"},
    "launch_us": {"kind": "float", "min": 0, "max": 1000, "default": 5,
                  "label": "Kernel launch overhead (µs)"},
}


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Seconds spent in each part of the program and the kernel's share."""
    v, clamped = clamp_inputs(INPUTS, raw)
    n = 2 ** v["log2_n"]
    nbytes = n * v["bytes_per_element"]
    hbm = hardware.value(v["device"], "hbm_bw")
    context = 0.0 if v["context"] == "reuse" else v["context_ms"] * 1e-3
    alloc = 3 * v["alloc_us"] * 1e-6
    gbps = v["link_gbps"] if v["host_memory"] == "pinned" else min(v["pageable_gbps"], v["link_gbps"])
    copies = 3 * nbytes / (gbps * 1e9)
    kernel = v["launch_us"] * 1e-6 + 3 * nbytes / hbm
    total = context + alloc + copies + kernel
    return {
        "inputs": v,
        "clamped": clamped,
        "elements": n,
        "bytes_moved": 3 * nbytes,
        "copy_gbps": gbps,
        "context_s": context,
        "alloc_s": alloc,
        "copies_s": copies,
        "kernel_s": kernel,
        "total_s": total,
        "kernel_share": kernel / total if total > 0 else 0.0,
    }
