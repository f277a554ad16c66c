"""Module B08: the bytes one transformer layer keeps for backward, term by term, and the FLOPs that
recomputing them costs.

Two inventories of one pre-norm layer (sequence ``s``, micro-batch ``b``, hidden ``h``, ``a`` heads):

* ``PAPER_TERMS``: Korthikanti et al. (2022), 16-bit activations with dropout, bytes as multiples of
  ``sbh`` and ``a s^2 b``; their sum is ``sbh (34 + 5 a s / h)``.
* ``BLOCK_TERMS``: the block of lab B08/recompute (no dropout), in elements of the activation type; their
  sum is ``16 sbh + a s^2 b`` elements, plus four fp32 LayerNorm rows of ``sb`` values.

Each term lists the modes that keep it: ``none`` (nothing recomputed), ``selective`` (the attention core
recomputed: Q K^T, softmax, dropout, P V) and ``full`` (only the layer's input kept).
The lab computes its own prediction; tests/claims/test_b08.py checks both agree.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("none", "selective", "full")


@dataclass(frozen=True)
class Term:
    name: str
    sbh: float  # multiple of s*b*h (bytes for the paper, elements for the block)
    as2b: float  # multiple of a*s*s*b
    keep: tuple[str, ...]  # the modes that keep it


PAPER_TERMS = (
    Term("LayerNorm 1 input", 2, 0, ("none", "selective", "full")),
    Term("QKV projection input", 2, 0, ("none", "selective")),
    Term("Q and K (for Q K^T)", 4, 0, ("none", "selective")),
    Term("softmax output", 0, 2, ("none",)),
    Term("attention dropout mask", 0, 1, ("none",)),
    Term("attention dropout output (for P V)", 0, 2, ("none",)),
    Term("V (for P V)", 2, 0, ("none", "selective")),
    Term("output projection input", 2, 0, ("none", "selective")),
    Term("attention output dropout mask", 1, 0, ("none", "selective")),
    Term("LayerNorm 2 input", 2, 0, ("none", "selective")),
    Term("MLP first linear input", 2, 0, ("none", "selective")),
    Term("GeLU input", 8, 0, ("none", "selective")),
    Term("MLP second linear input", 8, 0, ("none", "selective")),
    Term("MLP dropout mask", 1, 0, ("none", "selective")),
)

BLOCK_TERMS = (
    Term("LayerNorm 1 input (the block's input)", 1, 0, ("none", "selective", "full")),
    Term("LayerNorm 1 output (QKV input)", 1, 0, ("none", "selective")),
    Term("Q, K, V (one QKV output)", 3, 0, ("none", "selective")),
    Term("softmax output P (also P V's input)", 0, 1, ("none",)),
    Term("attention output (projection input)", 1, 0, ("none", "selective")),
    Term("LayerNorm 2 input", 1, 0, ("none", "selective")),
    Term("LayerNorm 2 output (MLP input)", 1, 0, ("none", "selective")),
    Term("GELU input", 4, 0, ("none", "selective")),
    Term("GELU output (second linear input)", 4, 0, ("none", "selective")),
)

GPT3_175B = {"h": 12288, "a": 96, "s": 2048, "b": 1, "layers": 96}  # Brown et al. (2020), table 2.1


def _sum(terms, mode: str) -> tuple[float, float]:
    kept = [t for t in terms if mode in t.keep]
    return sum(t.sbh for t in kept), sum(t.as2b for t in kept)


def coefficients(mode: str, paper: bool = False) -> tuple[float, float]:
    """(multiple of sbh, multiple of a s^2 b) kept in `mode`: bytes for the paper, elements for the block."""
    return _sum(PAPER_TERMS if paper else BLOCK_TERMS, mode)


def paper_bytes(mode: str, s: int, b: int, h: int, a: int) -> float:
    """Korthikanti et al. (2022): sbh(34 + 5as/h), 34 sbh, 2 sbh."""
    c, q = coefficients(mode, paper=True)
    return c * s * b * h + q * a * s * s * b


def ln_stats_bytes(s: int, b: int) -> int:
    """Two LayerNorms, each keeping a mean and a reciprocal standard deviation per row, in fp32."""
    return 2 * 2 * s * b * 4


def block_bytes(mode: str, s: int, b: int, h: int, a: int, elem: int = 2, core: str = "math") -> int:
    """The lab's block: `elem` bytes per activation; the fused core ("sdpa") keeps an fp32 logsumexp row per
    head and query instead of the s x s probabilities. Full recompute keeps the input alone."""
    c, q = coefficients(mode)
    if mode == "full":
        return int(elem * c * s * b * h)
    total = elem * (c * s * b * h) + ln_stats_bytes(s, b)
    if mode == "none":
        total += elem * q * a * s * s * b if core == "math" else 4 * b * a * s
    return int(total)


def forward_flops(s: int, b: int, h: int) -> int:
    """Matrix-product FLOPs of one layer's forward: QKV 6bsh^2, Q K^T 2bs^2h, P V 2bs^2h, projection 2bsh^2,
    MLP 16bsh^2: 24 b s h^2 + 4 b s^2 h."""
    return 24 * b * s * h * h + 4 * b * s * s * h


def step_flops(mode: str, s: int, b: int, h: int) -> int:
    """Forward + backward (backward = twice the forward), plus what the mode recomputes."""
    f = forward_flops(s, b, h)
    extra = {"none": 0, "offload": 0, "selective": 4 * b * s * s * h, "full": f}[mode]
    return 3 * f + extra


def overhead(mode: str, s: int, b: int, h: int) -> float:
    """Extra FLOPs of `mode` as a fraction of the plain step: 1/3 for full, s/(18h + 3s) for selective."""
    return step_flops(mode, s, b, h) / step_flops("none", s, b, h) - 1.0


def flops_per_byte_saved(mode: str, s: int, b: int, h: int, a: int, elem: int = 2) -> float:
    """FLOPs recomputed per byte of saved activation the mode gives up, against no recompute."""
    saved = block_bytes("none", s, b, h, a, elem) - block_bytes(mode, s, b, h, a, elem)
    return (step_flops(mode, s, b, h) - step_flops("none", s, b, h)) / saved
