"""B07 lab (exercise): tp_mlp -- a Megatron-style tensor-parallel MLP on T ranks.

Z = GELU(X A) B with A: h x 4h and B: 4h x h (Shoeybi et al. 2019):

  A is split by columns  A = [A_1 ... A_T]    rank t computes Y_t = GELU(X A_t)  (b x 4h/T)
  B is split by rows     B = [B_1; ...; B_T]  rank t computes Z_t = Y_t B_t      (b x h)
  Z = sum_t Z_t                                one all-reduce of b x h in the forward

GELU is elementwise, so it needs no communication between the two GEMMs. The backward
mirrors it: the gradient of X needs one all-reduce of b x h (operator f below); the
gradient entering the row-parallel GEMM needs none (operator g is the identity there).

Checks: the output, dX and every weight-gradient shard equal the single-device result
within rtol 2e-4, atol 2e-4 (fp32; the only difference is the order of the sums: the 4h hidden
units split in T partial sums, and on a GPU a different GEMM algorithm, with its own summation
order, for each shape; the tolerance allows that rounding and nothing more: a wrong shard or a
missing all-reduce is off by the size of the values themselves).
Run:  python labs/B07/python/tp_mlp.py [--quick] [--bench] [--seed N]
      (two GPUs: NCCL; otherwise two CPU processes with gloo)
"""

from __future__ import annotations

import os
import socket
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast (SHARP) for these tests

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

# fp32 means fp32 here: no TF32 inside the GEMMs, so the sharded and the single-device results
# differ only in the order of the sums (TF32 would add errors of about 1e-3, far above the tolerance).
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "tp_mlp"
RTOL, ATOL = 2e-4, 2e-4  # fp32 sums in a different order and GEMM algorithm; see the docstring


class CopyToTP(torch.autograd.Function):
    """Megatron's f: identity in the forward, all-reduce of the gradient in the backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        # TODO 1: g is only this rank's share of dLoss/dX (from its own slice of A). Return the full
        #         gradient on every rank, without changing in place the tensor autograd handed you.
        return g


class ReduceFromTP(torch.autograd.Function):
    """Megatron's g: all-reduce in the forward, identity in the backward."""

    @staticmethod
    def forward(ctx, z):
        # TODO 2: z is this rank's partial product Y_t B_t. Return the full Z on every rank, z unchanged.
        return z

    @staticmethod
    def backward(ctx, g):
        return g


def tp_mlp(x, a_t, a_bias_t, b_t, b_bias):
    x = CopyToTP.apply(x)
    y = F.gelu(F.linear(x, a_t, a_bias_t))  # column-parallel: this rank's 4h/T hidden units
    z = ReduceFromTP.apply(F.linear(y, b_t))  # row-parallel partial sums, then one all-reduce
    return z + b_bias  # the output bias is added once, after the sum


def full_weights(h, seed, device):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(4 * h, h, generator=g) / h**0.5  # F.linear layout: (out, in)
    a_bias = torch.randn(4 * h, generator=g) * 0.1
    b = torch.randn(h, 4 * h, generator=g) / (4 * h) ** 0.5
    b_bias = torch.randn(h, generator=g) * 0.1
    return [t.to(device) for t in (a, a_bias, b, b_bias)]


def shard(weights, rank, T):
    a, a_bias, b, b_bias = weights
    n = a.shape[0] // T
    rows = slice(rank * n, (rank + 1) * n)
    # TODO 3: rows is this rank's share of the 4h hidden units. Return the parts of A, its bias and B
    #         that touch those units (F.linear's (out, in) layout: on which axis of each?); b_bias is whole.
    return [a.clone(), a_bias.clone(), b.clone(), b_bias.clone()]


def worker(rank, T, cfg, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    gpu = cfg["backend"] == "nccl"
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(cfg["backend"], rank=rank, world_size=T)
    out = []
    for b, h in cfg["sizes"]:
        g = torch.Generator().manual_seed(cfg["seed"] + b * 7 + h)
        x = torch.randn(b, h, generator=g).to(device)
        dz = torch.randn(b, h, generator=g).to(device)
        full = full_weights(h, cfg["seed"] + h, device)
        mine = [t.requires_grad_() for t in shard(full, rank, T)]
        xt = x.clone().requires_grad_()
        z = tp_mlp(xt, *mine)
        z.backward(dz)
        # the single-device reference, on this rank's device
        ref_w = [t.clone().requires_grad_() for t in full]
        xr = x.clone().requires_grad_()
        zr = F.linear(F.gelu(F.linear(xr, ref_w[0], ref_w[1])), ref_w[2], ref_w[3])
        zr.backward(dz)
        n = 4 * h // T  # this rank's hidden units, sliced here independently of shard()
        mine_rows = slice(rank * n, (rank + 1) * n)
        ref_grads = [ref_w[0].grad[mine_rows], ref_w[1].grad[mine_rows], ref_w[2].grad[:, mine_rows], ref_w[3].grad]
        pairs = [(f"output_rank{rank}", z, zr), (f"dX_rank{rank}", xt.grad, xr.grad)]
        pairs += [(f"d{n}_shard{rank}", p.grad, r) for n, p, r in zip(("A", "a_bias", "B", "b_bias"), mine, ref_grads)]
        for name, got, want in pairs:
            # numpy arrays travel by value; a tensor would travel as a shared-memory handle that
            # dies with this process, which can exit before the parent has read it
            out.append((name, f"T={T} b={b} h={h}", got.detach().cpu().numpy(), want.detach().cpu().numpy()))
    if cfg["bench"] and gpu:
        out += bench(rank, T, device)
    queue.put((rank, out))
    dist.barrier(device_ids=[rank]) if gpu else dist.barrier()
    dist.destroy_process_group()


def bench(rank, T, device, b=16384, h=8192):
    """bf16, one MLP of a large transformer layer: fwd+bwd time with T-way TP vs one GPU,
    and the all-reduce of the b x h activation that TP adds twice per MLP."""
    full = [t.to(torch.bfloat16) for t in full_weights(h, 0, device)]
    mine = [t.requires_grad_() for t in shard(full, rank, T)]
    x = torch.randn(b, h, device=device, dtype=torch.bfloat16, requires_grad=True)
    dz = torch.randn(b, h, device=device, dtype=torch.bfloat16)

    def tp_step():
        tp_mlp(x, *mine).backward(dz)

    dist.barrier(device_ids=[rank])
    t_tp = tutor_lab.median_ms(tp_step)
    res = []
    if rank == 0:
        ref = [t.clone().requires_grad_() for t in full]

        def one_gpu():
            F.linear(F.gelu(F.linear(x, ref[0], ref[1])), ref[2], ref[3]).backward(dz)

        t_one = tutor_lab.median_ms(one_gpu)
        res.append(("tp_fwd_bwd", "time", t_tp, "ms",
                    {"name": f"single-GPU time / {T}", "value": t_one / T, "unit": "ms"}, None))
        res.append(("single_fwd_bwd", "time", t_one, "ms",
                    {"name": "single-GPU time", "value": t_one, "unit": "ms"}, None))
    buf = torch.randn(b, h, device=device, dtype=torch.bfloat16)
    t_ar = tutor_lab.median_ms(lambda: dist.all_reduce(buf))
    if rank == 0:
        peer = torch.empty_like(buf, device=torch.device("cuda", 1))
        t_copy = tutor_lab.median_ms(lambda: peer.copy_(buf))
        nbytes = buf.numel() * buf.element_size()
        bus = nbytes * 2 * (T - 1) / T / (t_ar * 1e6)  # ring all-reduce bus bandwidth, GB/s
        res.append(("allreduce_bh", "bus_bandwidth", bus, "GB/s",
                    {"name": "peer copy GPU0->GPU1", "value": nbytes / (t_copy * 1e6), "unit": "GB/s"}, nbytes))
    return [("measure",) + r for r in res]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = tutor_lab.parse_args()
    import random

    rng = random.Random(args.seed)
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    on_gpu = gpus >= 2 and not args.quick
    T = 2
    if args.quick:
        sizes = [(rng.randint(3, 17), 16), (rng.randint(20, 40), 24)]
    else:
        sizes = [(rng.randint(100, 300), 256), (rng.randint(300, 700), 512), (1000 + rng.randint(0, 99), 1024)]
    cfg = dict(sizes=sizes, seed=args.seed, backend="nccl" if on_gpu else "gloo", bench=args.bench)
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = mp.spawn(worker, args=(T, cfg, free_port(), queue), nprocs=T, join=False)
    results = []
    for _ in range(T):  # drain the queue before joining: a large put blocks until read
        results += queue.get()[1]
    procs.join()
    for item in results:
        if item[0] == "measure":
            _, variant, metric, value, unit, ceiling, amount = item
            tutor_lab.measure(LAB, variant, metric, value, unit, ceiling,
                              nbytes=amount if unit == "GB/s" else None)
        else:
            name, size, got, want = item
            tutor_lab.check(LAB, name, size, torch.from_numpy(got), torch.from_numpy(want), args.seed,
                            atol=ATOL, rtol=RTOL)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
