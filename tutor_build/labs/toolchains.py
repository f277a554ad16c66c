"""What this machine can do: compilers, GPUs, Python packages. Probed once, never raising."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass


def _run(cmd: list[str], env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr if done.returncode == 0 else ""


@dataclass(frozen=True)
class Toolchains:
    nvcc: str  # version text, "" if absent
    hipcc: str
    nvidia_gpu: str  # GPU name, "" if none
    amd_gpu: str
    torch: str
    triton: str

    def can_build(self, vendor: str) -> tuple[bool, str]:
        if vendor == "cuda":
            return (bool(self.nvcc), "" if self.nvcc else "nvcc not found (install the CUDA toolkit, docs/SETUP.md)")
        if vendor == "hip":
            return (bool(self.hipcc), "" if self.hipcc else "hipcc not found (apt install hipcc, docs/SETUP.md)")
        return (False, f"{vendor} labs are not compiled")

    def can_run(self, vendor: str) -> tuple[bool, str]:
        if vendor == "cuda":
            if not self.nvcc:
                return False, "nvcc not found"
            return (bool(self.nvidia_gpu), "" if self.nvidia_gpu else "no NVIDIA GPU on this machine")
        if vendor == "hip":
            if not self.hipcc:
                return False, "hipcc not found"
            return (bool(self.amd_gpu), "" if self.amd_gpu else "no AMD GPU on this machine: HIP labs are compiled only")
        if not self.torch:
            return False, "PyTorch is not installed (pip install torch)"
        if vendor == "triton" and not self.triton:
            return False, "Triton is not installed (pip install triton)"
        return True, ""

    @property
    def gpu(self) -> str:
        return self.nvidia_gpu or self.amd_gpu


def _version(module: str) -> str:
    if importlib.util.find_spec(module) is None:
        return ""
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001 - a broken install reads as absent
        return "unknown"


@functools.lru_cache(maxsize=1)
def probe() -> Toolchains:
    nvcc = ""
    if shutil.which("nvcc"):
        m = re.search(r"release (\d+\.\d+)", _run(["nvcc", "--version"]))
        nvcc = f"CUDA {m.group(1)}" if m else "CUDA"
    hipcc = ""
    if shutil.which("hipcc"):
        env = dict(os.environ, HIP_PLATFORM="amd")
        out = _run(["hipcc", "--version"], env)
        m = re.search(r"HIP version: (\S+)", out)
        hipcc = f"HIP {m.group(1)}" if m else ("HIP" if out or shutil.which("hipcc") else "")
    nvidia = ""
    if shutil.which("nvidia-smi"):
        nvidia = _run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).strip().splitlines()[:1]
        nvidia = nvidia[0].strip() if nvidia else ""
    amd = ""
    if shutil.which("rocminfo") and os.path.exists("/dev/kfd"):
        m = re.search(r"Marketing Name:\s+(AMD Instinct.*|AMD Radeon.*)", _run(["rocminfo"]))
        amd = m.group(1).strip() if m else ""
    return Toolchains(nvcc, hipcc, nvidia, amd, _version("torch"), _version("triton"))
