"""Module B06 (data parallelism, ZeRO and FSDP): parameters, bytes per rank, bytes sent, DDP buckets.

A GPT-2 layer of width ``h`` holds ``12 h^2 + 13 h`` parameters (Q/K/V, attention output, the two MLP
matrices, their biases and two LayerNorms); the model adds the token and position tables and a final
LayerNorm, and ties the output layer to the token table:

$$ \\Psi = 12 L h^2 + 13 L h + (V + P) h + 2h $$

Mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes per parameter; ZeRO shards them over ``N`` ranks
(``training_memory.compute`` holds the same formula for the player). Per step and rank, a ring
all-reduce of the gradients sends ``2 (N-1)/N`` of their bytes; ZeRO-1 and -2 replace it by a
reduce-scatter of the gradients and an all-gather of the weights (the same ``2 (N-1)/N``), ZeRO-3 gathers
the weights twice (forward and backward): ``3 (N-1)/N`` [Rajbhandari et al. 2020, section 7].
"""

from __future__ import annotations

from typing import Iterable

from . import training_memory

MiB = 2**20

# Published GPT-2 shapes (Radford et al. 2019, table 2 and section 2.3).
GPT2 = {
    "gpt2": {"name": "GPT-2 (small)", "layers": 12, "hidden": 768, "heads": 12, "vocab": 50257, "ctx": 1024},
    "gpt2-xl": {"name": "GPT-2 XL", "layers": 48, "hidden": 1600, "heads": 25, "vocab": 50257, "ctx": 1024},
}
# The labs' CPU-rank models: GPT-2's layout at a size two CPU cores train in seconds.
LAB_SHAPES = {
    "quick": {"layers": 2, "hidden": 66, "heads": 6, "vocab": 1001, "ctx": 37},
    "full": {"layers": 4, "hidden": 198, "heads": 6, "vocab": 5003, "ctx": 129},
}
STAGES = (0, 1, 2, 3)


def gpt2_params(layers: int, hidden: int, vocab: int, ctx: int, **_) -> int:
    h = hidden
    return 12 * layers * h * h + 13 * layers * h + (vocab + ctx) * h + 2 * h


def gpt2_tensors(layers: int, hidden: int, vocab: int, ctx: int, **_) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every parameter tensor, in registration order (the output layer is tied)."""
    h = hidden
    out = [("wte", (vocab, h)), ("wpe", (ctx, h))]
    for i in range(layers):
        out += [(f"h.{i}.ln_1.weight", (h,)), (f"h.{i}.ln_1.bias", (h,)),
                (f"h.{i}.c_attn.weight", (3 * h, h)), (f"h.{i}.c_attn.bias", (3 * h,)),
                (f"h.{i}.attn_proj.weight", (h, h)), (f"h.{i}.attn_proj.bias", (h,)),
                (f"h.{i}.ln_2.weight", (h,)), (f"h.{i}.ln_2.bias", (h,)),
                (f"h.{i}.c_fc.weight", (4 * h, h)), (f"h.{i}.c_fc.bias", (4 * h,)),
                (f"h.{i}.mlp_proj.weight", (h, 4 * h)), (f"h.{i}.mlp_proj.bias", (h,))]
    return out + [("ln_f.weight", (h,)), ("ln_f.bias", (h,))]


def numel(shape: Iterable[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def per_rank(psi: float, n: int, stage: int) -> dict[str, float]:
    """Bytes per rank of weights, gradients and optimizer state (the player's formula)."""
    r = training_memory.compute({"params_b": psi / 1e9, "dp": n, "zero_stage": stage, "layers": 1,
                                 "hidden": 64, "heads": 1, "seq": 1, "micro_batch": 1})
    return {"weights": r["weights"], "gradients": r["gradients"], "optimizer": r["optimizer"],
            "states": r["weights"] + r["gradients"] + r["optimizer"]}


def bytes_per_param(n: int, stage: int) -> float:
    """16, 4 + 12/N, 2 + 14/N, 16/N."""
    return per_rank(1e9, n, stage)["states"] / 1e9


def sent_per_rank(psi: float, n: int, stage: int, elem: int = 2) -> float:
    """Bytes each rank sends per step for the gradients and weights, ring algorithms."""
    factor = 3 if stage == 3 else 2
    return factor * (n - 1) / n * psi * elem


def buckets(sizes: Iterable[int], limits: list[int]) -> list[int]:
    """DDP's bucket rule: fill in ready order; close once a bucket holds at least its limit."""
    out, open_bytes, k = [], 0, 0
    for nb in sizes:
        open_bytes += nb
        if open_bytes >= limits[min(k, len(limits) - 1)]:
            out.append(open_bytes)
            open_bytes, k = 0, k + 1
    if open_bytes:
        out.append(open_bytes)
    return out


def ready_sizes(cfg: dict, elem: int = 4) -> list[int]:
    """Gradient bytes in the order backward finishes them: the blocks from last to first, each in
    reverse registration order, then the two tables (both finish at the embedding's backward)."""
    t = gpt2_tensors(**cfg)
    body = [numel(s) * elem for name, s in reversed(t) if name not in ("wte", "wpe")]
    return body + [numel(dict(t)["wpe"]) * elem, numel(dict(t)["wte"]) * elem]


def ddp_buckets(cfg: dict, cap_mb: float | None = None, elem: int = 4) -> list[int]:
    limits = [MiB, 25 * MiB] if cap_mb is None else [int(cap_mb * MiB)] * 2
    return buckets(ready_sizes(cfg, elem), limits)
