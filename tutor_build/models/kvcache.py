"""KV bytes per token from published model configs (module C03), and the paging arithmetic of a KV pool.

Pure functions over small frozen records, so the module's figures, its page table and its claims test all read
the same numbers. Every config field is the value of the model's published config.json (cited on the page by the
bibliography key in ``cite``); nothing here is measured.

Multi-head, grouped-query and multi-query attention cache a key and a value vector per KV head per layer:
    bytes/token = 2 (K and V) x layers x KV heads x head_dim x bytes per value.
Multi-head latent attention (DeepSeek-V2/V3) caches one compressed latent of ``kv_lora_rank`` values plus the
decoupled RoPE key of ``qk_rope_head_dim`` values per layer, shared by all heads:
    bytes/token = layers x (kv_lora_rank + qk_rope_head_dim) x bytes per value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelKV:
    name: str
    kind: str  # "MHA" | "GQA" | "MQA" | "MLA"
    layers: int
    q_heads: int
    kv_heads: int  # for MLA: the query heads (every head reads the one shared latent)
    head_dim: int  # for MLA: the query/key head dim if it were cached as multi-head (nope + rope)
    cite: str
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0  # MLA only: the value head dim of the uncompressed heads


# hidden_size / num_attention_heads where the config gives no head_dim (Llama 2, Llama 3.1, Mistral, Falcon).
MODELS: tuple[ModelKV, ...] = (
    ModelKV("Llama 2 7B", "MHA", 32, 32, 32, 4096 // 32, "llama2-7b-hf-config"),
    ModelKV("Llama 3.1 8B", "GQA", 32, 32, 8, 4096 // 32, "c03-llama31-8b-config"),
    ModelKV("Mistral 7B", "GQA", 32, 32, 8, 4096 // 32, "c03-mistral-7b-config"),
    ModelKV("Llama 3.1 70B", "GQA", 80, 64, 8, 8192 // 64, "c07-llama31-70b-config"),
    ModelKV("Falcon 7B", "MQA", 32, 71, 1, 4544 // 71, "c03-falcon-7b-config"),
    ModelKV("DeepSeek-V3", "MLA", 61, 128, 128, 128 + 64, "c03-deepseek-v3-config",
            kv_lora_rank=512, qk_rope_head_dim=64, v_head_dim=128),
)

BY_NAME = {m.name: m for m in MODELS}


def values_per_token_layer(m: ModelKV) -> int:
    """Values cached per token per layer."""
    if m.kind == "MLA":
        return m.kv_lora_rank + m.qk_rope_head_dim
    return 2 * m.kv_heads * m.head_dim


def bytes_per_token(m: ModelKV, bytes_per_value: float = 2) -> float:
    """KV cache bytes one token costs, all layers (bf16 = 2 bytes per value, fp8 = 1)."""
    return m.layers * values_per_token_layer(m) * bytes_per_value


def mha_equivalent_bytes(m: ModelKV, bytes_per_value: float = 2) -> float:
    """What the same model would cache per token with one K and V per query head (no sharing, no latent)."""
    if m.kind == "MLA":
        return m.layers * m.q_heads * (m.head_dim + m.v_head_dim) * bytes_per_value
    return 2 * m.layers * m.q_heads * m.head_dim * bytes_per_value


def page_bytes(page: int, kv_heads: int, head_dim: int, bytes_per_value: float = 2) -> float:
    """Bytes of K (or of V) in one page of one layer: page tokens x KV heads x head_dim."""
    return page * kv_heads * head_dim * bytes_per_value


def table_share(page: int, head_dim: int, bytes_per_value: float = 2, entry_bytes: int = 4) -> float:
    """Block-table bytes over K+V bytes for one program reading one KV head: one entry per page."""
    return entry_bytes / (page * 2 * head_dim * bytes_per_value)


def pages_for(tokens: int, page: int) -> int:
    return -(-tokens // page)


def prefix_pages(shared: int, users: list[int], page: int) -> tuple[int, int]:
    """Pages without and with sharing the full pages of a common prefix (closed form)."""
    plain = sum(pages_for(shared + n, page) for n in users)
    common = shared // page
    return plain, common + sum(pages_for(shared + n, page) - common for n in users)
