"""Bytes moved by fused and unfused memory-bound operators (module B01).

Every count is per element of float32 data (4 bytes), for operators whose arithmetic is far below the
ridge point, so that time is bytes over bandwidth. The figures of B01, its claims tests and its pages
read these functions.
"""

from __future__ import annotations

FLOAT = 4  # bytes per float32


def chain_bytes(k: int, fused: bool) -> int:
    """Bytes per element of a chain of k elementwise operations: each unfused step reads its input and
    writes its output (8 bytes); fused, the chain reads once and writes once."""
    if k < 1:
        raise ValueError("a chain has at least one operation")
    return 2 * FLOAT if fused else 2 * FLOAT * k


def chain_saving(k: int) -> float:
    """The factor fusion divides the chain's bytes by: exactly k."""
    return chain_bytes(k, fused=False) / chain_bytes(k, fused=True)


def eager_chain_bytes(k: int, kernels_per_op: int = 3) -> int:
    """The lab's eager chain writes each operation as a multiply, an add and a clamp: 3 kernels of 8 bytes."""
    return 2 * FLOAT * kernels_per_op * k


# Softmax over a row: the passes over memory each variant makes, as (reads, writes) of the row.
SOFTMAX_PASSES = {
    "three_pass": (3, 1),  # max, then sum of exp, then exp / sum written: the row read three times
    "online": (2, 1),      # max and sum together (rescaled), then the write pass
    "one_pass": (1, 1),    # the row held on chip: read once, written once
}


def softmax_bytes(variant: str) -> int:
    reads, writes = SOFTMAX_PASSES[variant]
    return FLOAT * (reads + writes)


# Layernorm written as separate eager operations (labs/B01/triton/rows.py, layernorm_unfused): mean
# (read), x - mean (read, write), d * d (read, write), mean (read), d * rstd, * w, + b (read, write each).
LAYERNORM_UNFUSED_STEPS = [(1, 0), (1, 1), (1, 1), (1, 0), (1, 1), (1, 1), (1, 1)]


def layernorm_bytes(fused: bool) -> int:
    if fused:
        return 2 * FLOAT
    return FLOAT * sum(r + w for r, w in LAYERNORM_UNFUSED_STEPS)


def time_bound_s(elements: int, bytes_per_element: float, bandwidth: float) -> float:
    """The least time to move the bytes at a bandwidth in bytes/s."""
    return elements * bytes_per_element / bandwidth


def intensity(flop_per_element: float, bytes_per_element: float) -> float:
    return flop_per_element / bytes_per_element


def best_share(bytes_per_element: float, floor: float = 2 * FLOAT) -> float:
    """The largest share of the copy ceiling a variant can reach when credited with `floor` bytes an
    element but moving `bytes_per_element` from memory."""
    return floor / bytes_per_element


def issue_budget_per_warp(bytes_per_warp: float, bandwidth: float, units: int, clock_hz: float,
                          schedulers: int = 4) -> float:
    """Warp instructions the GPU can issue in the time one warp's bytes take at `bandwidth`: each of the
    `schedulers` of each of `units` SMs issues at most one warp instruction a clock. A kernel that
    executes more per warp cannot run at that bandwidth, whatever its FLOP count."""
    return units * schedulers * clock_hz * bytes_per_warp / bandwidth

