"""`tutor doctor`: which toolchains are here, and what each lab path can do on this machine."""

from __future__ import annotations

import argparse
import os

from .labs.toolchains import probe

ADVICE = {
    "nvcc": "install the CUDA toolkit (docs/SETUP.md#cuda)",
    "hipcc": "apt install hipcc, then build with HIP_PLATFORM=amd (docs/SETUP.md#hip)",
    "torch": "pip install torch (a CPU build is enough for the Triton interpreter; docs/SETUP.md#triton)",
    "triton": "pip install triton (docs/SETUP.md#triton)",
}


def main(args: argparse.Namespace) -> int:
    t = probe()
    rows = [
        ("nvcc", t.nvcc, "compiles the CUDA labs for Hopper (sm_90a)"),
        ("hipcc", t.hipcc + (" (HIP_PLATFORM=amd)" if t.hipcc else ""), "compiles the HIP labs for CDNA (gfx90a, gfx940)"),
        ("NVIDIA GPU", t.nvidia_gpu, "runs and benchmarks the CUDA labs"),
        ("AMD GPU", t.amd_gpu, "runs and benchmarks the HIP labs"),
        ("torch", t.torch, "runs the PyTorch labs, and hosts Triton"),
        ("triton", t.triton, "runs the Triton labs (on a CPU through TRITON_INTERPRET=1)"),
    ]
    print("Toolchains on this machine:")
    for name, found, purpose in rows:
        mark = "yes" if found else "no "
        advice = "" if found or name.endswith("GPU") else f"  -> {ADVICE.get(name, '')}"
        print(f"  [{mark}] {name:11s} {found or '-':32s} {purpose}{advice}")
    if t.hipcc and os.environ.get("HIP_PLATFORM") != "amd":
        print("  note: Debian's hipcc targets NVIDIA unless HIP_PLATFORM=amd; `tutor labs` sets it for you.")
    print("\nWhat each lab path can do here:")
    for vendor in ("cuda", "hip", "triton", "python"):
        can_run, why = t.can_run(vendor)
        if can_run:
            what = "build, verify and benchmark" if t.gpu else "verify on the CPU"
            if vendor == "triton" and not t.gpu:
                what = "verify on the CPU through the Triton interpreter"
        elif vendor in ("cuda", "hip") and t.can_build(vendor)[0]:
            what = f"compile only ({why})"
        else:
            what = f"nothing ({why})"
        print(f"  {vendor:7s} {what}")
    return 0
