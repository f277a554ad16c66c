"""Player 2, "Coalescing and bank conflicts" (module A02).

Global memory. Lane ``i`` of a 32-lane warp loads the element at byte address
``i * s * b`` (stride ``s`` elements of ``b`` bytes, aligned base). The memory system
moves 32-byte sectors; the request costs the number of distinct sectors its bytes fall
in:

$$ \\text{sectors} = \\Big|\\bigcup_{i=0}^{31} \\{\\lfloor (i s b + k)/32 \\rfloor : 0 \\le k < b\\}\\Big| $$

and the efficiency is the bytes the warp asked for over the bytes moved,
``32 b / (32 * sectors)`` (with stride 0 every lane asks for the same ``b`` bytes).

Shared memory. A tile ``tile[W][W + p]`` of ``b``-byte elements, read down a column
(lane ``i`` reads row ``i``, the transpose's read): lane ``i`` touches the 4-byte words
from ``i (W + p) b / 4`` on, and word ``w`` lives in bank ``w mod 32``. The conflict
degree is the largest number of *distinct* words that one bank must serve:

$$ \\text{degree} = \\max_{k} \\big|\\{w \\text{ touched} : w \\bmod 32 = k\\}\\big| $$

Lanes reading the same word are served by one broadcast, so they do not conflict.
"""

from __future__ import annotations

from typing import Any, Mapping

from ._common import clamp_inputs

LANES = 32
SECTOR = 32
BANKS = 32
WORD = 4

INPUTS: dict[str, dict[str, Any]] = {
    "stride": {"kind": "int", "min": 0, "max": 64, "default": 1,
               "label": "Stride between lanes (elements)"},
    "bytes_per_element": {"kind": "choice", "choices": [1, 2, 4, 8, 16], "default": 4,
                          "label": "Element size (bytes)"},
    "tile": {"kind": "int", "min": 1, "max": 128, "default": 32,
             "label": "Tile width W (elements)"},
    "padding": {"kind": "int", "min": 0, "max": 8, "default": 0,
                "label": "Row padding p (elements)"},
}


def sectors(stride: int, elem: int) -> int:
    """Distinct 32-byte sectors touched by one warp-wide load."""
    touched = set()
    for i in range(LANES):
        start = i * stride * elem
        for sector in range(start // SECTOR, (start + elem - 1) // SECTOR + 1):
            touched.add(sector)
    return len(touched)


def conflict_degree(tile: int, padding: int, elem: int) -> int:
    """Distinct 4-byte words per bank, worst bank, for a column read of the tile."""
    per_bank: dict[int, set[int]] = {}
    pitch = (tile + padding) * elem
    for i in range(min(LANES, tile)):
        start = i * pitch
        for w in range(start // WORD, (start + elem - 1) // WORD + 1):
            per_bank.setdefault(w % BANKS, set()).add(w)
    return max(len(words) for words in per_bank.values())


def compute(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Sectors per request, load efficiency and shared-memory conflict degree."""
    v, clamped = clamp_inputs(INPUTS, raw)
    s, b = v["stride"], v["bytes_per_element"]
    sec = sectors(s, b)
    asked = b if s == 0 else LANES * b
    ideal = -(-asked // SECTOR)
    degree = conflict_degree(v["tile"], v["padding"], b)
    return {
        "inputs": v,
        "clamped": clamped,
        "sectors": sec,
        "ideal_sectors": ideal,
        "bytes_requested": asked,
        "bytes_moved": sec * SECTOR,
        "efficiency": asked / (sec * SECTOR),
        "conflict_degree": degree,
        "shared_wavefronts": degree,
    }
