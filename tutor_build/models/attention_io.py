"""Player 8, "Attention IO" (module B03): HBM bytes of naive vs tiled attention.

For one head with sequence length ``N``, head dimension ``d`` and ``b``-byte elements:

Naive attention writes the score matrix ``S = Q K^T`` to HBM, reads it back for the
softmax, writes ``P``, and reads ``P`` again for ``P V``:

$$ \\text{bytes}_\\text{naive} = b\\,(4 N d + 4 N^2) $$

(read Q, K, V, write O: ``4Nd``; write S, read S, write P, read P: ``4N^2``).

Tiled attention (FlashAttention-2 loop order) keeps a ``B x d`` block of queries, a
block of keys and of values (``B x d`` each), the output accumulator (``B x d``) and the
``B x B`` score tile in on-chip memory of ``M`` bytes, with the largest ``B`` such that

$$ b\\,(4 B d + B^2) \\le M. $$

Each of the ``T_r = ceil(N / B)`` query blocks streams all of K and V once:

$$ \\text{bytes}_\\text{tiled} = b\\,(N d + 2 N d\\,T_r + N d). $$

Both are multiplied by ``batch x heads``. If even ``B = 1`` does not fit, the tiled
kernel cannot run with that SRAM and the model says so.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ._common import ceil_div, clamp_inputs

INPUTS: dict[str, dict[str, Any]] = {
    "log2_seq": {"kind": "int", "min": 6, "max": 20, "default": 12,
                 "label": "Sequence length, log2 N"},
    "head_dim": {"kind": "choice", "choices": [32, 64, 96, 128, 256], "default": 128,
                 "label": "Head dimension d"},
    "sram_kib": {"kind": "float", "min": 1, "max": 1024, "default": 227,
                 "label": "On-chip memory per block (KiB)"},
    "bytes_per_element": {"kind": "choice", "choices": [1, 2, 4], "default": 2,
                          "label": "Element size (bytes)"},
    "batch_heads": {"kind": "int", "min": 1, "max": 4096, "default": 32,
                    "label": "Batch x heads"},
}


def block_rows(d: int, sram_bytes: float, b: int) -> int:
    """Largest B with b (4 B d + B^2) <= sram_bytes (0 if none)."""
    m = sram_bytes / b
    # B^2 + 4 d B - m <= 0  ->  B <= -2d + sqrt(4 d^2 + m)
    x = int(math.floor(-2 * d + math.sqrt(4 * d * d + m)))
    while x > 0 and 4 * x * d + x * x > m:
        x -= 1
    while 4 * (x + 1) * d + (x + 1) ** 2 <= m:
        x += 1
    return max(x, 0)


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """HBM bytes of naive and tiled attention and their ratio."""
    v, clamped = clamp_inputs(INPUTS, raw)
    n = 2 ** v["log2_seq"]
    d, b, h = v["head_dim"], v["bytes_per_element"], v["batch_heads"]
    naive = b * (4 * n * d + 4 * n * n) * h
    blk = min(block_rows(d, v["sram_kib"] * 1024, b), n)
    if blk < 1:
        return {"inputs": v, "clamped": clamped, "seq": n, "naive_bytes": naive, "block": 0,
                "query_blocks": 0, "tiled_bytes": None, "ratio": None,
                "note": "the on-chip memory cannot hold one row of Q, K, V and O"}
    tr = ceil_div(n, blk)
    tiled = b * (2 * n * d + 2 * n * d * tr) * h
    return {"inputs": v, "clamped": clamped, "seq": n, "naive_bytes": naive, "block": blk,
            "query_blocks": tr, "tiled_bytes": tiled, "ratio": naive / tiled, "note": ""}


# ---------------------------------------------------------------- module B03: the counts its page derives
# The same algebra as compute(), one function per quantity, for one head (multiply by batch x heads).

def naive_kernel_bytes(n: int, d: int, b: int) -> dict[str, dict[str, int]]:
    """Bytes each kernel of the naive path must read and write at least, one head: scores = Q K^T (read Q
    and K, write S), softmax (read S, write P), P V (read P and V, write O)."""
    return {
        "naive_scores": {"read": b * 2 * n * d, "write": b * n * n},
        "naive_softmax": {"read": b * n * n, "write": b * n * n},
        "naive_pv": {"read": b * (n * n + n * d), "write": b * n * d},
    }


def naive_bytes(n: int, d: int, b: int) -> int:
    """b (4 N d + 4 N^2): the sum over the three kernels."""
    return sum(k["read"] + k["write"] for k in naive_kernel_bytes(n, d, b).values())


def compulsory_bytes(n: int, d: int, b: int) -> int:
    """b (4 N d): Q, K and V read once, O written once; no kernel can move less."""
    return b * 4 * n * d


def tiled_bytes(n: int, d: int, b: int, block: int) -> int:
    """b (2 N d + 2 N d T_r): Q read and O written once, K and V read once per query block of `block` rows,
    with no cache between the chip's blocks and HBM (the IO-complexity count)."""
    return b * (2 * n * d + 2 * n * d * ceil_div(n, block))


def flops(n: int, d: int, causal: bool = False) -> float:
    """4 N^2 d for one head (Q K^T and P V, 2 N^2 d each); causal counts half the score matrix."""
    full = 4.0 * n * n * d
    return full / 2 if causal else full


def visible_fraction(n: int) -> float:
    """The share of the N x N scores a causal row may see: N (N + 1) / 2 of N^2."""
    return n * (n + 1) / 2 / (n * n)


def causal_blocks(n: int, block_m: int, block_n: int) -> dict[str, int]:
    """Blocks of the score matrix the Triton kernel visits when causal (block_m a multiple of block_n): for
    query block r (rows r*block_m ..), `whole` blocks of keys below its first row need no mask, `masked` ones
    cross the diagonal or the end of the sequence, the rest (`skipped`) lie above the diagonal."""
    rows, cols = ceil_div(n, block_m), ceil_div(n, block_n)
    whole = masked = 0
    for r in range(rows):
        start = r * block_m
        end = min(n, start + block_m)
        w = start // block_n
        whole += w
        masked += ceil_div(end, block_n) - w
    return {"whole": whole, "masked": masked, "skipped": rows * cols - whole - masked, "total": rows * cols}
