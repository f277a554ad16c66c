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
step_flops(), and the bytes of the weights and cache equal step_bytes()'s terms.
With --bench on a GPU: the copy bandwidth and torch.mm's bf16 rate (the two ceilings), torch.mm at the decode
shapes, prefill at several prompt lengths, and decode steps replayed from CUDA graphs at batch 1..512 for a
short and a long context, each beside max(bytes / bandwidth, FLOPs / rate) from the same run.

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
    context - new + i positions), or with causal=False over the full new x context block, which is what
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
    cache = tutor_lab.output(cfg["layers"], 2, B, cfg["kv_heads"], T, cfg["head_dim"], name="cache")
    got = tutor_lab.output(B, T, cfg["vocab"], name="logits")
    got[:, :T0] = prefill(tokens[:, :T0], cache, w, cfg, rope, all_logits=True)
    for pos in range(T0, T):
        got[:, pos] = decode_step(tokens[:, pos], pos, cache, w, cfg, rope)
    tutor_lab.check(LAB, "prefill_then_decode_logits", size, got, want, seed, atol=2e-4, rtol=2e-4)
    # The counts: torch's FLOP counter on one prefill (it counts a causal pass's full T x T square) and one
    # decode step, against step_flops; the weights' and cache's bytes against step_bytes's terms.
    fresh = new_cache(cfg, B, T, device, torch.float32)
    pf = counted_flops(lambda: prefill(tokens[:, :T0], fresh, w, cfg, rope))
    dc = counted_flops(lambda: decode_step(tokens[:, T0], T0, fresh, w, cfg, rope))
    tutor_lab.check(LAB, "flops_counted", size + " (prefill, decode)",
                    torch.tensor([float(pf), float(dc)], dtype=torch.float64),
                    torch.tensor([float(step_flops(cfg, B, T0, T0, causal=False)), float(step_flops(cfg, B, 1, T0 + 1))],
                                 dtype=torch.float64), seed)
    held = sum(t.numel() for t in [w["norm"], w["head"], *[p for layer in w["layers"] for p in layer.values()]])
    per_position = cache[:, :, 0, :, 0].numel()  # one position of one sequence, every layer, K and V

    def counted(batch, new, read):
        return float(step_bytes(cfg, batch, new, read, elem=4, activations=False))
    tutor_lab.check(LAB, "bytes_counted", size + " (weights, one token's row and cache position, one position read)",
                    torch.tensor([4.0 * held, 4.0 * (cfg["hidden"] + per_position), 4.0 * per_position],
                                 dtype=torch.float64),
                    torch.tensor([counted(0, 0, 0), counted(1, 1, 0) - counted(0, 0, 0),
                                  counted(1, 0, 1) - counted(0, 0, 0)], dtype=torch.float64), seed)


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
                    "unit": "TFLOP/s", "ceiling": mm_ceiling, "ms": mm_ms})
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
                if ctx == 128 and bsz in (1, 64):  # the same step launched kernel by kernel from the host
                    ms = tutor_lab.timed_ms(lambda: decode_step(tokens, ctx - 1, cache, w, cfg, rope), reps=10,
                                            queue_ahead=False)
                    emit_step(f"decode_eager_ctx{ctx}_b{bsz}", "tpot", ms, step_bytes(cfg, bsz, 1, ctx),
                              step_flops(cfg, bsz, 1, ctx), bw, rate, f"B={bsz} context={ctx}, eager")
            del cache
            torch.cuda.empty_cache()
    print(f"# peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", file=sys.stderr)


def main():
    args = tutor_lab.parse_args()
    rng = random.Random(args.seed)
    device = tutor_lab.DEVICE
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the check compares fp32 runs with a float64 reference
    for _ in range(2 if args.quick else 4):
        check_size(args.seed, rng, device, args.quick)
    if args.bench:
        if device != "cuda":
            print(json.dumps({"event": "skip", "lab": LAB, "reason": "the bench needs a GPU"}), flush=True)
        else:
            bench(args.seed)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
