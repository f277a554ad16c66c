"""The course's CUDA -> HIP name map.

``CUDA_TO_HIP`` is read from PyTorch's own hipify tables
(``torch/utils/hipify/cuda_to_hip_mappings.py``) when PyTorch is installed; the table file
is loaded on its own, without importing torch, so this stays fast. Without PyTorch a small
fallback table covers the runtime names the labs use. Either way the course's additions
(warp shuffles, the lab header) are applied on top. The lab counterpart check imports
``CUDA_TO_HIP``; the CUDA<->HIP reference sheet renders ``markdown_table()``.
"""

from __future__ import annotations

import importlib.util
from importlib import metadata
from pathlib import Path

# Runtime names the labs use, for machines without PyTorch.
FALLBACK: dict[str, str] = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cuda_fp16.h": "hip/hip_fp16.h",
    "cuda_bf16.h": "hip/hip_bf16.h",
    "cublas_v2.h": "hipblas/hipblas.h",
    "cudaError_t": "hipError_t",
    "cudaSuccess": "hipSuccess",
    "cudaGetLastError": "hipGetLastError",
    "cudaGetErrorString": "hipGetErrorString",
    "cudaGetErrorName": "hipGetErrorName",
    "cudaMalloc": "hipMalloc",
    "cudaFree": "hipFree",
    "cudaMallocHost": "hipHostMalloc",
    "cudaFreeHost": "hipHostFree",
    "cudaMemcpy": "hipMemcpy",
    "cudaMemcpyAsync": "hipMemcpyAsync",
    "cudaMemset": "hipMemset",
    "cudaMemcpyHostToDevice": "hipMemcpyHostToDevice",
    "cudaMemcpyDeviceToHost": "hipMemcpyDeviceToHost",
    "cudaMemcpyDeviceToDevice": "hipMemcpyDeviceToDevice",
    "cudaDeviceSynchronize": "hipDeviceSynchronize",
    "cudaSetDevice": "hipSetDevice",
    "cudaGetDeviceCount": "hipGetDeviceCount",
    "cudaGetDeviceProperties": "hipGetDeviceProperties",
    "cudaDeviceProp": "hipDeviceProp_t",
    "cudaStream_t": "hipStream_t",
    "cudaStreamCreate": "hipStreamCreate",
    "cudaStreamDestroy": "hipStreamDestroy",
    "cudaStreamSynchronize": "hipStreamSynchronize",
    "cudaEvent_t": "hipEvent_t",
    "cudaEventCreate": "hipEventCreate",
    "cudaEventRecord": "hipEventRecord",
    "cudaEventSynchronize": "hipEventSynchronize",
    "cudaEventElapsedTime": "hipEventElapsedTime",
    "cudaEventDestroy": "hipEventDestroy",
    "cudaStreamBeginCapture": "hipStreamBeginCapture",
    "cudaStreamEndCapture": "hipStreamEndCapture",
    "cudaGraph_t": "hipGraph_t",
    "cudaGraphExec_t": "hipGraphExec_t",
    "cudaGraphInstantiate": "hipGraphInstantiate",
    "cudaGraphLaunch": "hipGraphLaunch",
    "cudaFuncSetAttribute": "hipFuncSetAttribute",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor": "hipOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaDeviceCanAccessPeer": "hipDeviceCanAccessPeer",
    "cudaDeviceEnablePeerAccess": "hipDeviceEnablePeerAccess",
    "cudaMemcpyPeerAsync": "hipMemcpyPeerAsync",
    "__nv_bfloat16": "__hip_bfloat16",
    "cublasHandle_t": "hipblasHandle_t",
    "cublasCreate": "hipblasCreate",
    "cublasSgemm": "hipblasSgemm",
    "cublasGemmEx": "hipblasGemmEx",
}

# Names PyTorch's tables leave alone but the course's HIP labs spell differently.
COURSE_ADDITIONS: dict[str, str] = {
    "tutor_lab.cuh": "tutor_lab.hip.h",
    "__shfl_sync": "__shfl",
    "__shfl_up_sync": "__shfl_up",
    "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor",
    "__ballot_sync": "__ballot",
    "cub": "hipcub",  # the namespace: PyTorch's table maps "cub::" as one token, the checker sees "cub"
}

_TORCH_TABLES = ("CUDA_TYPE_NAME_MAP", "CUDA_IDENTIFIER_MAP", "CUDA_INCLUDE_MAP", "CUDA_SPECIAL_MAP")


def _torch_tables() -> tuple[dict[str, str], str] | None:
    """PyTorch's generic CUDA tables (not its PyTorch/Caffe2-specific ones), or None."""
    try:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(list(spec.submodule_search_locations)[0]) / "utils" / "hipify" / "cuda_to_hip_mappings.py"
        if not path.is_file():
            return None
        mod_spec = importlib.util.spec_from_file_location("_tutor_cuda_to_hip_mappings", path)
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
        table: dict[str, str] = {}
        for name in _TORCH_TABLES:
            for cuda, hip in getattr(module, name, {}).items():
                hip_name = hip[0] if isinstance(hip, tuple) else hip
                if isinstance(cuda, str) and isinstance(hip_name, str):
                    table.setdefault(cuda, hip_name)
        if not table:
            return None
        try:
            torch_version = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch_version = "unknown version"
        return table, f"PyTorch {torch_version} (torch.utils.hipify)"
    except Exception:  # any trouble reading a third-party table: use the fallback
        return None


def _build() -> tuple[dict[str, str], str]:
    found = _torch_tables()
    table, source = found if found else (dict(FALLBACK), "the course's fallback table")
    table.update(COURSE_ADDITIONS)
    return table, source


CUDA_TO_HIP, SOURCE = _build()

# What the reference sheet shows: (group, CUDA name). The HIP side always comes from CUDA_TO_HIP.
SHEET_NAMES: tuple[tuple[str, str], ...] = (
    ("Headers", "cuda_runtime.h"), ("Headers", "cuda_fp16.h"), ("Headers", "cuda_bf16.h"),
    ("Headers", "cublas_v2.h"), ("Headers", "tutor_lab.cuh"),
    ("Errors", "cudaError_t"), ("Errors", "cudaSuccess"), ("Errors", "cudaGetLastError"),
    ("Errors", "cudaGetErrorString"),
    ("Memory", "cudaMalloc"), ("Memory", "cudaFree"), ("Memory", "cudaMallocHost"),
    ("Memory", "cudaFreeHost"), ("Memory", "cudaMemcpy"), ("Memory", "cudaMemcpyAsync"),
    ("Memory", "cudaMemset"), ("Memory", "cudaMemcpyHostToDevice"), ("Memory", "cudaMemcpyDeviceToHost"),
    ("Memory", "cudaMemcpyDeviceToDevice"),
    ("Device", "cudaSetDevice"), ("Device", "cudaGetDeviceCount"), ("Device", "cudaGetDeviceProperties"),
    ("Device", "cudaDeviceProp"), ("Device", "cudaDeviceSynchronize"), ("Device", "cudaFuncSetAttribute"),
    ("Device", "cudaOccupancyMaxActiveBlocksPerMultiprocessor"),
    ("Streams and events", "cudaStream_t"), ("Streams and events", "cudaStreamCreate"),
    ("Streams and events", "cudaStreamSynchronize"), ("Streams and events", "cudaEvent_t"),
    ("Streams and events", "cudaEventCreate"), ("Streams and events", "cudaEventRecord"),
    ("Streams and events", "cudaEventSynchronize"), ("Streams and events", "cudaEventElapsedTime"),
    ("Graphs", "cudaStreamBeginCapture"), ("Graphs", "cudaStreamEndCapture"),
    ("Graphs", "cudaGraphInstantiate"), ("Graphs", "cudaGraphLaunch"),
    ("Peer access", "cudaDeviceCanAccessPeer"), ("Peer access", "cudaDeviceEnablePeerAccess"),
    ("Peer access", "cudaMemcpyPeerAsync"),
    ("Warp and wavefront", "__shfl_sync"), ("Warp and wavefront", "__shfl_down_sync"),
    ("Warp and wavefront", "__shfl_xor_sync"), ("Warp and wavefront", "__ballot_sync"),
    ("Types", "__nv_bfloat16"),
    ("Libraries", "cublasHandle_t"), ("Libraries", "cublasCreate"), ("Libraries", "cublasSgemm"),
    ("Libraries", "cublasGemmEx"),
)


def sheet_rows() -> list[tuple[str, str, str]]:
    """(group, CUDA name, HIP name) for every sheet name the map knows, in sheet order."""
    return [(group, cuda, CUDA_TO_HIP[cuda]) for group, cuda in SHEET_NAMES if cuda in CUDA_TO_HIP]


def markdown_table() -> str:
    """The sheet's table as Markdown; the plugin substitutes it for ``{{ hip_map_table() }}``."""
    lines = ["| Group | CUDA | HIP |", "|---|---|---|"]
    previous = None
    for group, cuda, hip in sheet_rows():
        lines.append(f"| {group if group != previous else ''} | `{cuda}` | `{hip}` |")
        previous = group
    lines.append("")
    lines.append(f"Generated from {SOURCE}, plus the course's own additions "
                 f"({len(CUDA_TO_HIP)} names in the full map).")
    return "\n".join(lines) + "\n"


def hipify(text: str) -> str:
    """Rename every whole CUDA identifier in `text` that the map knows (longest names first)."""
    import re

    names = sorted((k for k in CUDA_TO_HIP if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)), key=len, reverse=True)
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: CUDA_TO_HIP[m.group(1)], text)
