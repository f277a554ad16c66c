"""C01 lab: train_mfu -- the model FLOPs utilisation (MFU) of a real training step, counted and measured.

A GPT-2 style decoder (pre-norm blocks: LayerNorm, QKV projection, causal attention, output projection,
residual, LayerNorm, MLP d -> 4d -> d with tanh-GELU, residual; learned position embeddings; the output
layer shares the token embedding's weight), built from published configs with random weights: nothing is
downloaded. One training step is forward, cross-entropy loss, backward and an AdamW update, in bf16 autocast
with fp32 master weights (the usual mixed-precision recipe).

The count (section 2 of the module derives it). With N_mm = 12 L d^2 + V d, the weights that multiply
(the blocks' matrices and the shared output layer), and T = b s tokens a step:

  model FLOPs a step     6 N_mm T + 12 L s d T     (PaLM's 6N + 12 L H Q T: attention counted without
                                                    the causal half, as the papers do)
  hardware FLOPs         the model FLOPs + what recomputation runs again (one forward of every block)
  MFU                    model FLOPs / (step time x peak);  HFU the same with the hardware FLOPs

Checks (CPU, small odd sizes, fp32): the parameter count equals 12 L d^2 + 13 L d + 2 d + V d + s_max d;
torch.utils.flop_counter counts exactly the model FLOPs for a step, and exactly the hardware FLOPs for a
step with every block recomputed; the weights, gradients and AdamW state take 16 bytes a parameter; the loss
matches a float64 copy of the model, the fused attention matches the written-out one, and recomputation
gives the same gradients.
With --bench on a GPU, the same run measures: torch.mm's bf16 rate (the ceiling), then for each variant the
step time split into forward, backward and optimizer (CUDA events), the MFU against the datasheet's dense
bf16 peak and against the measured torch.mm rate, the memory (state bytes, allocator peak, saved
activations), and, alone at the step's own shapes, the time of its matrix products and of its attention:
the terms of the gap between the step and the peak.

Run:  python labs/C01/python/train_mfu.py [--quick] [--bench] [--seed N]
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import random
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "train_mfu"
GiB = 2.0**30
# Published configs (Radford et al. 2019; Hugging Face GPT2Config for gpt2-medium and gpt2-xl): layers L,
# width d, heads a, vocabulary V, context s. b is this lab's batch: the step holds b s tokens.
CONFIGS = {
    "gpt2_medium": dict(L=24, d=1024, a=16, V=50257, s=1024, b=8),
    "gpt2_xl": dict(L=48, d=1600, a=25, V=50257, s=1024, b=6),
    # The same model with its token table padded to 50,304 rows (a multiple of 128): the output layer's
    # product gets a leading dimension the tensor-core kernels tile evenly. Tokens stay below 50,257.
    "gpt2_xl_padded": dict(L=48, d=1600, a=25, V=50257, V_pad=50304, s=1024, b=6),
}
PEAK_BF16 = 989.5e12  # H200 SXM dense bf16 tensor-core FLOP/s (the datasheet prints 1,979 with 2:4 sparsity)


# ---------------------------------------------------------------- the model
class Block(nn.Module):
    def __init__(self, d, a, core):
        super().__init__()
        self.a, self.core = a, core
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.a, d // self.a).permute(2, 0, 3, 1, 4).unbind(0)
        o = attend(q, k, v, self.core)  # (b, a, s, d/a)
        x = x + self.proj(o.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


def attend(q, k, v, core):
    """Causal attention. "sdpa": torch's fused kernel (flash attention on a GPU); "math": written out, the two
    products the count names (Q K^T and P V) and a softmax between them."""
    if core == "sdpa":
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = q.shape[-2]
    scores = torch.matmul(q, k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    keep = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
    return torch.matmul(torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1), v)


class GPT(nn.Module):
    def __init__(self, L, d, a, V, s, core="sdpa", recompute=False, V_pad=None, **_):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V_pad or V, d), nn.Embedding(s, d)
        self.blocks = nn.ModuleList(Block(d, a, core) for _ in range(L))
        self.ln_f = nn.LayerNorm(d)
        self.recompute = recompute

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            if self.recompute:  # keep only each block's input; the whole block runs again in backward
                with set_checkpoint_early_stop(False):
                    x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # the output layer shares the embedding's weight
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))  # the loss in fp32 at least
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def make_model(cfg, seed, device, dtype=torch.float32, **kw):
    torch.manual_seed(seed)
    with torch.device(device):
        model = GPT(**cfg, **kw)
    for name, p in model.named_parameters():  # GPT-2's initialisation: N(0, 0.02) matrices, zero biases
        with torch.no_grad():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                p.zero_()
    return model.to(dtype)


def make_optimizer(model):
    fused = next(model.parameters()).is_cuda
    return torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.0, fused=fused)


def train_step(model, opt, idx, tgt, amp, grads_to_none=False):
    with torch.autocast(idx.device.type, dtype=torch.bfloat16, enabled=amp):
        loss = model(idx, tgt)
    loss.backward()
    opt.step()
    # Kept (False): the gradients stay allocated, zeroed each step, and backward adds into them (4 bytes a
    # parameter written to zero them, then read and written again). None: backward writes fresh gradients.
    opt.zero_grad(set_to_none=grads_to_none)
    return loss


# ---------------------------------------------------------------- the count
def n_params(L, d, V, s, **_):
    """Every parameter: per block 12 d^2 weights + 13 d biases and LayerNorm gains/biases; the final
    LayerNorm; the token embedding (shared with the output layer); the position embedding."""
    return L * (12 * d * d + 13 * d) + 2 * d + V * d + s * d


def n_matmul(L, d, V, **_):
    """The weights that take part in a matrix product: 12 L d^2 in the blocks, V d in the output layer."""
    return 12 * L * d * d + V * d


def model_flops(L, d, V, s, b, **_):
    """FLOPs of one training step (forward + backward) that the model needs, recomputation not counted:
    6 N_mm per token for the products with weights, 12 L s d per token for Q K^T and P V."""
    T = b * s
    return 6 * n_matmul(L, d, V) * T + 12 * L * s * d * T


def hardware_flops(L, d, V, s, b, recompute=False, V_pad=None, **_):
    """The FLOPs the GPU runs: the model FLOPs plus, with recomputation, one more forward of every block
    (24 d^2 + 4 s d FLOPs a token and layer; the output layer is not recomputed), plus the padded rows of
    the output layer (6 d FLOPs a token each: work the GPU does that the model does not need)."""
    pad = 6 * ((V_pad or V) - V) * d * b * s
    extra = L * (24 * d * d + 4 * s * d) * b * s if recompute else 0
    return model_flops(L, d, V, s, b) + extra + pad


def state_bytes_per_param():
    """Mixed precision with AdamW: fp32 weight (4), fp32 gradient (4), first and second moments (4 + 4)."""
    return 4 + 4 + 4 + 4


def mfu(flops, ms, peak):
    return flops / (ms * 1e-3) / peak


def state_bytes(model, opt):
    """Bytes of the weights, their gradients and the optimizer's state tensors, as allocated."""
    total = 0
    for p in model.parameters():
        total += p.numel() * p.element_size()
        if p.grad is not None:
            total += p.grad.numel() * p.grad.element_size()
        for t in opt.state.get(p, {}).values():
            if torch.is_tensor(t) and t.dim() > 0:  # the step counter is a scalar, not state per parameter
                total += t.numel() * t.element_size()
    return total


# ---------------------------------------------------------------- checks
def batch(cfg, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    idx = torch.randint(0, cfg["V"], (cfg["b"], cfg["s"] + 1), generator=g)
    return (tutor_lab.guarded(idx[:, :-1].contiguous().to(device), name="tokens"),
            tutor_lab.guarded(idx[:, 1:].contiguous().to(device), name="targets"))


def count(fn):
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def scalar(x):
    return torch.tensor([float(x)], dtype=torch.float64)


def check_size(seed, cfg, device):
    size = " ".join(f"{k}={v}" for k, v in cfg.items())
    model = make_model(cfg, seed, device, core="math")
    idx, tgt = batch(cfg, device, seed)
    got = sum(p.numel() for p in model.parameters())
    tutor_lab.check(LAB, "param_count", size, scalar(n_params(**cfg)), scalar(got), seed)  # yours vs torch's

    # FLOPs of a step, as torch's counter sees them (it counts every matrix product and their backward).
    flops = count(lambda: model(idx, tgt).backward())
    tutor_lab.check(LAB, "model_flops", size, scalar(model_flops(**cfg)), scalar(flops), seed)
    # A padded token table: the padded rows' products are hardware FLOPs, not model FLOPs.
    padded = dict(cfg, V_pad=cfg["V"] + 1 + seed % 7)
    pmodel = make_model(padded, seed, device, core="math")
    flops = count(lambda: pmodel(idx, tgt).backward())
    tutor_lab.check(LAB, "hardware_flops_padded", size + f" V_pad={padded['V_pad']}",
                    scalar(hardware_flops(**padded)), scalar(flops), seed)
    del pmodel
    model.zero_grad(set_to_none=True)
    model.recompute = True
    flops = count(lambda: model(idx, tgt).backward())
    tutor_lab.check(LAB, "hardware_flops_recompute", size, scalar(hardware_flops(**cfg, recompute=True)),
                    scalar(flops), seed)
    ckpt_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    model.recompute = False
    loss = model(idx, tgt)
    loss.backward()
    worst = max(((g - p.grad).abs().max() / (p.grad.abs().max() + 1e-30)).item()
                for g, p in zip(ckpt_grads, model.parameters()))
    ok = all(torch.isfinite(g).all() for g in ckpt_grads)
    tutor_lab.check(LAB, "recompute_grads", size + " (max |g-r|/max|r|)", scalar(worst if ok else float("nan")),
                    scalar(0.0), seed, atol=1e-5)

    # The loss against a float64 copy; the fused attention against the written-out one.
    ref = make_model(cfg, seed, device, dtype=torch.float64, core="math")
    ref.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    want = ref(idx, tgt).item()
    tutor_lab.check(LAB, "loss_vs_float64", size, scalar(loss.item()), scalar(want), seed, rtol=1e-5)
    for blk in model.blocks:
        blk.core = "sdpa"
    with torch.no_grad():
        fused = model(idx, tgt).item()
    tutor_lab.check(LAB, "loss_sdpa_vs_math", size, scalar(fused), scalar(loss.item()), seed, rtol=1e-5)

    # Weights, gradients and AdamW state after one step.
    opt = make_optimizer(model)
    train_step(model, opt, idx, tgt, amp=False)
    tutor_lab.check(LAB, "state_bytes", size, scalar(state_bytes_per_param() * n_params(**cfg)),
                    scalar(state_bytes(model, opt)), seed)


# ---------------------------------------------------------------- bench

BENCH_DEVICE = "cuda"  # the bench's tensors (a test may run its arithmetic on the CPU)

class SavedBytes:
    """Bytes of the tensors autograd keeps for backward, each storage counted once; the parameters are left
    out, their bf16 copies (autocast casts each weight once a forward) are counted."""

    def __init__(self):
        self.seen, self.total = set(), 0

    def pack(self, t):
        st = t.untyped_storage()
        if not isinstance(t, nn.Parameter) and st.data_ptr() not in self.seen:
            self.seen.add(st.data_ptr())
            self.total += st.nbytes()
        return t

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)


def cuda_ms(fn, reps=10, warmup=2):
    """Median milliseconds of fn() between two CUDA events, runs back to back (no flush: steady state)."""
    return tutor_lab.timed_ms(fn, warmup=warmup, reps=reps, flush=False, queue_ahead=False)


def matmul_ms(cfg):
    """The step's products with weights, alone, at their own shapes: each linear's forward X W^T, its
    input gradient dY W and its weight gradient dY^T X, for every block and the output layer."""
    L, d, V, T = cfg["L"], cfg["d"], cfg.get("V_pad") or cfg["V"], cfg["b"] * cfg["s"]
    total = 0.0
    for n_out, n_in, times in ((3 * d, d, L), (d, d, L), (4 * d, d, L), (d, 4 * d, L), (V, d, 1)):
        x = torch.randn(T, n_in, device=BENCH_DEVICE, dtype=torch.bfloat16)
        w = torch.randn(n_out, n_in, device=BENCH_DEVICE, dtype=torch.bfloat16)
        dy = torch.randn(T, n_out, device=BENCH_DEVICE, dtype=torch.bfloat16)
        ms = cuda_ms(lambda: (torch.mm(x, w.t()), torch.mm(dy, w), torch.mm(dy.t(), x)))
        total += times * ms
    return total


def attention_ms(cfg):
    """The step's fused attention, forward and backward, alone: L times one layer's."""
    b, s, a, d = cfg["b"], cfg["s"], cfg["a"], cfg["d"]
    q, k, v = (torch.randn(b, a, s, d // a, device=BENCH_DEVICE, dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    do = torch.randn(b, a, s, d // a, device=BENCH_DEVICE, dtype=torch.bfloat16)

    def fwd_bwd():
        torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), do)

    return cfg["L"] * cuda_ms(fwd_bwd)


VARIANTS = (  # name, config, recompute, compile, gradients set to None after each step
    ("medium_eager", "gpt2_medium", False, False, False),
    ("xl_eager", "gpt2_xl", False, False, False),
    ("xl_recompute", "gpt2_xl", True, False, False),
    ("xl_compiled", "gpt2_xl", False, True, False),
    ("xl_padded", "gpt2_xl_padded", False, True, False),
    ("xl_padded_none", "gpt2_xl_padded", False, True, True),
)


def bench_variant(name, cfg, recompute, compiled, seed, mm_rate, grads_to_none=False):
    # Nothing of the previous variant may stay: compiled code holds its modules (and their memory) alive.
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()
    resident = torch.cuda.memory_allocated()
    model = make_model(cfg, seed, BENCH_DEVICE, recompute=recompute)
    opt = make_optimizer(model)
    g = torch.Generator(device=BENCH_DEVICE).manual_seed(seed)
    idx = torch.randint(0, cfg["V"], (cfg["b"], cfg["s"]), device=BENCH_DEVICE, generator=g)
    tgt = torch.randint(0, cfg["V"], (cfg["b"], cfg["s"]), device=BENCH_DEVICE, generator=g)
    t0 = time.perf_counter()
    if compiled:
        for blk in model.blocks:  # regional compilation: one block's code, reused by every block
            blk.compile()
    for _ in range(3):  # warm-up: compiles, the allocator's pools, AdamW's state
        train_step(model, opt, idx, tgt, amp=True, grads_to_none=grads_to_none)
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t0
    if compiled:  # one graph for every block, or the blocks recompiled
        from torch._dynamo.utils import counters
        print(f"# {name}: dynamo {dict(counters['stats'])}", file=sys.stderr, flush=True)

    meter = SavedBytes()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    # Saved-tensor hooks and compiled graphs do not mix: the compiled variant is not metered.
    with torch.autocast(BENCH_DEVICE, dtype=torch.bfloat16), (meter.hooks() if not compiled else contextlib.nullcontext()):
        loss = model(idx, tgt)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    state = state_bytes(model, opt)  # before zero_grad: with grads_to_none the gradients go until next backward
    opt.zero_grad(set_to_none=grads_to_none)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()

    reps = 10
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(reps)]
    for e in ev:  # steps back to back, as in training: the host waits only at the end
        e[0].record()
        with torch.autocast(BENCH_DEVICE, dtype=torch.bfloat16):
            loss = model(idx, tgt)
        e[1].record()
        loss.backward()
        e[2].record()
        opt.step()
        opt.zero_grad(set_to_none=grads_to_none)
        e[3].record()
    torch.cuda.synchronize()
    if not math.isfinite(loss.item()):
        raise RuntimeError(f"{name}: the loss is {loss.item()}")
    step = statistics.median(e[0].elapsed_time(e[3]) for e in ev)
    phases = {p: statistics.median(e[i].elapsed_time(e[i + 1]) for e in ev)
              for i, p in enumerate(("forward", "backward", "optimizer"))}

    fm, fh = model_flops(**cfg), hardware_flops(**cfg, recompute=recompute)
    peak_c = {"name": "NVIDIA H200 dense bf16 peak (datasheet)", "value": PEAK_BF16 / 1e12, "unit": "TFLOP/s"}
    mm_c = {"name": "torch.mm bf16, 8192 x 8192 x 8192 (same run)", "value": mm_rate / 1e12, "unit": "TFLOP/s"}
    tutor_lab.measure(LAB, f"step_{name}", "step_time", step, "ms",
                      {"name": "the step's model FLOPs at the datasheet peak", "value": fm / PEAK_BF16 * 1e3,
                       "unit": "ms"}, ms=step)
    for p, ms in phases.items():
        tutor_lab.measure(LAB, f"{p}_{name}", f"{p}_time", ms, "ms",
                          {"name": "the step's time (same run)", "value": step, "unit": "ms"}, ms=ms)
    tutor_lab.measure(LAB, f"mfu_{name}", "mfu", 100 * mfu(fm, step, PEAK_BF16), "%", peak_c, ms=step)
    tutor_lab.measure(LAB, f"mfu_mm_{name}", "mfu_vs_mm", 100 * mfu(fm, step, mm_rate), "%", mm_c, ms=step)
    tutor_lab.measure(LAB, f"hfu_{name}", "hfu", 100 * mfu(fh, step, PEAK_BF16), "%", peak_c, ms=step)
    tutor_lab.measure(LAB, f"state_{name}", "state_memory", state / GiB, "GiB",
                      {"name": "16 bytes a parameter, derived", "value": 16 * n_params(**cfg) / GiB,
                       "unit": "GiB"}, nbytes=state)
    tutor_lab.measure(LAB, f"peak_{name}", "allocator_peak", peak / GiB, "GiB",
                      {"name": "H200 memory (device properties)", "unit": "GiB",
                       "value": torch.cuda.get_device_properties(0).total_memory / GiB}, nbytes=peak)
    if not compiled:
        tutor_lab.measure(LAB, f"saved_{name}", "saved_activations", meter.total / GiB, "GiB",
                          {"name": "the allocator's peak above the state (same run)", "unit": "GiB",
                           "value": (peak - base) / GiB}, nbytes=meter.total)
    tutor_lab.measure(LAB, f"resident_{name}", "resident_memory", resident / GiB, "GiB",
                      {"name": "H200 memory (device properties)", "unit": "GiB",
                       "value": torch.cuda.get_device_properties(0).total_memory / GiB}, nbytes=resident)
    tutor_lab.measure(LAB, f"warmup_{name}", "warmup_time", warm_s, "s",
                      {"name": "three steps at the measured step time", "value": 3 * step / 1e3, "unit": "s"})
    print(f"# {name}: step {step:.1f} ms {phases}  MFU {100 * mfu(fm, step, PEAK_BF16):.1f}% "
          f"(vs mm {100 * mfu(fm, step, mm_rate):.1f}%)  HFU {100 * mfu(fh, step, PEAK_BF16):.1f}%  state "
          f"{state / GiB:.2f} GiB  peak {peak / GiB:.2f} GiB  saved {meter.total / GiB:.2f} GiB  warm-up "
          f"{warm_s:.1f} s  loss {loss.item():.3f}", file=sys.stderr, flush=True)
    del model, opt, loss
    torch.cuda.empty_cache()
    return step


def bench(seed):
    a = torch.randn(8192, 8192, device=BENCH_DEVICE, dtype=torch.bfloat16)
    bm = torch.randn(8192, 8192, device=BENCH_DEVICE, dtype=torch.bfloat16)
    mm_ms = tutor_lab.timed_ms(lambda: torch.mm(a, bm))
    mm_rate = 2 * 8192**3 / (mm_ms * 1e-3)
    del a, bm
    tutor_lab.measure(LAB, "mm_8192", "mm_rate", mm_rate / 1e12, "TFLOP/s",
                      {"name": "NVIDIA H200 dense bf16 peak (datasheet)", "value": PEAK_BF16 / 1e12,
                       "unit": "TFLOP/s"}, ms=mm_ms)
    done = set()
    for name, cname, recompute, compiled, grads_to_none in VARIANTS:
        cfg = CONFIGS[cname]
        if cname not in done:  # the gap's terms: products and attention alone, at the step's shapes
            done.add(cname)
            mm_t, at_t = matmul_ms(cfg), attention_ms(cfg)
            fmm = 6 * n_matmul(**cfg) * cfg["b"] * cfg["s"]
            fat = 12 * cfg["L"] * cfg["s"] * cfg["d"] * cfg["b"] * cfg["s"]
            tutor_lab.measure(LAB, f"matmuls_{cname}", "matmul_time", mm_t, "ms",
                              {"name": "the step's products with weights at the datasheet peak",
                               "value": fmm / PEAK_BF16 * 1e3, "unit": "ms"}, ms=mm_t)
            tutor_lab.measure(LAB, f"attention_{cname}", "attention_time", at_t, "ms",
                              {"name": "the step's attention FLOPs (no causal half) at the datasheet peak",
                               "value": fat / PEAK_BF16 * 1e3, "unit": "ms"}, ms=at_t)
            print(f"# {cname}: products alone {mm_t:.1f} ms ({fmm / mm_t / 1e9:.0f} TFLOP/s), attention alone "
                  f"{at_t:.1f} ms", file=sys.stderr, flush=True)
        try:
            bench_variant(name, cfg, recompute, compiled, seed, mm_rate, grads_to_none)
        except Exception as exc:  # e.g. torch.compile unavailable: say so, keep the other variants
            if not compiled:
                raise
            print(json.dumps({"event": "skip", "lab": LAB, "variant": name, "reason": repr(exc)[:300]}), flush=True)


def main():
    args = tutor_lab.parse_args()
    rng = random.Random(args.seed)
    device = tutor_lab.DEVICE
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the checks compare fp32 runs
    n = 1 if args.quick else 2
    for _ in range(n):  # odd sizes: no width, length or vocabulary a multiple of a tile
        a = rng.choice((2, 3))
        cfg = dict(L=rng.randint(1, 3), d=a * rng.choice((6, 10, 14)), a=a, V=rng.randint(50, 130),
                   s=rng.randint(5, 19), b=rng.randint(1, 3))
        check_size(args.seed, cfg, device)
    if args.bench:
        if device != "cuda":
            print(json.dumps({"event": "skip", "lab": LAB, "reason": "the bench needs a GPU"}), flush=True)
        else:
            bench(args.seed)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
