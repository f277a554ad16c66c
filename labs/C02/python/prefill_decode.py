"""C02 lab: prefill_decode -- where the time of one request goes: the prompt in one pass, then one token a step.

A Llama-architecture decoder (RMSNorm, grouped-query attention with rotary positions, SwiGLU MLP, untied
output head) with a KV cache. On the GPU it has Llama 3.1 8B's published shapes (32 layers, h = 4096,
32 query heads and 8 KV heads of 128, MLP 14336, vocabulary 128256) and random bf16 weights: nothing is
downloaded, and random weights move the same bytes and do the same FLOPs as trained ones. On the CPU it has
a tiny config of odd sizes, in fp32.

  prefill(tokens, cache)      the whole prompt (B sequences of T tokens) in one forward: writes positions
                              0..T-1 of the cache, returns the logits (time to first token, TTFT).
  decode_step(tokens, pos)    one new token per sequence at position pos: writes position pos of the cache,
                              attends over positions 0..pos, returns the logits (time per output token, TPOT).

Checks (fresh random weights and tokens, odd batch, odd prompt and decode lengths, NaN fails): prefill then
decode, token by token, gives the logits of a float64 reference that recomputes the whole sequence with no
cache, at every position; the FLOPs torch's FlopCounterMode counts in one prefill and one decode step equal
step_flops(), and the bytes of the weights and cache equal step_bytes()'s terms; decode_kernels() splits those
terms into the step's kernels without losing one; torch.profiler counts the same work for every layer; and one
bf16 decode step (on a GPU: 2 layers of the bench's shapes at batch 512, with the GPU's attention kernel) gives
the logits of the same step in fp32 to a bf16 tolerance.
With --bench on a GPU: the copy bandwidth and torch.mm's bf16 rate (the two ceilings), torch.mm at the decode
shapes, F.linear at every weight shape of a layer and the head at batch 128..512, prefill at several prompt
lengths, and decode steps replayed from CUDA graphs at batch 1..512 for a short and a long context, each beside
max(bytes / bandwidth, FLOPs / rate) over the whole step and again beside the same bound summed kernel by
kernel, all from the same run; last, the kernels one eager step launches (torch.profiler) and the kernel nodes
of its CUDA graph.

Run:  python labs/C02/python/prefill_decode.py [--quick] [--bench] [--seed N]
"""

from __future__ import annotations

import json
import math
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "prefill_decode"
# Llama 3.1 8B's config.json (meta-llama/Llama-3.1-8B): the shapes, the norm epsilon and the rotary settings.
LLAMA31_8B = dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, mlp=14336, vocab=128256,
                  eps=1e-5, theta=500000.0, rope_factor=8.0, low_freq=1.0, high_freq=4.0, old_ctx=8192)
PREFILL_T = (32, 128, 512, 2048, 8192)  # prompt lengths, batch 1
DECODE = {128: (1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512),
          1024: (1, 16, 64, 128, 192)}  # context length -> batch sizes
MM_M = (1, 16, 64, 128, 256, 384, 512, 4096)  # rows of torch.mm on the MLP's up projection
LINEAR_M = (128, 192, 256, 384, 448, 512)  # rows of F.linear at every weight shape, around the knee
KERNEL_COUNT_B = (1, 256)  # batches whose eager decode step's kernels are counted (context 128)
BF16_ATOL, BF16_RTOL = 0.03, 0.03  # bf16 step against fp32: atol as a fraction of the largest |logit|


def linear_shapes(cfg):
    """(name, out features N, in features K) of each product decode_step calls through F.linear."""
    h, d, nh, nkv = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"]
    return (("qkv", (nh + 2 * nkv) * d, h), ("out", h, nh * d), ("gate_up", 2 * cfg["mlp"], h),
            ("down", h, cfg["mlp"]), ("head", cfg["vocab"], h))


# ---------------------------------------------------------------- the model
def make_weights(cfg, seed, device, dtype):
    """Random weights with the config's shapes; each matrix scaled by 1/sqrt(fan-in) so 32 layers stay finite.
    Q, K and V are one matrix, and so are the MLP's gate and up projections (one product each)."""
    g = torch.Generator(device=device).manual_seed(seed)
    h, d = cfg["hidden"], cfg["head_dim"]
    qkv = (cfg["heads"] + 2 * cfg["kv_heads"]) * d

    def mat(rows, cols):
        w = torch.randn(rows, cols, generator=g, device=device, dtype=dtype)
        return w.mul_(cols ** -0.5)

    def norm():
        return (1.0 + 0.1 * torch.randn(h, generator=g, device=device)).to(dtype)

    layers = [dict(norm1=norm(), wqkv=mat(qkv, h), wo=mat(h, cfg["heads"] * d), norm2=norm(),
                   w13=mat(2 * cfg["mlp"], h), w2=mat(h, cfg["mlp"])) for _ in range(cfg["layers"])]
    return dict(embed=torch.randn(cfg["vocab"], h, generator=g, device=device, dtype=dtype), layers=layers,
                norm=norm(), head=mat(cfg["vocab"], h))


def rope_tables(cfg, positions, device):
    """cos and sin of every position x frequency, with Llama 3.1's frequency scaling ("rope_type": "llama3"):
    wavelengths longer than old_ctx / low_freq are stretched by rope_factor, shorter than old_ctx / high_freq
    kept, and those between blended."""
    d = cfg["head_dim"]
    inv = 1.0 / cfg["theta"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    wavelen = 2 * math.pi / inv
    low, high = cfg["old_ctx"] / cfg["low_freq"], cfg["old_ctx"] / cfg["high_freq"]
    smooth = (cfg["old_ctx"] / wavelen - cfg["low_freq"]) / (cfg["high_freq"] - cfg["low_freq"])
    blended = (1 - smooth) * inv / cfg["rope_factor"] + smooth * inv
    inv = torch.where(wavelen > low, inv / cfg["rope_factor"], torch.where(wavelen < high, inv, blended))
    ang = torch.arange(positions, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float().to(device), ang.sin().float().to(device)


def rotate(x, cos, sin):
    """Rotary position embedding on the last dimension (its two halves are the pairs), at fp32."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos.float(), sin.float()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def new_cache(cfg, batch, length, device, dtype):
    """Keys and values of every layer: (layers, 2, batch, kv_heads, length, head_dim)."""
    return torch.zeros(cfg["layers"], 2, batch, cfg["kv_heads"], length, cfg["head_dim"], device=device, dtype=dtype)


def mlp(x, layer, cfg):
    y = F.rms_norm(x, (cfg["hidden"],), layer["norm2"], cfg["eps"])
    gate, up = F.linear(y, layer["w13"]).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, layer["w2"])


def prefill(tokens, cache, w, cfg, rope, all_logits=False):
    """The prompt in one pass: tokens (B, T) -> logits of the last position (B, V), or of all (B, T, V).
    Fills positions 0..T-1 of the cache."""
    B, T = tokens.shape
    nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    cos, sin = rope[0][:T], rope[1][:T]
    x = F.embedding(tokens, w["embed"])
    for i, layer in enumerate(w["layers"]):
        y = F.rms_norm(x, (cfg["hidden"],), layer["norm1"], cfg["eps"])
        q, k, v = F.linear(y, layer["wqkv"]).split([nh * d, nkv * d, nkv * d], dim=-1)
        q = rotate(q.view(B, T, nh, d).transpose(1, 2), cos, sin)  # (B, nh, T, d)
        k = rotate(k.view(B, T, nkv, d).transpose(1, 2), cos, sin)  # (B, nkv, T, d)
        v = v.view(B, T, nkv, d).transpose(1, 2)
        cache[i, 0, :B, :, :T] = k
        cache[i, 1, :B, :, :T] = v
        g = nh // nkv  # query heads per KV head: head j reads KV head j // g
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1),
                                           is_causal=True)
        x = x + F.linear(o.transpose(1, 2).reshape(B, T, nh * d), layer["wo"])
        x = mlp(x, layer, cfg)
    x = F.rms_norm(x if all_logits else x[:, -1], (cfg["hidden"],), w["norm"], cfg["eps"])
    return F.linear(x, w["head"])


def decode_step(tokens, pos, cache, w, cfg, rope):
    """One new token per sequence: tokens (B,) at position pos -> logits (B, V). Writes position pos of the
    cache and attends over positions 0..pos."""
    B = tokens.shape[0]
    nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    cos, sin = rope[0][pos], rope[1][pos]
    x = F.embedding(tokens, w["embed"])  # (B, h)
    for i, layer in enumerate(w["layers"]):
        y = F.rms_norm(x, (cfg["hidden"],), layer["norm1"], cfg["eps"])
        q, k, v = F.linear(y, layer["wqkv"]).split([nh * d, nkv * d, nkv * d], dim=-1)
        q = rotate(q.view(B, nh, d), cos, sin)
        k = rotate(k.view(B, nkv, d), cos, sin)
        cache[i, 0, :B, :, pos] = k
        cache[i, 1, :B, :, pos] = v.view(B, nkv, d)
        # The g query heads that share a KV head attend as g query rows of one head, so each cached key and
        # value is read once per sequence, not g times (no causal mask: position pos sees 0..pos).
        o = F.scaled_dot_product_attention(q.view(B, nkv, nh // nkv, d), cache[i, 0, :B, :, :pos + 1],
                                           cache[i, 1, :B, :, :pos + 1])
        x = x + F.linear(o.reshape(B, nh * d), layer["wo"])
        x = mlp(x, layer, cfg)
    return F.linear(F.rms_norm(x, (cfg["hidden"],), w["norm"], cfg["eps"]), w["head"])


# ---------------------------------------------------------------- the count (section 2 derives each term)
def weight_counts(cfg):
    """Parameters: (read by every step, the embedding table of which a step reads only its tokens' rows)."""
    h, d, L = cfg["hidden"], cfg["head_dim"], cfg["layers"]
    per_layer = h * (cfg["heads"] + 2 * cfg["kv_heads"]) * d + cfg["heads"] * d * h + 3 * h * cfg["mlp"] + 2 * h
    return L * per_layer + h + cfg["vocab"] * h, cfg["vocab"] * h


def step_flops(cfg, batch, new, context, causal=True):
    """Matrix FLOPs of one forward of `batch` sequences whose `new` tokens are the last of `context` positions
    (prefill: new = context = T; decode: new = 1). Every weight multiplies every new token once, 2 FLOPs per
    weight and token (the output head only at the last position, as serving does); attention: Q K^T and P V,
    4 x heads x head_dim FLOPs per query-key pair, over the pairs a causal pass needs (the i-th new token sees
    context - new + 1 + i positions, counting i from 0), or with causal=False over the full new x context block, which is what
    torch's FLOP counter counts for a causal prefill."""
    h, d, L, V = cfg["hidden"], cfg["head_dim"], cfg["layers"], cfg["vocab"]
    body = weight_counts(cfg)[0] - V * h - h - 2 * h * L  # the matrices of the layers
    pairs = new * context - (new * (new - 1) // 2 if causal else 0)
    return batch * (2 * body * new + 2 * V * h + 4 * L * cfg["heads"] * d * pairs)


def activation_elements(cfg, new):
    """Elements the matrix products read and write besides their weights, per sequence: each product's input
    and output once (QKV, output projection, gate-up, down), the output head at the last position only."""
    h, d, nh, nkv, m = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["mlp"]
    per_token = (h + (nh + 2 * nkv) * d) + (nh * d + h) + (h + 2 * m) + (m + h)
    return new * cfg["layers"] * per_token + h + cfg["vocab"]


def step_bytes(cfg, batch, new, read, elem=2, activations=True):
    """Bytes of HBM traffic one forward must move at least: every weight once (of the embedding table only the
    rows of the new tokens), `read` positions of the cache read and `new` written per sequence, and the
    products' activations once each (activation_elements)."""
    h, d, L, kv = cfg["hidden"], cfg["head_dim"], cfg["layers"], cfg["kv_heads"]
    per_position = 2 * L * kv * d  # keys and values of one position, every layer, in elements
    acts = activation_elements(cfg, new) if activations else 0
    return elem * (weight_counts(cfg)[0] + batch * (new * h + per_position * (read + new) + acts))


def decode_kernels(cfg, batch, context, elem=2):
    """One decode step (`batch` tokens, each attending over `context` positions) as the kernels that run one
    after another: (name, bytes, FLOPs) of each weight product of every layer and the head (weights, input and
    output once), attention over the cache (step_flops's and step_bytes's attention terms, the cache positions
    read), and the rest, which has bytes only (the norms' weights, the embedding rows, the cache writes).
    The bytes and FLOPs add up to step_bytes(cfg, batch, 1, context) and step_flops(cfg, batch, 1, context)."""
    h, L = cfg["hidden"], cfg["layers"]
    out = []
    for name, n, k in linear_shapes(cfg):
        layers = [""] if name == "head" else range(L)
        out += [(f"{name}{i}", elem * (n * k + batch * (k + n)), 2 * batch * n * k) for i in layers]
    attn_flops = (step_flops(cfg, batch, 1, context) - step_flops(cfg, batch, 1, 0)) // L
    attn_bytes = (step_bytes(cfg, batch, 1, context, elem) - step_bytes(cfg, batch, 1, 0, elem)) // L
    out += [(f"attention{i}", attn_bytes, attn_flops) for i in range(L)]
    writes = (step_bytes(cfg, batch, 1, 0, elem, activations=False) - step_bytes(cfg, batch, 0, 0, elem, activations=False)
              - elem * batch * h)  # one position of the cache written per sequence
    out.append(("rest", elem * ((2 * L + 1) * h + batch * h) + writes, 0))
    return out


def kernel_bound_s(kernels, bw, rate):
    """Seconds if each kernel ran at its own bound, max(bytes / bandwidth, FLOPs / rate), one after another."""
    return sum(max(b / bw, f / rate) for _, b, f in kernels)


# ---------------------------------------------------------------- the reference
def reference_logits(tokens, w, cfg, rope):
    """The whole sequence again in float64, no cache: explicit scores, causal mask, softmax."""
    B, T = tokens.shape
    nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    W = {k: v.double() for k, v in w.items() if k != "layers"}
    cos, sin = rope[0][:T].double(), rope[1][:T].double()

    def rms(x, g):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + cfg["eps"]) * g

    def rot(x):
        half = d // 2
        return torch.cat([x[..., :half] * cos - x[..., half:] * sin, x[..., half:] * cos + x[..., :half] * sin], -1)

    x = W["embed"][tokens]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for layer in w["layers"]:
        p = {k: v.double() for k, v in layer.items()}
        y = rms(x, p["norm1"]) @ p["wqkv"].T
        q = rot(y[..., :nh * d].reshape(B, T, nh, d).transpose(1, 2))
        k = rot(y[..., nh * d:(nh + nkv) * d].reshape(B, T, nkv, d).transpose(1, 2))
        v = y[..., (nh + nkv) * d:].reshape(B, T, nkv, d).transpose(1, 2)
        k, v = (t[:, [j // (nh // nkv) for j in range(nh)]] for t in (k, v))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        o = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v
        x = x + o.transpose(1, 2).reshape(B, T, nh * d) @ p["wo"].T
        gate, up = (rms(x, p["norm2"]) @ p["w13"].T).chunk(2, dim=-1)
        x = x + (gate * torch.sigmoid(gate) * up) @ p["w2"].T
    return rms(x, W["norm"]) @ W["head"].T


# ---------------------------------------------------------------- checks
def tiny_config(rng):
    kv = rng.choice((1, 2, 3))
    return dict(layers=rng.choice((2, 3)), hidden=rng.choice((40, 56, 72)), heads=kv * rng.choice((2, 3)),
                kv_heads=kv, head_dim=rng.choice((6, 8, 10)), mlp=rng.randint(50, 99), vocab=rng.randint(61, 127),
                eps=1e-5, theta=500000.0, rope_factor=8.0, low_freq=1.0, high_freq=4.0, old_ctx=16)


def counted_flops(fn):
    """torch's FLOP counter over fn(); attention on the math backend, whose matrix products the counter sees
    on every device (it has no entry for the CPU's fused attention kernel)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def check_size(seed, rng, device, quick):
    cfg = tiny_config(rng)
    B, T0, steps = rng.choice((1, 3, 5)), rng.randint(3, 9) | 1, rng.randint(4, 9 if quick else 17) | 1
    T = T0 + steps
    size = (f"B={B} prompt={T0} decode={steps} layers={cfg['layers']} h={cfg['hidden']} heads={cfg['heads']}/"
            f"{cfg['kv_heads']}x{cfg['head_dim']} mlp={cfg['mlp']} vocab={cfg['vocab']}")
    w = make_weights(cfg, rng.randint(0, 2**31), device, torch.float32)
    rope = rope_tables(cfg, T, device)
    tokens = torch.randint(0, cfg["vocab"], (B, T), device=device)
    host = {k: ([{n: p.cpu() for n, p in layer.items()} for layer in v] if k == "layers" else v.cpu())
            for k, v in w.items()}
    want = reference_logits(tokens.cpu(), host, cfg, (rope[0].cpu(), rope[1].cpu()))
    # The cache holds two sequences more than the step's batch, as the bench's one cache for its largest batch
    # does: a step must read and write only its own B (the spare ones stay poisoned, so reading them gives NaN).
    cache = tutor_lab.output(cfg["layers"], 2, B + 2, cfg["kv_heads"], T, cfg["head_dim"], name="cache")
    got = tutor_lab.output(B, T, cfg["vocab"], name="logits")
    got[:, :T0] = prefill(tokens[:, :T0], cache, w, cfg, rope, all_logits=True)
    for pos in range(T0, T):
        got[:, pos] = decode_step(tokens[:, pos], pos, cache, w, cfg, rope)
    # Prefill's positions and decode's, checked apart so that a failure says which of the two is wrong.
    tutor_lab.check(LAB, "prefill_logits", size + f" (positions 0..{T0 - 1})", got[:, :T0], want[:, :T0], seed,
                    atol=2e-4, rtol=2e-4)
    tutor_lab.check(LAB, "decode_logits", size + f" (positions {T0}..{T - 1}, one decode step each)", got[:, T0:],
                    want[:, T0:], seed, atol=2e-4, rtol=2e-4)
    # The counts: torch's FLOP counter on one prefill (it counts a causal pass's full T x T square) and one
    # decode step, against step_flops; the weights' and cache's bytes against step_bytes's terms.
    fresh = new_cache(cfg, B + 2, T, device, torch.float32)
    pf = counted_flops(lambda: prefill(tokens[:, :T0], fresh, w, cfg, rope))
    dc = counted_flops(lambda: decode_step(tokens[:, T0], T0, fresh, w, cfg, rope))
    tutor_lab.check(LAB, "flops_counted", size + " (prefill, decode: your step_flops against torch's counter)",
                    torch.tensor([float(step_flops(cfg, B, T0, T0, causal=False)), float(step_flops(cfg, B, 1, T0 + 1))],
                                 dtype=torch.float64),
                    torch.tensor([float(pf), float(dc)], dtype=torch.float64), seed)
    held = sum(t.numel() for t in [w["norm"], w["head"], *[p for layer in w["layers"] for p in layer.values()]])
    per_position = cache[:, :, 0, :, 0].numel()  # one position of one sequence, every layer, K and V

    def counted(batch, new, read):
        return float(step_bytes(cfg, batch, new, read, elem=4, activations=False))
    tutor_lab.check(LAB, "bytes_counted", size + " (weights, one token's row and cache position, one position "
                    "read: your step_bytes against the tensors held)",
                    torch.tensor([counted(0, 0, 0), counted(1, 1, 0) - counted(0, 0, 0),
                                  counted(1, 0, 1) - counted(0, 0, 0)], dtype=torch.float64),
                    torch.tensor([4.0 * held, 4.0 * (cfg["hidden"] + per_position), 4.0 * per_position],
                                 dtype=torch.float64), seed)


def check_kernel_terms(seed, rng):
    """decode_kernels splits step_bytes and step_flops into the step's kernels without losing or adding a term."""
    cfg = tiny_config(rng)
    B, ctx = rng.choice((1, 3, 5)), rng.randint(3, 40)
    ks = decode_kernels(cfg, B, ctx, elem=4)
    tutor_lab.check(LAB, "kernel_terms", f"B={B} context={ctx} layers={cfg['layers']} ({len(ks)} kernels: bytes, FLOPs)",
                    torch.tensor([float(sum(k[1] for k in ks)), float(sum(k[2] for k in ks))], dtype=torch.float64),
                    torch.tensor([float(step_bytes(cfg, B, 1, ctx, elem=4)), float(step_flops(cfg, B, 1, ctx))],
                                 dtype=torch.float64), seed)


def profiled_launches(fn):
    """The work one call of fn launches, from torch.profiler: on a GPU the kernels (CUDA device events other
    than memory copies and sets), on a CPU the leaf aten operators (each would be a kernel on a GPU).
    None if the profiler cannot say."""
    try:
        from torch.profiler import ProfilerActivity, profile
        gpu = tutor_lab.DEVICE == "cuda"
        fn()
        tutor_lab.sync()
        with profile(activities=[ProfilerActivity.CUDA if gpu else ProfilerActivity.CPU]) as prof:
            fn()
            tutor_lab.sync()
        if gpu:
            return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                       and not e.name.lower().startswith(("memcpy", "memset")))
        return sum(1 for e in prof.events() if e.name.startswith("aten::") and not e.cpu_children)
    except Exception as exc:  # no CUPTI, a profiler that differs: say so, never fail the lab for it
        print(f"# torch.profiler could not count: {exc!r}"[:300], file=sys.stderr)
        return None


def check_launch_count(seed, rng, device):
    """The counter the bench uses on the full model, on a tiny one: every layer launches the same work, so
    1, 2 and 3 layers differ by the same count, and that count is positive."""
    cfg = dict(tiny_config(rng), layers=3)
    B, pos = rng.choice((1, 3, 5)), rng.randint(3, 9)
    w = make_weights(cfg, rng.randint(0, 2**31), device, torch.float32)
    rope = rope_tables(cfg, pos + 1, device)
    cache = new_cache(cfg, B, pos + 1, device, torch.float32)
    tokens = torch.randint(0, cfg["vocab"], (B,), device=device)
    with torch.no_grad():
        counts = [profiled_launches(lambda: decode_step(tokens, pos, cache, dict(w, layers=w["layers"][:n]), cfg, rope))
                  for n in (1, 2, 3)]
    what = "kernels" if device == "cuda" else "leaf aten operators"
    if None in counts:
        tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "launch_count",
                        "reason": "torch.profiler could not count on this machine"})
        return
    per_layer = counts[1] - counts[0]
    tutor_lab.check(LAB, "launch_count", f"{what} of one decode step, 1/2/3 layers: {counts} (per layer, twice; > 0)",
                    torch.tensor([float(counts[2] - counts[1]), float(per_layer > 0)], dtype=torch.float64),
                    torch.tensor([float(per_layer), 1.0], dtype=torch.float64), seed)


def check_bf16_step(seed, cfg, B, ctx, device, size):
    """One bf16 decode step (bf16 weights and cache, the device's own attention kernel) against the same step
    computed in fp32 from the same bf16 numbers: bf16 rounds each product's output and the residual stream, so
    the logits agree to a bf16 tolerance, not to fp32's."""
    w = make_weights(cfg, seed % 2**31, device, torch.bfloat16)
    rope = rope_tables(cfg, ctx, device)
    cache = new_cache(cfg, B, ctx, device, torch.bfloat16).normal_()  # the keys and values of ctx - 1 tokens
    tokens = torch.randint(0, cfg["vocab"], (B,), device=device)
    with torch.no_grad():
        w32 = {k: ([{n: p.float() for n, p in layer.items()} for layer in v] if k == "layers" else v.float())
               for k, v in w.items()}
        cache32 = cache.float()
        want = decode_step(tokens, ctx - 1, cache32, w32, cfg, rope)
        del w32, cache32
        got = tutor_lab.output(B, cfg["vocab"], dtype=torch.bfloat16, name="logits")
        got.copy_(decode_step(tokens, ctx - 1, cache, w, cfg, rope))
    scale = float(want.abs().max())
    tutor_lab.check(LAB, "decode_bf16_vs_fp32", size + f" (max |logit| {scale:.2f})", got, want, seed,
                    atol=BF16_ATOL * scale, rtol=BF16_RTOL)


# ---------------------------------------------------------------- bench
def graph_ms(fn, reps=20):
    """Median ms of one replay of fn captured in a CUDA graph (warmed up on a side stream first, as capture
    requires): the GPU's time for the step with no host launch gaps between its ~400 kernels."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    ms = tutor_lab.timed_ms(graph.replay, warmup=3, reps=reps)
    del graph
    return ms


def emit_step(variant, metric, ms, nbytes, flops, bw, rate, size):
    roof = max(nbytes / bw, flops / rate) * 1e3
    bound = "memory" if nbytes / bw >= flops / rate else "compute"
    tutor_lab.emit({"event": "measure", "lab": LAB, "variant": variant, "metric": metric, "value": ms, "unit": "ms",
                    "ceiling": {"name": "max(bytes / copy bandwidth, FLOPs / torch.mm rate), same run",
                                "value": roof, "unit": "ms"},
                    "bytes": nbytes, "flops": flops, "ms": ms, "size": size, "note": f"{bound}-bound prediction"})
    print(f"# {variant:>22}: {ms:8.3f} ms  roofline {roof:8.3f} ms ({bound})  {flops / nbytes:7.1f} FLOP/B",
          file=sys.stderr)


def sm_clock_note(when):
    """The SM clock now, for a record's note ("" where torch cannot read it: no pynvml, no permission)."""
    try:
        return f"; SM clock {int(torch.cuda.clock_rate())} MHz {when}"
    except Exception:
        return ""


def emit_kernel_bound(ctx, bsz, ms, cfg, bw, rate):
    """The same measured step beside the bound kernel by kernel: attention's cache reads and the products'
    arithmetic run one after another here, so each kernel is held to its own max(bytes / BW, FLOPs / rate)."""
    kernels = decode_kernels(cfg, bsz, ctx)
    roof = kernel_bound_s(kernels, bw, rate) * 1e3
    whole = max(step_bytes(cfg, bsz, 1, ctx) / bw, step_flops(cfg, bsz, 1, ctx) / rate) * 1e3
    compute = [n for n, b, f in kernels if f / rate > b / bw]
    share = sum(max(b / bw, f / rate) for n, b, f in kernels if n in compute) * 1e3 / roof
    tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"decode_bound_kernels_ctx{ctx}_b{bsz}", "metric": "tpot",
                    "value": ms, "unit": "ms",
                    "ceiling": {"name": "kernel-by-kernel sum of max(bytes / copy bandwidth, FLOPs / torch.mm rate), "
                                        "same run", "value": roof, "unit": "ms"},
                    "ms": ms, "size": f"B={bsz} context={ctx}",
                    "note": f"{len(kernels)} terms (4 products and attention a layer, the head, the rest), {len(compute)} "
                            f"compute-bound ({100 * share:.0f}% of the bound); "
                            f"whole-step bound {whole:.4f} ms" + sm_clock_note("after the replays")})


def graph_kernel_nodes(fn):
    """The kernel nodes of fn captured in a CUDA graph, from the graph's debug dump (None if it cannot)."""
    import tempfile
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph(keep_graph=True)  # kept, so the dump can print it (never replayed)
        graph.enable_debug_mode()
        with torch.cuda.graph(graph):
            fn()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "step.dot")
            graph.debug_dump(path)
            with open(path, encoding="utf-8", errors="replace") as f:
                count = f.read().count('label="{KERNEL')  # one per kernel node (memsets and copies are not)
        del graph
        return count or None
    except Exception as exc:
        print(f"# CUDA graph dump could not count: {exc!r}"[:300], file=sys.stderr)
        return None


def bench_linears(cfg, dev, dtype, mm_ceiling):
    """F.linear at every weight shape of a layer and the head, as decode_step calls it, at the batch sizes
    around the knee: which product is slow at a batch."""
    for name, n, k in linear_shapes(cfg):
        wt = torch.randn(n, k, device=dev, dtype=dtype)
        for m in LINEAR_M:
            x = torch.randn(m, k, device=dev, dtype=dtype)
            ms = tutor_lab.timed_ms(lambda: F.linear(x, wt), reps=30)
            flops, nbytes = 2 * m * n * k, 2 * (n * k + m * k + m * n)
            tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"linear_{name}_m{m}", "metric": "rate",
                            "value": flops / (ms * 1e9), "unit": "TFLOP/s", "ceiling": mm_ceiling, "ms": ms,
                            "size": f"M={m} K={k} N={n}",
                            "note": f"{flops} FLOPs, {nbytes} bytes; {flops / nbytes:.1f} FLOP/B"})
        del wt, x
    torch.cuda.empty_cache()


def bench_kernel_counts(cfg, w, rope, dev, dtype):
    """The kernels one eager decode step launches (torch.profiler), at context 128 and batch 1 and 256, beside
    the kernel nodes of the same step captured in a CUDA graph. Last, so the profiler disturbs no timing."""
    ctx = 128
    cache = new_cache(cfg, max(KERNEL_COUNT_B), ctx, dev, dtype)
    one = dict(w, layers=w["layers"][:1])
    with torch.no_grad():
        for bsz in KERNEL_COUNT_B:
            tokens = torch.randint(0, cfg["vocab"], (bsz,), device=dev)
            full = profiled_launches(lambda: decode_step(tokens, ctx - 1, cache, w, cfg, rope))
            first = profiled_launches(lambda: decode_step(tokens, ctx - 1, cache, one, cfg, rope))
            variant = f"kernels_decode_ctx{ctx}_b{bsz}"
            if full is None or first is None:
                tutor_lab.emit({"event": "skip", "lab": LAB, "variant": variant,
                                "reason": "torch.profiler could not count CUDA kernels here"})
                continue
            per_layer = (full - first) / (cfg["layers"] - 1)
            nodes = graph_kernel_nodes(lambda: decode_step(tokens, ctx - 1, cache, w, cfg, rope))
            ceiling = ({"name": "kernel nodes of the same step captured in a CUDA graph", "value": nodes,
                        "unit": "kernel"} if nodes else {"name": "none (a profiler count)", "value": 0, "unit": "kernel"})
            tutor_lab.emit({"event": "measure", "lab": LAB, "variant": variant, "metric": "kernels", "value": full,
                            "unit": "kernel", "kind": "counter", "ceiling": ceiling,
                            "size": f"B={bsz} context={ctx}, eager",
                            "note": f"{per_layer:g} per layer, {full - per_layer * cfg['layers']:g} outside the "
                                    f"{cfg['layers']} layers (torch.profiler, CUDA kernels)"})
            print(f"# {variant}: {full} kernels ({per_layer:g} per layer), CUDA graph: {nodes} kernel nodes",
                  file=sys.stderr)
    del cache
    torch.cuda.empty_cache()


def bench(seed):
    dev, dtype, cfg = "cuda", torch.bfloat16, LLAMA31_8B
    h = cfg["hidden"]
    copy = tutor_lab.copy_ceiling()
    bw = copy["value"] * 1e9  # bytes/s, read + write counted
    tutor_lab.emit({"event": "measure", "lab": LAB, "variant": "copy_bandwidth", "metric": "bandwidth",
                    "value": copy["value"], "unit": "GB/s", "ceiling": copy})
    a = torch.randn(8192, 8192, device=dev, dtype=dtype)
    b = torch.randn(8192, 8192, device=dev, dtype=dtype)
    mm_ms = tutor_lab.timed_ms(lambda: torch.mm(a, b))
    rate = 2 * 8192**3 / (mm_ms * 1e-3)  # FLOP/s
    mm_ceiling = {"name": "torch.mm bf16, 8192 x 8192 x 8192", "value": rate / 1e12, "unit": "TFLOP/s"}
    tutor_lab.emit({"event": "measure", "lab": LAB, "variant": "mm_bf16", "metric": "rate", "value": rate / 1e12,
                    "unit": "TFLOP/s", "ceiling": mm_ceiling, "ms": mm_ms,
                    **({"note": sm_clock_note("just after the products")[2:]} if sm_clock_note("") else {})})
    del a, b
    # torch.mm at the decode shapes: M rows (the batch) times the MLP's up projection (4096 x 28672)
    wt = torch.randn(2 * cfg["mlp"], h, device=dev, dtype=dtype)
    for m in MM_M:
        x = torch.randn(m, h, device=dev, dtype=dtype)
        ms = tutor_lab.timed_ms(lambda: F.linear(x, wt), reps=30)
        flops, nbytes = 2 * m * h * 2 * cfg["mlp"], 2 * (wt.numel() + m * h + m * 2 * cfg["mlp"])
        tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"mm_m{m}", "metric": "rate",
                        "value": flops / (ms * 1e9), "unit": "TFLOP/s", "ceiling": mm_ceiling, "ms": ms,
                        "bytes": nbytes, "flops": flops, "size": f"M={m} K={h} N={2 * cfg['mlp']}"})
    del wt, x
    bench_linears(cfg, dev, dtype, mm_ceiling)
    w = make_weights(cfg, seed, dev, dtype)
    rope = rope_tables(cfg, max(max(PREFILL_T), max(DECODE)), dev)
    with torch.no_grad():
        cache = new_cache(cfg, 1, max(PREFILL_T), dev, dtype)
        for t in PREFILL_T:
            tokens = torch.randint(0, cfg["vocab"], (1, t), device=dev)
            ms = tutor_lab.timed_ms(lambda: prefill(tokens, cache, w, cfg, rope), warmup=2, reps=10)
            emit_step(f"prefill_t{t}", "ttft", ms, step_bytes(cfg, 1, t, 0), step_flops(cfg, 1, t, t), bw, rate,
                      f"B=1 T={t}")
        del cache
        for ctx, batches in DECODE.items():
            cache = new_cache(cfg, max(batches), ctx, dev, dtype)
            cache.normal_()  # stands for the keys and values of ctx - 1 earlier tokens
            for bsz in batches:
                tokens = torch.randint(0, cfg["vocab"], (bsz,), device=dev)
                ms = graph_ms(lambda: decode_step(tokens, ctx - 1, cache, w, cfg, rope))
                emit_step(f"decode_ctx{ctx}_b{bsz}", "tpot", ms, step_bytes(cfg, bsz, 1, ctx),
                          step_flops(cfg, bsz, 1, ctx), bw, rate, f"B={bsz} context={ctx}")
                emit_kernel_bound(ctx, bsz, ms, cfg, bw, rate)
                if ctx == 128 and bsz in (1, 64):  # the same step launched kernel by kernel from the host
                    ms = tutor_lab.timed_ms(lambda: decode_step(tokens, ctx - 1, cache, w, cfg, rope), reps=10,
                                            queue_ahead=False)
                    emit_step(f"decode_eager_ctx{ctx}_b{bsz}", "tpot", ms, step_bytes(cfg, bsz, 1, ctx),
                              step_flops(cfg, bsz, 1, ctx), bw, rate, f"B={bsz} context={ctx}, eager")
            del cache
            torch.cuda.empty_cache()
        bench_kernel_counts(cfg, w, rope, dev, dtype)
    print(f"# peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", file=sys.stderr)


def main():
    args = tutor_lab.parse_args()
    rng = random.Random(args.seed)
    device = tutor_lab.DEVICE
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the check compares fp32 runs with a float64 reference
    for _ in range(2 if args.quick else 4):
        check_size(args.seed, rng, device, args.quick)
    check_kernel_terms(args.seed, rng)
    check_launch_count(args.seed, rng, device)
    # bf16 as the bench runs it: on a GPU 2 layers of the bench's shapes at its largest batch; here the tiny config
    if device == "cuda":
        check_bf16_step(args.seed, dict(LLAMA31_8B, layers=2), 512, 128, device, "Llama 3.1 8B shapes, 2 layers, B=512 context=128")
    else:
        cfg, B = tiny_config(rng), rng.choice((3, 5))
        check_bf16_step(args.seed, cfg, B, 17, device, f"tiny config, B={B} context=17")
    if args.bench:
        if device != "cuda":
            print(json.dumps({"event": "skip", "lab": LAB, "reason": "the bench needs a GPU"}), flush=True)
        else:
            bench(args.seed)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
