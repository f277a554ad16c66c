"""B07 lab (exercise): pipeline_memory -- does pipelining reduce activation memory? Measure it.

A stack of L identical MLP layers (Linear h->4h, GELU, Linear 4h->h) is cut into S
pipeline stages, one process per stage, connected by point-to-point sends
(torch.distributed: NCCL on GPUs, gloo on the CPU). Each stage runs the order of
forward (F) and backward (B) slots that GPipe or 1F1B prescribes, on M micro-batches
of b rows. Two meters run on every stage:

  saved-tensor accounting  every tensor autograd saves for backward goes through
                           torch.autograd.graph.saved_tensors_hooks; live bytes are
                           counted once per storage (parameters excluded) and the
                           peak is kept. Exact, and works on the CPU.
  allocator peak           torch.cuda.max_memory_allocated during the step minus the
                           memory allocated when the step began (GPU only). Includes
                           the transient gradient buffers the derivation leaves out.

The derivation: one layer keeps a = (h + 4h + 4h) * b * 4 bytes per micro-batch (its
input, the GELU input, the GELU output; fp32). Stage s holds L/S layers and keeps
p_s micro-batches in flight: p_s = M under GPipe, p_s = min(S - s, M) under 1F1B. So

  peak_s = (L/S) * p_s * a        1F1B stage 0: (L/S) * S * a = L * a   (S cancels)

and the same L * a is what ONE device needs to run the whole unpipelined model on one
micro-batch (variant "nopipe"). Checks: every stage's saved bytes equal the formula
exactly, and every stage's weight gradients equal a single-process reference.

Run:  python labs/B07/python/pipeline_memory.py [--quick] [--bench] [--seed N]
      (two or more GPUs: NCCL, one process per GPU, S = 2; otherwise the CPU with gloo)
"""

from __future__ import annotations

import json
import os
import socket
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast (SHARP) for these tests

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "pipeline_memory"
MiB = 2.0**20
RTOL, ATOL = 1e-5, 1e-6  # fp32 gradients: same operations in the same order, so tight


# ---------------------------------------------------------------- the model
def make_layers(L, h, seed, device):
    """L layers of (W1: 4h x h, b1, W2: h x 4h, b2), identical on every rank for a seed."""
    g = torch.Generator().manual_seed(seed)
    layers = []
    for _ in range(L):
        w1 = torch.randn(4 * h, h, generator=g) / h**0.5
        w2 = torch.randn(h, 4 * h, generator=g) / (4 * h) ** 0.5
        b1 = torch.randn(4 * h, generator=g) * 0.1
        b2 = torch.randn(h, generator=g) * 0.1
        layers.append([t.to(device).requires_grad_() for t in (w1, b1, w2, b2)])
    return layers


def run_layers(layers, x):
    for w1, b1, w2, b2 in layers:
        x = F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
    return x


def micro_batch(seed, m, b, h, device):
    """Input rows and the upstream gradient dLoss/dy for micro-batch m (stands in for a loss)."""
    g = torch.Generator().manual_seed(seed * 1000 + m)
    return torch.randn(b, h, generator=g).to(device), torch.randn(b, h, generator=g).to(device)


def bytes_per_layer(b, h, elem=4):
    # TODO 1: the bytes one layer keeps for backward per micro-batch of b rows, elem bytes a value,
    #         parameters excluded: which activation does each of Linear, GELU, Linear need?
    return 0


# ---------------------------------------------------------------- saved-tensor meter
class SavedBytes:
    """Live bytes of the tensors autograd keeps for backward, one count per storage."""

    def __init__(self, exclude):
        self.exclude = {t.untyped_storage().data_ptr() for t in exclude}
        self.live = {}  # storage pointer -> [references, bytes]
        self.now = self.peak = 0

    def pack(self, t):
        ptr = t.untyped_storage().data_ptr()
        if ptr in self.exclude:
            return t
        entry = self.live.get(ptr)
        if entry is None:
            self.live[ptr] = [1, t.untyped_storage().nbytes()]
            self.now += self.live[ptr][1]
            self.peak = max(self.peak, self.now)
        else:
            entry[0] += 1
        return _Saved(self, ptr, t)

    @staticmethod
    def unpack(s):
        return s.tensor if isinstance(s, _Saved) else s

    def release(self, ptr):
        entry = self.live[ptr]
        entry[0] -= 1
        if entry[0] == 0:
            self.now -= entry[1]
            del self.live[ptr]

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)


class _Saved:
    __slots__ = ("meter", "ptr", "tensor")

    def __init__(self, meter, ptr, tensor):
        self.meter, self.ptr, self.tensor = meter, ptr, tensor

    def __del__(self):  # autograd drops the saved tensor after its backward
        self.meter.release(self.ptr)


# ---------------------------------------------------------------- schedules
def stage_order(schedule, S, M, s):
    """(kind, micro-batch) slots of stage s; see schedule_sim for the full simulator."""
    if schedule == "gpipe":
        return [("F", m) for m in range(M)] + [("B", m) for m in range(M)]
    # TODO 2: 1F1B. warmup = the forwards stage s runs before its first backward. 1F1B stops when one
    #         more forward would leave s holding one micro-batch per stage from s to the last (cap: M).
    #         As written it is GPipe.
    warmup = M
    order = [("F", m) for m in range(warmup)]
    for i in range(M - warmup):
        order += [("F", warmup + i), ("B", i)]
    return order + [("B", m) for m in range(M - warmup, M)]


def pipeline_step(schedule, rank, S, M, layers, cfg, device, meter, links):
    """One training step of stage `rank`: run its F/B order, talk to the neighbours.

    links[s] = (forward group, backward group) between stages s and s+1. Activations and
    gradients travel on separate process groups, hence separate NCCL communicators and
    streams. On one shared stream, stage 0 would queue its send of activation m+1 ahead of
    its receive of gradient m, while stage 1 queues its send of gradient m ahead of its
    receive of activation m+1; a large message completes only when its receive runs, so
    each stream waits for the other forever. (Megatron-LM avoids this by posting the send
    and the receive together, in one batched call.)"""
    b, h, seed = cfg["b"], cfg["h"], cfg["seed"]
    held = {}  # micro-batch -> (stage input, stage output): the in-flight activations
    pending = []  # isend handles (and their tensors) not yet known complete
    for kind, m in stage_order(schedule, S, M, rank):
        if kind == "F":
            if rank == 0:
                x = micro_batch(seed, m, b, h, device)[0]
            else:
                x = torch.empty(b, h, device=device)
                dist.recv(x, src=rank - 1, group=links[rank - 1][0], tag=0)
                x.requires_grad_()
            with meter.hooks():
                y = run_layers(layers, x)
            if rank < S - 1:
                out = y.detach()
                pending.append((dist.isend(out, dst=rank + 1, group=links[rank][0], tag=0), out))
            held[m] = (x, y)
        else:
            x, y = held.pop(m)  # dropping our references frees the graph after backward
            if rank == S - 1:
                g = micro_batch(seed, m, b, h, device)[1]
            else:
                g = torch.empty(b, h, device=device)
                dist.recv(g, src=rank + 1, group=links[rank][1], tag=1)
            y.backward(g)
            if rank > 0:
                pending.append((dist.isend(x.grad, dst=rank - 1, group=links[rank - 1][1], tag=1), x.grad))
            del x, y
        pending = [(w, t) for w, t in pending if not w.is_completed()]
    for w, _ in pending:
        w.wait()


def reference_grads(L, cfg, M, device):
    """The unpipelined model on one device, micro-batches one after another."""
    layers = make_layers(L, cfg["h"], cfg["seed"], device)
    for m in range(M):
        x, g = micro_batch(cfg["seed"], m, cfg["b"], cfg["h"], device)
        run_layers(layers, x).backward(g)
    return [[p.grad for p in layer] for layer in layers]


# ---------------------------------------------------------------- one process per stage
def worker(rank, S, cfg, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    gpu = cfg["backend"] == "nccl"
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(cfg["backend"], rank=rank, world_size=S)
    links = [(dist.new_group([s, s + 1]), dist.new_group([s, s + 1])) for s in range(S - 1)]
    barrier = (lambda: dist.barrier(device_ids=[rank])) if gpu else dist.barrier
    L, M, b, h = cfg["L"], cfg["M"], cfg["b"], cfg["h"]
    per = L // S
    mine = make_layers(L, h, cfg["seed"], device)[rank * per:(rank + 1) * per]
    params = [p for layer in mine for p in layer]
    a = bytes_per_layer(b, h)
    tag = "" if S == 2 else f"_S{S}"  # variant names: gpipe_stage0 for S = 2, gpipe_S4_stage0 ...
    out = []

    if rank == 0:  # baseline: the whole model, one micro-batch, one device, no pipeline
        full = make_layers(L, h, cfg["seed"], device)
        meter = SavedBytes([p for layer in full for p in layer])
        base = _alloc_begin(gpu)
        with meter.hooks():
            y = run_layers(full, micro_batch(cfg["seed"], 0, b, h, device)[0])
        y.backward(torch.ones_like(y))
        out.append(dict(variant="nopipe" + tag, stage=0, saved=meter.peak, alloc=_alloc_peak(gpu, base),
                        want=L * a, formula="L*a"))
        del full, y

    for schedule in ("gpipe", "1f1b"):
        for p in params:
            p.grad = None
        pipeline_step(schedule, rank, S, M, mine, cfg, device, SavedBytes(params), links)  # warm-up
        for p in params:
            p.grad.zero_()
        barrier()
        meter = SavedBytes(params)
        base = _alloc_begin(gpu)
        pipeline_step(schedule, rank, S, M, mine, cfg, device, meter, links)
        alloc = _alloc_peak(gpu, base)
        inflight = M if schedule == "gpipe" else min(S - rank, M)
        formula = "(L/S)*M*a" if schedule == "gpipe" else "(L/S)*(S-s)*a"
        out.append(dict(variant=f"{schedule}{tag}_stage{rank}", stage=rank, saved=meter.peak, alloc=alloc,
                        want=per * inflight * a, formula=formula))
        if cfg["check_grads"]:
            ref = reference_grads(L, cfg, M, device)[rank * per:(rank + 1) * per]
            ratio = 0.0
            for layer, rlayer in zip(mine, ref):
                for p, r in zip(layer, rlayer):
                    bad = (p.grad.double() - r.double()).abs() / (ATOL + RTOL * r.double().abs())
                    bad = torch.where(torch.isfinite(p.grad), bad, torch.full_like(bad, float("inf")))
                    ratio = max(ratio, bad.max().item())
            out.append(dict(variant=f"{schedule}{tag}_grads_stage{rank}", stage=rank, ratio=ratio))
            del ref
    queue.put((rank, out))
    barrier()
    dist.destroy_process_group()


def _alloc_begin(gpu):
    if not gpu:
        return 0
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


def _alloc_peak(gpu, base):
    if not gpu:
        return None
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(S, cfg):
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = mp.spawn(worker, args=(S, cfg, free_port(), queue), nprocs=S, join=False)
    results = []
    for _ in range(S):  # drain the queue before joining: a large put blocks until read
        results += queue.get()[1]
    procs.join()
    return results


def main():
    args = tutor_lab.parse_args()
    import random

    rng = random.Random(args.seed)
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    on_gpu = gpus >= 2 and not args.quick
    if on_gpu:  # one process per GPU: S = 2 on a 2-GPU machine
        runs = [dict(S=2, L=8, M=8, h=2048, b=4096 + rng.randint(0, 8) * 8)]
        backend = "nccl"
    elif args.quick:
        runs = [dict(S=S, L=8, M=6, h=32, b=rng.randint(5, 13)) for S in (2, 4)]
        backend = "gloo"
    else:
        runs = [dict(S=S, L=12, M=8, h=96, b=rng.randint(50, 130)) for S in (2, 3, 4)]
        backend = "gloo"
    if not on_gpu:
        print(json.dumps({"event": "note", "lab": LAB,
                          "message": f"running on the CPU with gloo ({gpus} GPU(s) visible; the GPU "
                                     "path needs two): saved-tensor accounting only"}), flush=True)
    for r in runs:
        S = r.pop("S")
        cfg = dict(r, seed=args.seed, backend=backend, check_grads=not args.bench)
        size = f"S={S} L={cfg['L']} M={cfg['M']} h={cfg['h']} b={cfg['b']}"
        a = bytes_per_layer(cfg["b"], cfg["h"])
        for res in sorted(run(S, cfg), key=lambda d: d["variant"]):
            if "ratio" in res:  # gradients: max |g - r| / (atol + rtol |r|) must be <= 1
                tutor_lab.check(LAB, res["variant"], size + " (max |g-r|/(atol+rtol|r|))",
                                torch.tensor([res["ratio"]]), torch.tensor([0.0]), args.seed, atol=1.0)
                continue
            # saved activation bytes must equal the derivation exactly
            tutor_lab.check(LAB, res["variant"], size, torch.tensor([float(res["saved"])], dtype=torch.float64),
                            torch.tensor([float(res["want"])], dtype=torch.float64), args.seed)
            print(f"# {res['variant']:>13}: saved {res['saved'] / MiB:10.3f} MiB = "
                  f"{res['saved'] / max(cfg['L'] * a, 1):.3f} x L*a   predicted {res['formula']} = "
                  f"{res['want'] / MiB:10.3f} MiB" + (f"   allocator peak {res['alloc'] / MiB:10.3f} MiB"
                                                     if res["alloc"] is not None else ""), file=sys.stderr)
            if args.bench:
                ceiling = {"name": f"derived {res['formula']}", "value": res["want"] / MiB, "unit": "MiB"}
                tutor_lab.measure(LAB, res["variant"], "activation_memory", res["saved"] / MiB, "MiB",
                                  ceiling, nbytes=res["saved"])
                if res["alloc"] is not None:
                    tutor_lab.measure(LAB, res["variant"] + "_alloc", "allocator_peak", res["alloc"] / MiB,
                                      "MiB", ceiling, nbytes=res["alloc"])
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
