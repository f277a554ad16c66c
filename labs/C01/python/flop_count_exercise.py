"""C01 lab (exercise): flop_count -- every matrix product of a GPT block, counted by hand, then by torch.

One pre-norm GPT block (LayerNorm, QKV projection, causal attention, output projection, residual, LayerNorm,
MLP d -> 4d -> d, residual) and the output layer (d -> V), with b sequences of s tokens (T = b s rows).
By hand (section 2 of the module), each product C[M, N] = A[M, K] B[K, N] costs 2 M K N FLOPs and, in e bytes
an element, reads and writes at least e (M K + K N + M N) bytes:

  qkv      T x d   times d x 3d           2 T d 3d
  scores   s x dh  times dh x s, b a times 2 b a s^2 dh = 2 b s^2 d     (Q K^T)
  mix      s x s   times s x dh, b a times 2 b s^2 d                   (P V)
  proj     T x d   times d x d            2 T d^2
  fc1      T x d   times d x 4d           2 T d 4d
  fc2      T x 4d  times 4d x d           2 T 4d d
  lm_head  T x d   times d x V            2 T d V

so one block's forward is 24 T d^2 + 4 b s^2 d and backward twice that (an input gradient and a weight
gradient per product). The arithmetic intensity of each product is 2 M K N / (e (M K + K N + M N)).

Checks (CPU, odd sizes): the products torch runs in the forward (seen through a dispatch mode, shapes and
all) are exactly the table; their FLOPs and the forward's total from torch.utils.flop_counter equal the
table's; the backward counts twice the forward; the intensity of each product from the table equals the
one computed from the tensors torch actually passed.
With --bench on a GPU: every product of a GPT-2 XL layer and its output layer, alone in bf16, from one token
(decode) to a training batch, timed beside torch.mm's 8192^3 rate: the rate each reaches against its
intensity (a roofline from the data).

Run:  python labs/C01/python/flop_count.py [--quick] [--bench] [--seed N]
"""

from __future__ import annotations

import json
import os
import random
import sys

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "flop_count"
XL = dict(d=1600, a=25, V=50257)  # GPT-2 XL (Radford et al. 2019; Hugging Face GPT2Config)


# ---------------------------------------------------------------- the block
def make_weights(d, V, seed, device, dtype=torch.float32):
    g = torch.Generator(device="cpu").manual_seed(seed)

    def w(rows, cols):
        return (torch.randn(rows, cols, generator=g) / cols**0.5).to(device, dtype).requires_grad_()

    return dict(qkv=w(3 * d, d), proj=w(d, d), fc1=w(4 * d, d), fc2=w(d, 4 * d), lm_head=w(V, d))


def forward(x, p, a):
    """One block (LayerNorm without learned gain, no biases: they add no products) and the output layer."""
    b, s, d = x.shape
    q, k, v = F.linear(F.layer_norm(x, (d,)), p["qkv"]).view(b, s, 3, a, d // a).permute(2, 0, 3, 1, 4)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (d // a) ** -0.5
    keep = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
    o = torch.matmul(torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1), v)
    x = x + F.linear(o.transpose(1, 2).reshape(b, s, d), p["proj"])
    x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,)), p["fc1"])), p["fc2"])
    return F.linear(F.layer_norm(x, (d,)), p["lm_head"])


# ---------------------------------------------------------------- the count by hand
def matmul_table(b, s, d, a, V):
    """(name, batch count, M, K, N) of every product of the forward, in the order it runs."""
    T, dh = b * s, d // a
    # TODO 1: the attention's two products, Q K^T ("scores") and P V ("mix"): one per sequence and head,
    # each a product of an (M x K) by a (K x N) matrix. Replace the two placeholders.
    return [("qkv", 1, T, d, 3 * d), ("scores", 1, 1, 1, 1), ("mix", 1, 1, 1, 1),
            ("proj", 1, T, d, d), ("fc1", 1, T, d, 4 * d), ("fc2", 1, T, 4 * d, d), ("lm_head", 1, T, d, V)]


def flops(count, M, K, N):
    return 2 * count * M * K * N


def intensity(count, M, K, N, elem):
    """FLOPs per byte when each operand is read once and the result written once."""
    # TODO 2: FLOPs over the bytes of both operands read once and the result written once.
    return flops(count, M, K, N) / (elem * count * M * N)


# ---------------------------------------------------------------- the count by torch
class Products(TorchDispatchMode):
    """Records every matrix product torch runs: (count, M, K, N) and the bytes of its operands and result."""

    OPS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default}

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in self.OPS:
            A, B = (args[1], args[2]) if func is torch.ops.aten.addmm.default else (args[0], args[1])
            count = A.shape[0] if A.dim() == 3 else 1
            M, K, N = A.shape[-2], A.shape[-1], B.shape[-1]
            nbytes = sum(t.numel() * t.element_size() for t in (A, B, out))
            self.seen.append((count, M, K, N, nbytes))
        return out


def check_size(seed, b, s, d, a, V, device):
    size = f"b={b} s={s} d={d} a={a} V={V}"
    p = make_weights(d, V, seed, device)
    x = tutor_lab.rand(b, s, d, name="x").requires_grad_()
    table = matmul_table(b, s, d, a, V)
    with Products() as seen:
        logits = forward(x, p, a)
    # Yours (the table) against what torch ran, one product at a time so a failure names the product.
    if len(table) != len(seen.seen):
        tutor_lab.check(LAB, "forward_shapes", size + f" ({len(table)} products in the table, torch ran "
                        f"{len(seen.seen)})", torch.zeros(len(table)), torch.zeros(len(seen.seen)), seed)
    for (name, *yours), (*ran, _) in zip(table, seen.seen):
        tutor_lab.check(LAB, "forward_shapes", size + f" {name}: [count, M, K, N]",
                        torch.tensor(yours, dtype=torch.float64), torch.tensor(ran, dtype=torch.float64), seed)

    with FlopCounterMode(display=False) as fc:
        logits = forward(x, p, a)
    fwd = fc.get_total_flops()
    by_hand = sum(flops(c, M, K, N) for _, c, M, K, N in table)
    tutor_lab.check(LAB, "forward_flops", size, torch.tensor([float(by_hand)]).double(),
                    torch.tensor([float(fwd)]).double(), seed)
    with FlopCounterMode(display=False) as fc:
        logits.backward(torch.randn_like(logits))
    tutor_lab.check(LAB, "backward_flops", size + " (2 x forward)", torch.tensor([2.0 * by_hand]).double(),
                    torch.tensor([float(fc.get_total_flops())]).double(), seed)

    elem = x.element_size()
    ran = torch.tensor([2 * c * M * K * N / nbytes for c, M, K, N, nbytes in seen.seen], dtype=torch.float64)
    yours = torch.tensor([intensity(c, M, K, N, elem) for _, c, M, K, N in table], dtype=torch.float64)
    tutor_lab.check(LAB, "intensity", size + " (FLOP/byte)", yours, ran, seed, rtol=1e-12)


# ---------------------------------------------------------------- bench
def bench():
    dt = torch.bfloat16
    a = torch.randn(8192, 8192, device="cuda", dtype=dt)
    bm = torch.randn(8192, 8192, device="cuda", dtype=dt)
    mm_ms = tutor_lab.timed_ms(lambda: torch.mm(a, bm))
    mm_rate = 2 * 8192**3 / (mm_ms * 1e9)  # TFLOP/s
    del a, bm
    ceiling = {"name": "torch.mm bf16, 8192 x 8192 x 8192 (same run)", "value": mm_rate, "unit": "TFLOP/s"}
    tutor_lab.measure(LAB, "mm_8192", "gemm_rate", mm_rate, "TFLOP/s",
                      {"name": "NVIDIA H200 dense bf16 peak (datasheet)", "value": 989.5, "unit": "TFLOP/s"},
                      ms=mm_ms)
    d, V = XL["d"], XL["V"]
    for T in (1, 16, 128, 1024, 6144):  # one decoded token up to the training batch of train_mfu
        for name, _, M, K, N in matmul_table(1, T, d, XL["a"], V):
            if name in ("scores", "mix"):
                continue  # attention's products are B03's subject; here the products with weights
            x = torch.randn(M, K, device="cuda", dtype=dt)
            w = torch.randn(N, K, device="cuda", dtype=dt)  # a weight as nn.Linear stores it
            ms = tutor_lab.timed_ms(lambda: torch.mm(x, w.t()))
            f, nbytes = flops(1, M, K, N), 2 * (M * K + K * N + M * N)
            rec = {"event": "measure", "lab": LAB, "variant": f"{name}_T{T}", "metric": "gemm_rate",
                   "value": f / (ms * 1e9), "unit": "TFLOP/s", "ceiling": ceiling, "bytes": nbytes, "flops": f,
                   "ms": ms}
            print(json.dumps(rec), flush=True)


def main():
    args = tutor_lab.parse_args()
    rng = random.Random(args.seed)
    device = tutor_lab.DEVICE
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    for _ in range(1 if args.quick else 3):
        a = rng.choice((2, 3, 5))
        check_size(args.seed, rng.randint(1, 3), rng.randint(3, 21), a * rng.choice((3, 7, 11)), a,
                   rng.randint(17, 101), device)
    if args.bench:
        if device != "cuda":
            print(json.dumps({"event": "skip", "lab": LAB, "reason": "the bench needs a GPU"}), flush=True)
        else:
            bench()
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
