"""Line-for-line CUDA <-> HIP comparison under the course's CUDA->HIP name map."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

VENDOR_SPECIFIC = "// vendor-specific"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Course-local names that the general map cannot know.
COURSE_MAP = {
    "tutor_lab.cuh": "tutor_lab.hip.h",
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor",
    "__shfl_sync": "__shfl",
    "__shfl_up_sync": "__shfl_up",
}


def name_map() -> dict[str, str]:
    try:
        from ..hipify_map import CUDA_TO_HIP  # built from PyTorch's hipify tables where available
    except ImportError:
        CUDA_TO_HIP = {}
    merged = dict(CUDA_TO_HIP)
    merged.update(COURSE_MAP)
    return merged


def translate(line: str, mapping: dict[str, str]) -> str:
    for cuda_name, hip_name in COURSE_MAP.items():
        if "." in cuda_name or "/" in cuda_name:
            line = line.replace(cuda_name, hip_name)
    line = IDENT.sub(lambda m: mapping.get(m.group(0), _prefix(m.group(0))), line)
    return line


@functools.lru_cache(maxsize=None)  # a lab's few hundred names recur on every line
def _prefix(name: str) -> str:
    """cudaFoo -> hipFoo, CUDA_FOO -> HIP_FOO for runtime names the table lacks."""
    if re.match(r"^cuda[A-Z]", name):
        return "hip" + name[4:]
    if re.match(r"^CUDA_[A-Z]", name):
        return "HIP_" + name[5:]
    return name


@dataclass(frozen=True)
class Mismatch:
    cuda_path: str
    hip_path: str
    line: int
    cuda_line: str
    hip_line: str
    reason: str


def compare(cuda_text: str, hip_text: str, cuda_path: str, hip_path: str, mapping: dict[str, str]) -> Mismatch | None:
    """The first line pair that differs beyond the map, or None."""
    cuda_lines, hip_lines = cuda_text.splitlines(), hip_text.splitlines()
    for i in range(max(len(cuda_lines), len(hip_lines))):
        if i >= len(cuda_lines) or i >= len(hip_lines):
            which = hip_path if i >= len(cuda_lines) else cuda_path
            return Mismatch(cuda_path, hip_path, i + 1, cuda_lines[i] if i < len(cuda_lines) else "",
                            hip_lines[i] if i < len(hip_lines) else "", f"only {which} has line {i + 1}")
        cuda_line, hip_line = cuda_lines[i], hip_lines[i]
        if cuda_line.rstrip().endswith(VENDOR_SPECIFIC) and hip_line.rstrip().endswith(VENDOR_SPECIFIC):
            continue
        if translate(cuda_line, mapping).rstrip() != hip_line.rstrip():
            return Mismatch(cuda_path, hip_path, i + 1, cuda_line, hip_line, "differs beyond the CUDA->HIP map")
    return None


def pairs(root: Path, lab_id: str | None = None) -> list[tuple[str, str]]:
    """(cuda, hip) relative paths for every CUDA file that should have a HIP twin, headers included."""
    root = Path(root)
    found = []
    ids = [lab_id] if lab_id else sorted(p.name for p in (root / "labs").iterdir() if p.is_dir())
    for ident in ids:
        for cu in sorted((root / "labs" / ident / "cuda").glob("*.cu*")):
            hip_name = "tutor_lab.hip.h" if cu.name == "tutor_lab.cuh" else cu.stem + ".hip"
            found.append((cu.relative_to(root).as_posix(), f"labs/{ident}/hip/{hip_name}"))
    return found


def check_pairs(root: Path, lab_id: str | None = None) -> list[Mismatch]:
    mapping = name_map()
    out = []
    for cuda_rel, hip_rel in pairs(root, lab_id):
        hip = Path(root) / hip_rel
        if not hip.is_file():
            out.append(Mismatch(cuda_rel, hip_rel, 1, "", "", "has no HIP counterpart"))
            continue
        cuda_text = (Path(root) / cuda_rel).read_text(encoding="utf-8", errors="replace")
        found = compare(cuda_text, hip.read_text(encoding="utf-8", errors="replace"), cuda_rel, hip_rel, mapping)
        if found:
            out.append(found)
    return out
