"""B06 lab (exercise): ddp_buckets -- how many all-reduces DistributedDataParallel issues per step, and how big.

DDP does not all-reduce each gradient alone (hundreds of small messages, each paying the start-up
latency) nor all of them at the end (no overlap with the backward pass). It packs gradients into
buckets of about bucket_cap_mb MiB, in the order backward produces them, and all-reduces a bucket
as soon as its last gradient is ready, while backward computes the rest (Li et al. 2020).

The rule, from the order the gradients become ready and a list of size limits: add tensors to the
open bucket; once the bucket holds at least the current limit, close it and move to the next limit
(the last limit repeats). A tensor is never split, so a bucket can exceed its limit by up to one
tensor. In its first step DDP does not know that order yet and, unless it must look for unused
parameters, reduces everything in ONE bucket; it records the order, rebuilds its buckets, and from
the second step on uses the rule with limits [first_cap, cap] (first_cap = 1 MiB when bucket_cap_mb is
left at its default of 25, else the cap itself: so in torch 2.11 and 2.13; the lab reads both limits from
the DDP object).

The lab registers a communication hook that averages each bucket with one all-reduce and counts
the calls and the bytes. Checks, on N = 2 CPU processes (gloo), for several caps:
  step 1   one call of 4 Psi bytes (fp32 gradients, Psi parameters)
  step 2   the calls and bucket sizes the rule predicts from the ready order, recorded by
           post-accumulate-grad hooks on an undistributed copy of the model; 4 Psi bytes in all
  both     every gradient equals the gradient of the mean loss over all ranks' micro-batches,
           computed in one process (fp32, rtol 1e-4: the sums run in another order)
A ring all-reduce of a bucket of n bytes sends 2 (N-1)/N * n bytes from each rank; the bucket cap
changes the number of messages, never the bytes.

Run:  python labs/B06/python/ddp_buckets.py [--quick] [--bench] [--seed N] [--gpus N]
      (--gpus 2 with two GPUs: NCCL, one process per GPU, on GPT-2's smallest published shape;
      otherwise gloo on the CPU)
"""

from __future__ import annotations

import math
import os
import socket
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast (SHARP) for these tests

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32: the gradient check is tight
torch.backends.cudnn.allow_tf32 = False

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "ddp_buckets"
MiB = 2**20
RTOL, ATOL = 1e-4, 1e-6
DEFAULT_CAP_MB, DEFAULT_FIRST_BYTES = 25, 1 * MiB  # DDP's defaults (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES)
# GPT-2's shapes at a size the CPU trains in seconds; None is DDP's default cap.
SHAPES = {
    "quick": (dict(layers=2, hidden=66, heads=6, vocab=1001, ctx=37), [0.05, 0.2, None]),
    "full": (dict(layers=4, hidden=198, heads=6, vocab=5003, ctx=129), [0.5, 2, None]),
}


# ---------------------------------------------------------------- the model (as in zero_memory)
class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(h)
        self.c_attn = nn.Linear(h, 3 * h)
        self.attn_proj = nn.Linear(h, h)
        self.ln_2 = nn.LayerNorm(h)
        self.c_fc = nn.Linear(h, 4 * h)
        self.mlp_proj = nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(b, s, h))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, layers, hidden, heads, vocab, ctx):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(ctx, hidden)
        self.h = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def loss_of(model, tokens):
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), tokens.roll(-1, 1).flatten())


# ---------------------------------------------------------------- the derivation
def buckets(sizes, limits):
    """Bucket sizes in bytes, in the order they fill, for tensors of `sizes` bytes in ready order."""
    # TODO 1: the rule of the docstring: fill a bucket in ready order, close it once it holds at least
    # the current limit (the last limit repeats), and close the last one, however small, at the end.
    return [sum(sizes)]


def limits_for(cap_mb):
    """DDP's limits: the cap for every bucket, and 1 MiB for the first one at the default cap."""
    if cap_mb is None:
        return [DEFAULT_FIRST_BYTES, DEFAULT_CAP_MB * MiB]
    cap = int(cap_mb * MiB)
    return [cap, cap]


def limits_of(ddp):
    """The limits this DDP object rebuilds its buckets with, read from it (torch 2.13 keeps them in
    _bucket_config; earlier releases, 2.11 among them, use 1 MiB first only at the default cap)."""
    cfg = getattr(ddp, "_bucket_config", None)
    if cfg is not None:
        return [cfg.first_bucket_bytes_cap, ddp.bucket_bytes_cap]
    first = dist._DEFAULT_FIRST_BUCKET_BYTES if ddp.bucket_bytes_cap_default else ddp.bucket_bytes_cap
    return [first, ddp.bucket_bytes_cap]


def ready_order(shape, seed, tokens, device):
    """The order backward finishes each parameter's gradient, on an undistributed copy."""
    torch.manual_seed(seed)
    model = GPT2(**shape).to(device)
    order = []
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(lambda t: order.append(t.numel() * t.element_size()))
    loss_of(model, tokens).backward()
    return order


# ---------------------------------------------------------------- the hook
def counting_allreduce(state, bucket):
    """Average one bucket over the ranks with one all-reduce; count the call and its bytes."""
    buf = bucket.buffer()
    # TODO 2: record this call's bytes in state["calls"], and make the all-reduce's sum over the
    # state["world"] ranks an average, as DDP's own all-reduce does.
    fut = dist.all_reduce(buf, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


# ---------------------------------------------------------------- one rank
def micro_batch(seed, rank, shape, device):
    g = torch.Generator().manual_seed(seed * 31 + rank)
    return torch.randint(0, shape["vocab"], (2, shape["ctx"] - 3), generator=g).to(device)


def worker(rank, n, cfg, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    gpu = cfg["backend"] == "nccl"
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(cfg["backend"], rank=rank, world_size=n)
    from torch.nn.parallel import DistributedDataParallel as DDP

    shape, seed = cfg["shape"], cfg["seed"]
    batches = [micro_batch(seed + s, r, shape, device) for s in range(2) for r in range(n)]
    out = []
    for cap in cfg["caps"]:
        torch.manual_seed(seed)
        model = GPT2(**shape).to(device)
        psi_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        kw = {} if cap is None else {"bucket_cap_mb": cap}
        ddp = DDP(model, device_ids=[rank] if gpu else None, **kw)
        state = {"calls": [], "world": n}
        ddp.register_comm_hook(state, counting_allreduce)
        label = f"cap={'default' if cap is None else cap} MiB"
        for s in range(2):
            state["calls"].clear()
            ddp.zero_grad(set_to_none=True)
            loss_of(ddp, batches[s * n + rank]).backward()
            limits = limits_of(ddp)
            want = [psi_bytes] if s == 0 else buckets(ready_order(shape, seed, batches[n + rank], device), limits)
            out.append((f"step{s + 1}_calls_rank{rank}", label, [len(state["calls"])], [len(want)]))
            out.append((f"step{s + 1}_bucket_bytes_rank{rank}", label, list(state["calls"]), want))
            # the reference: one process, the mean loss over every rank's micro-batch of this step
            torch.manual_seed(seed)
            ref = GPT2(**shape).to(device)
            sum(loss_of(ref, batches[s * n + r]) for r in range(n)).div(n).backward()
            got = torch.cat([p.grad.flatten() for p in model.parameters()])
            exp = torch.cat([p.grad.flatten() for p in ref.parameters()])
            out.append((f"step{s + 1}_grads_rank{rank}", label, got.cpu().numpy(), exp.cpu().numpy()))
        if cfg["bench"]:
            out.append(("calls", cap, rank, len(state["calls"]), len(want), sum(state["calls"]), limits))
    queue.put((rank, out))
    dist.barrier(device_ids=[rank]) if gpu else dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument("--gpus", type=int, default=0,
                                                               help="ranks on this many GPUs (NCCL)"))
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    on_gpu = args.gpus >= 2 and gpus >= args.gpus
    n = args.gpus if on_gpu else 2
    shape, caps = SHAPES["quick" if args.quick else "full"]
    if on_gpu:  # a model large enough for the cap to matter on NVLink
        shape, caps = dict(layers=12, hidden=768, heads=12, vocab=50257, ctx=1024), [1, 25, None, 100]
    cfg = dict(shape=shape, caps=caps, seed=args.seed, backend="nccl" if on_gpu else "gloo", bench=args.bench)
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = mp.spawn(worker, args=(n, cfg, free_port(), queue), nprocs=n, join=False)
    results = []
    for _ in range(n):  # drain the queue before joining: a large put blocks until read
        results += queue.get()[1]
    procs.join()
    for item in results:
        if item[0] == "calls":
            _, cap, rank, calls, derived, nb, limits = item
            if rank == 0:
                name = "default" if cap is None else f"{cap:g}MiB".replace(".", "p")
                tutor_lab.measure(LAB, f"cap_{name}", "all_reduce_calls", calls, "calls",
                                  {"name": f"bucket rule on the ready order, limits {limits[0]} then {limits[1]} bytes",
                                   "value": derived, "unit": "calls"}, nbytes=nb)
        else:
            name, size, got, want = item
            exact = not hasattr(got, "dtype")
            got, want = torch.as_tensor(got, dtype=torch.float64), torch.as_tensor(want, dtype=torch.float64)
            tutor_lab.check(LAB, name, size, got, want, args.seed,
                            atol=0 if exact else ATOL, rtol=0 if exact else RTOL)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
