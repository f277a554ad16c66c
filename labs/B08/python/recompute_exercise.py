"""B08 lab (exercise): recompute -- what a transformer block keeps for backward, and what recomputing it costs.

One pre-norm transformer block (LayerNorm, QKV projection, attention, output projection, residual,
LayerNorm, MLP h -> 4h -> h with GELU, residual) with GPT-3 175B's layer shapes on the GPU (h = 12288,
a = 96 heads, s = 2048, b = 1; random weights, bf16) and small odd shapes on the CPU (fp32). No dropout,
no bias-free tricks. Four modes of one forward + backward step:

  none       autograd keeps what every operation saves.
  selective  the attention core (scores, softmax, scores x V) runs under a custom autograd Function that
             keeps only Q, K, V and recomputes the core in backward (Korthikanti et al. 2022's
             "selective activation recomputation").
  full       torch.utils.checkpoint around the whole block: only the block's input is kept, the whole
             forward runs again in backward.
  offload    nothing is recomputed; every storage holding a saved tensor is copied to host memory once in
             forward and back once in backward (torch.autograd.graph.save_on_cpu does the same per tensor).

and two attention cores: "math" (matmul, softmax, matmul: the operations the paper counts) and "sdpa"
(torch's fused scaled_dot_product_attention, which keeps a logsumexp row instead of the s x s scores).

The meter: every tensor autograd saves between forward and backward passes through
torch.autograd.graph.saved_tensors_hooks; its storage is counted once however many views of it are
saved; parameters are left out. The derivation, in elements of the activation type (e bytes each) and
per layer, for this block (section 2 of the module derives each term):

  none       16 sbh + a s^2 b   (+ 2 rows of LayerNorm statistics, 4 bytes each, per LayerNorm)
             16 sbh + a s b     with the fused core (its logsumexp rows, 4 bytes each, for the scores)
  selective  16 sbh             (+ the same statistics)
  full        1 sbh             (the block's input)

times e; in 16-bit (e = 2): 32 sbh + 2 a s^2 b, against the paper's 34 sbh + 5 a s^2 b, which counts two
dropout masks (sbh) and the attention dropout's mask and output (3 a s^2 b) this block does not have.
Checks (both cores; the fused core's bytes on the CPU only): the saved bytes equal the derivation exactly, and the four modes give the same weight
and input gradients within the derived rounding tolerance. With --bench on a GPU: saved bytes, the
allocator's peak above the step's start, and the step time of every mode (timed_ms), beside the rate
of torch.mm on the block's largest matrix product measured in the same run.

Run:  python labs/B08/python/recompute.py [--quick] [--bench] [--seed N]
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import weakref

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "recompute"
MiB = 2.0**20
GPT3 = dict(h=12288, a=96, s=2048, b=1)  # GPT-3 175B's layer (Brown et al. 2020, table 2.1)
MODES = ("none", "selective", "full", "offload")


# ---------------------------------------------------------------- the block
def make_block(h, seed, device, dtype):
    """Weights of one block, the same for a seed and device: LayerNorm (gain, bias) x 2, QKV, output, MLP.
    Drawn on the device itself (GPT-3's block is 1.8 billion values: too slow to draw on the host)."""
    g = torch.Generator(device=device).manual_seed(seed)

    def w(rows, cols):
        return torch.randn(rows, cols, generator=g, device=device) / cols**0.5

    def vec(n, base=0.0):
        return base + 0.1 * torch.randn(n, generator=g, device=device)

    params = dict(ln1_w=vec(h, 1.0), ln1_b=vec(h), qkv_w=w(3 * h, h), qkv_b=vec(3 * h),
                  out_w=w(h, h), out_b=vec(h), ln2_w=vec(h, 1.0), ln2_b=vec(h),
                  fc1_w=w(4 * h, h), fc1_b=vec(4 * h), fc2_w=w(h, 4 * h), fc2_b=vec(h))
    return {k: v.to(device, dtype).requires_grad_() for k, v in params.items()}


def core_math(q, k, v):
    """softmax(Q K^T / sqrt(d)) V, one operation at a time: keeps Q, K, V and the s x s probabilities."""
    p = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5), dim=-1)
    return torch.matmul(p, v)


def core_sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


class RecomputedCore(torch.autograd.Function):
    """The attention core with selective recomputation: forward keeps Q, K, V only; backward runs the core
    again with autograd on and differentiates that."""

    @staticmethod
    def forward(ctx, q, k, v, core):
        ctx.core = core
        ctx.save_for_backward(q, k, v)
        with torch.no_grad():
            return core(q, k, v)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v = ctx.saved_tensors
        # TODO 2: return the gradients of the core's output with respect to q, k and v, given grad_out.
        # Forward recorded nothing inside the core, so the core must run again here, this time recorded.
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        return dq, dk, dv, None


def block(x, p, a, core, selective=False):
    """One pre-norm transformer block on x of shape (b, s, h)."""
    b, s, h = x.shape
    d = h // a
    y = F.layer_norm(x, (h,), p["ln1_w"], p["ln1_b"])
    qkv = F.linear(y, p["qkv_w"], p["qkv_b"]).view(b, s, 3, a, d).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)  # each (b, a, s, d), views into one (b, s, 3h) tensor
    o = RecomputedCore.apply(q, k, v, core) if selective else core(q, k, v)
    x = x + F.linear(o.transpose(1, 2).reshape(b, s, h), p["out_w"], p["out_b"])
    y = F.layer_norm(x, (h,), p["ln2_w"], p["ln2_b"])
    return x + F.linear(F.gelu(F.linear(y, p["fc1_w"], p["fc1_b"])), p["fc2_w"], p["fc2_b"])


def forward(mode, x, p, a, core):
    # TODO 3: in mode "full" only the block's input may be kept for backward (torch.utils.checkpoint is
    # imported above); the whole block runs again in backward, its last product too (torch's default stops
    # recomputing early: set_checkpoint_early_stop is imported for that).
    return block(x, p, a, core, selective=(mode == "selective"))


# ---------------------------------------------------------------- the meter
class SavedBytes:
    """Bytes of the tensors autograd keeps for backward, parameters left out. A storage is counted once,
    over the span of it that saved views reach (q, k, v are three views of one QKV output; an input
    handed out by the kit sits between guard zones that are not the block's). With offload=True each
    storage a saved tensor lives in is copied to host memory once, however many views of it are saved,
    and brought back once when backward first asks for one of them."""

    def __init__(self, params, offload=False):
        self.exclude = {t.untyped_storage().data_ptr() for t in params}
        self.spans = {}  # storage pointer -> [first byte, end byte] of the saved views, while it lives
        self.done = 0  # bytes of spans whose storage was freed (offload frees them in forward)
        self.offload = offload
        self.kinds = {}  # dtype -> bytes of the saved views (a shared storage repeats), for stderr
        self.host = {}  # storage pointer -> [host copy, weak reference to its copy back on the device]
        self.host_bytes = 0  # bytes copied to the host

    @property
    def total(self):
        return self.done + sum(hi - lo for lo, hi in self.spans.values())

    def _freed(self, ptr):
        lo, hi = self.spans.pop(ptr)
        self.done += hi - lo
        self.host.pop(ptr, None)  # the address may now be handed to another tensor

    def pack(self, t):
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in self.exclude:
            return t
        # TODO 1: count this saved tensor's bytes into self.spans, so that `total` is right: a storage
        # counts once however many views of it are saved (q, k and v share one), over the bytes the saved
        # views reach (from the first to one past the last element, in its storage), and an address that
        # is freed and handed to a new tensor (offload frees in forward) starts a new entry.
        lo = hi = 0
        self.kinds[str(t.dtype)] = self.kinds.get(str(t.dtype), 0) + (hi - lo)
        if self.offload:
            entry = self.host.get(ptr)
            if entry is None:  # the whole storage, once: a view of it saved later needs nothing more
                raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage)
                host = torch.empty(raw.numel(), dtype=torch.uint8, device="cpu", pin_memory=t.is_cuda)
                host.copy_(raw, non_blocking=True)
                entry = self.host[ptr] = [host, None]
                self.host_bytes += host.numel()
            return (t.device, t.dtype, t.storage_offset(), tuple(t.shape), t.stride(), entry)
        return t

    @staticmethod
    def unpack(packed):
        if not isinstance(packed, tuple):
            return packed
        device, dtype, offset, shape, stride, entry = packed
        back = entry[1]() if entry[1] is not None else None  # already brought back for another view?
        if back is None:
            back = entry[0].to(device, non_blocking=True).untyped_storage()
            entry[1] = weakref.ref(back)
        return torch.empty(0, dtype=dtype, device=device).set_(back, offset, shape, stride)

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)


def run_step(mode, x, p, a, core, grad_out, meter=None):
    """One forward + backward of the block; the meter sees every tensor saved in forward."""
    meter = meter or SavedBytes(p.values(), offload=(mode == "offload"))
    with meter.hooks():
        y = forward(mode, x, p, a, core)
    y.backward(grad_out)
    return meter


# ---------------------------------------------------------------- the derivation
def predicted_bytes(mode, s, b, h, a, elem, core="math", stats_elem=4):
    """Saved bytes of one block per mode (section 2): activations of `elem` bytes, LayerNorm statistics and
    the fused core's logsumexp rows of 4 bytes (fp32)."""
    sbh = s * b * h
    ln_stats = 2 * 2 * s * b * stats_elem  # two LayerNorms, each a mean and a 1/std per row
    if mode == "full":
        return elem * sbh  # the block's input
    if mode == "selective":
        return elem * 16 * sbh + ln_stats  # the core's Q, K, V stay; what the core saved is recomputed
    if core == "sdpa":  # the core keeps its output (the projection's input, one storage) and a logsumexp row
        return elem * 16 * sbh + 4 * b * a * s + ln_stats
    # TODO 4: what the math core adds in modes none and offload, beyond the 16 sbh elements and the
    # LayerNorm statistics: count what softmax and the product with V keep (section 2, step 3).
    return elem * 16 * sbh + ln_stats


def paper_bytes(mode, s, b, h, a):
    """Korthikanti et al. (2022), 16-bit activations, no tensor parallelism, with dropout."""
    sbh = s * b * h
    return {"none": sbh * (34 + 5 * a * s / h), "selective": 34 * sbh, "full": 2 * sbh}[mode]


def step_flops(mode, s, b, h):
    """Matrix-product FLOPs of one step: forward F = 24 b s h^2 + 4 b s^2 h, backward 2F, plus what is
    recomputed (selective: the core's 4 b s^2 h; full: one more F)."""
    fwd = 24 * b * s * h * h + 4 * b * s * s * h
    extra = {"none": 0, "offload": 0, "selective": 4 * b * s * s * h, "full": fwd}[mode]
    return 3 * fwd + extra


def grad_tolerance(s, b, h):
    """fp32 rounding: a sum of K terms carries at most ~K u relative error (u = 2^-24); the longest sum of
    this block's backward is K = max(4h, b s). Two runs that round differently differ by at most twice
    that; a factor of 4 covers the few sums chained on one path."""
    return 4 * 2 * max(4 * h, b * s) * 2.0**-24


# ---------------------------------------------------------------- checks
def check_size(seed, b, s, h, a, device):
    size = f"b={b} s={s} h={h} a={a}"
    p = make_block(h, seed, device, torch.float32)
    x = tutor_lab.rand(b, s, h, name="x").requires_grad_()
    grad_out = tutor_lab.rand(b, s, h, name="grad_out")
    tol = grad_tolerance(s, b, h)
    for core_name, core in (("math", core_math), ("sdpa", core_sdpa)):
        grads = {}
        for mode in MODES:
            for t in list(p.values()) + [x]:
                t.grad = None
            meter = run_step(mode, x, p, a, core, grad_out)
            if core_name == "math" or device == "cpu":  # the GPU's fused cores pad or add rows of their own
                want = predicted_bytes(mode, s, b, h, a, elem=4, core=core_name)
                tutor_lab.check(LAB, f"{core_name}_{mode}_saved", size,
                                torch.tensor([float(meter.total)], dtype=torch.float64),
                                torch.tensor([float(want)], dtype=torch.float64), seed)
            grads[mode] = [t.grad.detach().clone() for t in list(p.values()) + [x]]
        for mode in MODES[1:]:
            worst = 0.0
            for g, r in zip(grads[mode], grads["none"]):
                scale = r.abs().max().item() + 1e-30
                finite = torch.isfinite(g).all() and torch.isfinite(r).all()  # max() would drop a NaN
                err = ((g - r).abs() / scale).max().item() if finite else float("inf")
                worst = max(worst, err)
            tutor_lab.check(LAB, f"{core_name}_{mode}_grads", size + f" (max |g-r|/max|r|, tol {tol:.1e})",
                            torch.tensor([worst]), torch.tensor([0.0]), seed, atol=tol)


# ---------------------------------------------------------------- bench
def bench(seed):
    dev, dtype = "cuda", torch.bfloat16
    b, s, h, a = GPT3["b"], GPT3["s"], GPT3["h"], GPT3["a"]
    p = make_block(h, seed, dev, dtype)
    for t in p.values():
        t.grad = torch.zeros_like(t)  # gradients exist before the step: the peak is activations and temporaries
    x = torch.randn(b, s, h, device=dev, dtype=dtype, requires_grad=True)
    x.grad = torch.zeros_like(x)
    grad_out = torch.randn(b, s, h, device=dev, dtype=dtype)
    # the ceiling: torch.mm (cuBLAS / hipBLAS) on the block's largest product, (b s) x h times h x 4h
    m1 = torch.randn(b * s, h, device=dev, dtype=dtype)
    m2 = torch.randn(h, 4 * h, device=dev, dtype=dtype)
    mm_ms = tutor_lab.timed_ms(lambda: torch.mm(m1, m2))
    mm_rate = 2 * b * s * h * 4 * h / (mm_ms * 1e9)  # TFLOP/s
    del m1, m2
    for core_name, core in (("math", core_math), ("sdpa", core_sdpa)):
        for mode in MODES:
            run_step(mode, x, p, a, core, grad_out)  # warm-up
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            meter = run_step(mode, x, p, a, core, grad_out)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
            ms = tutor_lab.timed_ms(lambda: run_step(mode, x, p, a, core, grad_out), warmup=2, reps=10,
                                    queue_ahead=False)
            flops = step_flops(mode, s, b, h)
            want = predicted_bytes(mode, s, b, h, a, elem=2, core=core_name)
            v = f"{core_name}_{mode}"
            derived = {"name": "derived saved bytes, this block", "value": want / MiB, "unit": "MiB"}
            tutor_lab.measure(LAB, "saved_" + v, "saved_activations", meter.total / MiB, "MiB", derived,
                              nbytes=meter.total)
            tutor_lab.measure(LAB, "alloc_" + v, "allocator_peak", peak / MiB, "MiB", derived, nbytes=peak)
            tutor_lab.measure(LAB, "step_" + v, "step_time", ms, "ms",
                              {"name": "the step's matrix FLOPs at torch.mm's rate (same run)",
                               "value": flops / (mm_rate * 1e9), "unit": "ms"}, ms=ms)
            tutor_lab.measure(LAB, "rate_" + v, "model_flops_rate", step_flops("none", s, b, h) / (ms * 1e9),
                              "TFLOP/s", {"name": "torch.mm bf16, (bs x h) x (h x 4h)", "value": mm_rate,
                                          "unit": "TFLOP/s"}, ms=ms)
            print(f"# {v:>15}: saved {meter.total / MiB:9.1f} MiB (derived {want / MiB:9.1f}, paper "
                  f"{paper_bytes('none' if mode == 'offload' else mode, s, b, h, a) / MiB:9.1f})  allocator "
                  f"peak {peak / MiB:9.1f} MiB  step {ms:7.2f} ms  to host {meter.host_bytes / MiB:.1f} MiB  "
                  f"views by dtype {sorted(meter.kinds.items())}",
                  file=sys.stderr)
        # The forward alone, recording nothing: what full recomputation runs once more in backward.
        with torch.no_grad():
            fwd_ms = tutor_lab.timed_ms(lambda: block(x, p, a, core), warmup=2, reps=10, queue_ahead=False)
        fwd_flops = step_flops("none", s, b, h) / 3
        tutor_lab.measure(LAB, f"fwd_{core_name}", "forward_time", fwd_ms, "ms",
                          {"name": "the forward's matrix FLOPs at torch.mm's rate (same run)",
                           "value": fwd_flops / (mm_rate * 1e9), "unit": "ms"}, ms=fwd_ms)


def main():
    args = tutor_lab.parse_args()
    rng = random.Random(args.seed)
    device = tutor_lab.DEVICE
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # the check compares fp32 runs
    if args.quick:
        sizes = [(rng.randint(1, 3), rng.randint(5, 19), 8 * a, a) for a in (2, 3)]
    else:
        sizes = [(rng.randint(1, 3), rng.randint(20, 70), 16 * a, a) for a in (2, 3, 4)]
    for b, s, h, a in sizes:
        check_size(args.seed, b, s, h, a, device)
    if args.bench:
        if device != "cuda":
            print(json.dumps({"event": "skip", "lab": LAB, "reason": "the bench needs a GPU"}), flush=True)
        else:
            bench(args.seed)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
