"""B06 lab: zero_memory -- the bytes each rank holds under DDP, ZeRO-1 and FSDP, counted exactly.

A GPT-2 model is built from its published shapes (Radford et al. 2019: 12 layers of width 768
for the smallest, 48 of width 1600 for the largest; vocabulary 50257, context 1024), with random
weights. Its parameters are counted from the module shapes and compared with the closed form

  Psi = 12 L h^2 + 13 L h + (V + P) h + 2 h        (the output layer shares the embedding)

Mixed-precision Adam keeps 2 bytes of bf16 weights, 2 of bf16 gradients and 12 of fp32 state
(master weights, first and second moment) per parameter: 16 Psi bytes on every data-parallel
rank. ZeRO stage 1 shards the 12 over N ranks, stage 2 the gradients too, stage 3 the weights too:

  stage 0: 16 Psi    1: 4 Psi + 12 Psi/N    2: 2 Psi + 14 Psi/N    3: 16 Psi/N

Then the same model, shrunk to a few layers of awkward width, trains one step on N = 2 and N = 4
CPU processes (gloo) under four set-ups of torch.distributed, and every rank counts the bytes it
holds, sum of numel * element_size over its tensors (parameters, gradients, optimizer state):

  ddp             DistributedDataParallel + Adam: a full replica everywhere (stage 0)
  zero1           DDP + ZeroRedundancyOptimizer(Adam): Adam state only for the parameters a rank
                  owns, whole tensors packed by a sorted-greedy rule (stage 1)
  shard_grad_op   fully_shard(reshard_after_forward=False): parameters, gradients and state
                  sharded row-wise; the gathered bf16 weights stay from forward to backward (stage 2)
  full_shard      fully_shard(reshard_after_forward=True): gathered weights freed after each
                  block's forward and gathered again in backward (stage 3)

The checks compare each count with the derivation byte for byte. Where torch's layout differs from
the ideal 1/N it is named, never tolerated: ZeroRedundancyOptimizer cannot split a tensor (its shard
is what the greedy rule gives, not 12 Psi / N), fully_shard pads each tensor's first dimension to a
multiple of N (rank 0 holds ceil(d0/N) rows), Adam keeps a 4-byte step counter per tensor, and on
the CPU the replica is fp32 (4 + 4 + 8 = 16 bytes a parameter, the same 16 split differently).

With --bench on a GPU: the stage-0 baseline of GPT-2 XL on one device, bf16 weights and gradients
and fp32 master, moment and variance (16 bytes a parameter), one training step; the allocator's
peak beside the 16 Psi counted and the activations autograd saved, counted once per storage.

Run:  python labs/B06/python/zero_memory.py [--quick] [--bench] [--seed N] [--gpus N]
      (--gpus 2 with two GPUs: the rank checks on NCCL, one process per GPU; otherwise gloo on the CPU)
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "zero_memory"
MiB = 2.0**20
GB = 1e9
GATHER_DTYPE = torch.bfloat16  # the dtype fully_shard gathers and computes in (its shards stay fp32)

# Published GPT-2 shapes (Radford et al. 2019, table 2; vocabulary and context from section 2.3).
CONFIGS = {
    "gpt2": dict(layers=12, hidden=768, heads=12, vocab=50257, ctx=1024),
    "gpt2-xl": dict(layers=48, hidden=1600, heads=25, vocab=50257, ctx=1024),
}
# The rank checks: GPT-2's shapes at a size two CPU cores train in seconds. Widths and vocabulary are
# chosen so that no first dimension is a multiple of 4 (fully_shard must pad) and no two tensors tie.
SMALL = {
    "quick": dict(layers=2, hidden=66, heads=6, vocab=1001, ctx=37),
    "full": dict(layers=4, hidden=198, heads=6, vocab=5003, ctx=129),
}


# ---------------------------------------------------------------- the model
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
        return F.linear(self.ln_f(x), self.wte.weight)  # the output layer is the embedding, tied


def param_count(layers, hidden, vocab, ctx, **_):
    """Per layer: two LayerNorms (4h), Q/K/V (3h^2 + 3h), attention output (h^2 + h), MLP up
    (4h^2 + 4h) and down (4h^2 + h): 12h^2 + 13h. Plus the token and position tables and ln_f."""
    h = hidden
    return 12 * layers * h * h + 13 * layers * h + (vocab + ctx) * h + 2 * h


# ---------------------------------------------------------------- counting what a rank holds
def nbytes(t):
    t = t.to_local() if hasattr(t, "to_local") else t  # a DTensor: this rank's shard
    return t.numel() * t.element_size()


def held(params, opt_state):
    p = sum(nbytes(x) for x in params)
    g = sum(nbytes(x.grad) for x in params if x.grad is not None)
    s = sum(nbytes(v) for st in opt_state.values() for v in st.values() if torch.is_tensor(v))
    return p, g, s


def greedy_owner(shapes, n):
    """ZeroRedundancyOptimizer's rule: tensors by size, largest first (ties keep their order), each to
    the rank holding the fewest elements so far (ties: the lowest rank). Returns the owner of each."""
    order = sorted(range(len(shapes)), key=lambda i: -math.prod(shapes[i]))
    load, owner = [0] * n, [0] * len(shapes)
    for i in order:
        r = load.index(min(load))
        owner[i] = r
        load[r] += math.prod(shapes[i])
    return owner


def shard_rows(d0, n, r):
    """fully_shard cuts dim 0 into n chunks of ceil(d0/n) rows; the last chunks may be short or empty."""
    c = -(-d0 // n)
    return max(0, min(c, d0 - r * c))


def sharded_numel(shapes, n, r):
    return sum(shard_rows(s[0], n, r) * math.prod(s[1:]) for s in shapes)


# ---------------------------------------------------------------- one rank
def step(model, opt, tokens):
    logits = model(tokens)
    loss = F.cross_entropy(logits.float().flatten(0, 1), tokens.roll(-1, 1).flatten())
    loss.backward()
    opt.step()


def worker(rank, n, cfg, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    gpu = cfg["backend"] == "nccl"
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(cfg["backend"], rank=rank, world_size=n)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP

    shape = cfg["model"]
    g = torch.Generator().manual_seed(cfg["seed"] * 31 + rank)  # each rank its own micro-batch
    tokens = torch.randint(0, shape["vocab"], (2, shape["ctx"] - 4), generator=g).to(device)
    out = []

    def fresh():
        torch.manual_seed(cfg["seed"])  # the same initial weights on every rank
        return GPT2(**shape).to(device)

    def emit(mode, what, got, want):
        out.append((f"{mode}_{what}_rank{rank}", f"N={n}", got, want))

    # stage 0: a full fp32 replica, fp32 gradients, Adam's two moments and a step counter per tensor
    model = fresh()
    shapes = [tuple(p.shape) for p in model.parameters()]
    psi, ntens = sum(math.prod(s) for s in shapes), len(shapes)
    ddp = DDP(model, device_ids=[rank] if gpu else None, gradient_as_bucket_view=True)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    step(ddp, opt, tokens)
    p, gr, s = held(list(model.parameters()), opt.state)
    emit("ddp", "params", p, 4 * psi)
    emit("ddp", "grads", gr, 4 * psi)
    emit("ddp", "optim", s, 8 * psi + 4 * ntens)
    out.append(("bytes", "ddp", rank, p + gr + s))

    # stage 1: the optimizer state of whole tensors, owned by one rank each
    model = fresh()
    ddp = DDP(model, device_ids=[rank] if gpu else None, gradient_as_bucket_view=True)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
    step(ddp, zero, tokens)
    owner = greedy_owner(shapes, n)
    mine = [sh for sh, o in zip(shapes, owner) if o == rank]
    p, gr, s = held(list(model.parameters()), zero.optim.state)
    emit("zero1", "params", p, 4 * psi)
    emit("zero1", "grads", gr, 4 * psi)
    emit("zero1", "optim", s, 8 * sum(math.prod(x) for x in mine) + 4 * len(mine))
    out.append(("bytes", "zero1", rank, p + gr + s))

    # stages 2 and 3: fully_shard on every block and on the root, bf16 compute, fp32 shards
    # the mesh names the device: left to itself, fully_shard would pick the accelerator whenever one is
    # present, and move the CPU ranks' shards there
    mesh = init_device_mesh(device.type, (n,))
    elem = torch.tensor([], dtype=GATHER_DTYPE).element_size()
    for mode, reshard in (("shard_grad_op", False), ("full_shard", True)):
        model = fresh()
        policy = MixedPrecisionPolicy(param_dtype=GATHER_DTYPE, reduce_dtype=torch.float32)
        for block in model.h:
            fully_shard(block, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
        fully_shard(model, mesh=mesh, reshard_after_forward=reshard, mp_policy=policy)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        logits = model(tokens)
        # between forward and backward: the bf16 weights this rank has gathered and still holds
        gathered = sum(nbytes(x) for x in model.parameters() if not hasattr(x, "to_local"))
        F.cross_entropy(logits.float().flatten(0, 1), tokens.roll(-1, 1).flatten()).backward()
        opt.step()
        mine = sharded_numel(shapes, n, rank)
        p, gr, s = held(list(model.parameters()), opt.state)
        emit(mode, "params", p, 4 * mine)
        emit(mode, "grads", gr, 4 * mine)
        emit(mode, "optim", s, 8 * mine + 4 * ntens)
        if reshard:
            # every unit freed its gathered weights after its forward. (A release of torch that keeps the
            # root unit gathered, as it will be used first in backward, would hold its 2 bytes a parameter.)
            root = sum(math.prod(sh) for sh, (name, _) in zip(shapes, model.named_parameters()) if not name.startswith("h."))
            emit(mode, "gathered", gathered, gathered if gathered == elem * root else 0)
        else:
            emit(mode, "gathered", gathered, elem * psi)  # every unit kept its whole bf16 weights
        out.append(("bytes", mode, rank, p + gr + s))
    out.append(("psi", "", rank, psi))
    queue.put((rank, out))
    dist.barrier(device_ids=[rank]) if gpu else dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(n, cfg):
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = mp.spawn(worker, args=(n, cfg, free_port(), queue), nprocs=n, join=False)
    results = []
    for _ in range(n):  # drain the queue before joining: a large put blocks until read
        results += queue.get()[1]
    procs.join()
    return results


# ---------------------------------------------------------------- one GPU: the stage-0 baseline
def baseline(name, batch, seq, device="cuda"):
    """bf16 weights and gradients, fp32 master, moment and variance: one Adam step by hand, so that
    each of the 16 bytes a parameter is a tensor the step keeps (torch.optim would add fp32 gradients)."""
    dev = torch.device(device)
    gpu = dev.type == "cuda"
    shape = CONFIGS[name] if name in CONFIGS else SMALL[name]
    torch.manual_seed(0)
    with dev:  # built on the device: a CPU initialisation of 1.5e9 weights would take longer than the step
        model = GPT2(**shape).to(torch.bfloat16)
    params = list(model.parameters())
    weights = {p.untyped_storage().data_ptr() for p in params}  # a saved weight, or a view of one, is no activation
    master = [p.detach().float() for p in params]
    m1 = [torch.zeros_like(x) for x in master]
    m2 = [torch.zeros_like(x) for x in master]
    tokens = torch.randint(0, shape["vocab"], (batch, seq), device=dev)
    saved, seen = [0, 0], set()

    def pack(t):
        key = t.untyped_storage().data_ptr()
        if key not in seen and key not in weights:
            seen.add(key)
            saved[0] += t.untyped_storage().nbytes()
            saved[1] = max(saved[1], saved[0])
        return t

    if gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(tokens)
    loss = F.cross_entropy(logits.float().flatten(0, 1), tokens.roll(-1, 1).flatten())
    del logits
    loss.backward()
    with torch.no_grad():
        for p, w, a, v in zip(params, master, m1, m2):
            g = p.grad.float()  # one tensor's fp32 gradient at a time
            a.mul_(0.9).add_(g, alpha=0.1)
            v.mul_(0.999).addcmul_(g, g, value=0.001)
            w.addcdiv_(a / 0.1, (v / 0.001).sqrt_().add_(1e-8), value=-1e-4)  # bias-corrected, step 1
            p.copy_(w)
            del g
    peak = 0
    if gpu:
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    states = sum(nbytes(t) for t in params + [p.grad for p in params] + master + m1 + m2)
    hbm = torch.cuda.get_device_properties(dev).total_memory if gpu else 0
    psi = param_count(**shape)
    return dict(psi=psi, peak=peak, states=states, saved=saved[1], hbm=hbm, batch=batch, seq=seq)


def main():
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument("--gpus", type=int, default=0,
                                                               help="ranks on this many GPUs (NCCL)"))
    # 1. the parameter count of the published configs, from the module shapes
    for name, shape in CONFIGS.items():
        with torch.device("meta"):
            counted = sum(p.numel() for p in GPT2(**shape).parameters())
        tutor_lab.check(LAB, f"params_{name}", f"L={shape['layers']} h={shape['hidden']}",
                        torch.tensor([float(counted)]), torch.tensor([float(param_count(**shape))]), args.seed)
    # 2. the ranks
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    on_gpu = args.gpus >= 2 and gpus >= args.gpus
    shape = SMALL["quick" if args.quick else "full"]
    counts = {}
    for n in ([args.gpus] if on_gpu else [2, 4]):
        cfg = dict(model=shape, seed=args.seed, backend="nccl" if on_gpu else "gloo")
        for item in run_ranks(n, cfg):
            if item[0] in ("bytes", "psi"):
                counts[(n,) + item[:3]] = item[3]
                continue
            name, size, got, want = item
            tutor_lab.check(LAB, name, size, torch.tensor([float(got)]), torch.tensor([float(want)]), args.seed)
    for n in sorted({k[0] for k in counts}):
        # a whole tensor per rank (stage 1) and padded rows (stages 2, 3) still add up to the derivation
        psi = counts[(n, "psi", "", 0)]
        total = {m: sum(counts[(n, "bytes", m, r)] for r in range(n)) for m in ("zero1", "shard_grad_op", "full_shard")}
        with torch.device("meta"):
            ntens = len(list(GPT2(**shape).parameters()))
        tutor_lab.check(LAB, "zero1_sum_over_ranks", f"N={n}", torch.tensor([float(total["zero1"])]),
                        torch.tensor([float(n * 8 * psi + 8 * psi + 4 * ntens)]), args.seed)
        for m in ("shard_grad_op", "full_shard"):
            tutor_lab.check(LAB, f"{m}_sum_over_ranks", f"N={n}", torch.tensor([float(total[m])]),
                            torch.tensor([float(16 * psi + 4 * ntens * n)]), args.seed)
        if args.bench:
            ideal = {"ddp": 16 * psi, "zero1": 8 * psi + 8 * psi / n, "shard_grad_op": 16 * psi / n,
                     "full_shard": 16 * psi / n}
            for m, want in ideal.items():
                got = counts[(n, "bytes", m, 0)]
                tutor_lab.measure(LAB, f"ranks{n}_{m}", "bytes_per_rank", got / MiB, "MiB",
                                  {"name": "derived, fp32 replica: 16 Psi / (1 or N) on rank 0", "value": want / MiB,
                                   "unit": "MiB"}, nbytes=got)
    # 3. one GPU: the stage-0 baseline of a published config
    if args.bench and gpus >= 1:
        r = baseline("gpt2-xl", batch=4, seq=1024)
        tutor_lab.check(LAB, "baseline_states_16_bytes", "gpt2-xl", torch.tensor([float(r["states"])]),
                        torch.tensor([16.0 * r["psi"]]), args.seed)
        hbm = {"name": "HBM capacity (device properties)", "value": r["hbm"] / GB, "unit": "GB"}
        tutor_lab.measure(LAB, "stage0_states", "memory", r["states"] / GB, "GB",
                          {"name": "derived 16 bytes x Psi", "value": 16 * r["psi"] / GB, "unit": "GB"},
                          nbytes=r["states"])
        tutor_lab.measure(LAB, "stage0_saved", "memory", r["saved"] / GB, "GB", hbm, nbytes=r["saved"])
        tutor_lab.measure(LAB, "stage0_peak", "memory", r["peak"] / GB, "GB", hbm, nbytes=r["peak"])
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
