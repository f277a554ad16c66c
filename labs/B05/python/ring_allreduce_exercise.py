"""B05 lab (exercise): ring_allreduce -- a ring all-reduce over torch.distributed send and receive.

p ranks each hold n floats; afterwards every rank holds their element-wise sum. The n floats are
cut into p chunks (chunk c starts at n*c//p, so chunk sizes differ by at most one element).
Reduce-scatter, p-1 steps: at step s rank r sends chunk (r - s) mod p to rank r + 1 and receives
chunk (r - 1 - s) mod p from rank r - 1, to which it adds its own input. After p-1 steps rank r
holds the full sum of chunk (r + 1) mod p. All-gather, p-1 steps: at step s rank r sends chunk
(r + 1 - s) mod p on and keeps the chunk (r - s) mod p that arrives. Each step each rank sends
about n/p elements: 2 (p-1)/p * n in all, the least any all-reduce built on point-to-point sends
can send (Patarasuk & Yuan 2009).

Checks, on p = 2, 3 and 4 CPU processes (gloo): every rank's output equals dist.all_reduce of the
same inputs (fp32, rtol 1e-5: the sums run in another order), for sizes p does not divide. Outputs
and staging buffers start poisoned (NaN) inside guard zones; a write past either end fails.
With --bench on a machine with two or more GPUs: the hand-written ring and dist.all_reduce under
NCCL, timed from 8 B to 1 GiB, with the peer-copy bandwidth from GPU 0 to GPU 1 as the ceiling. On
one GPU the timing is skipped, and the lab says so.

Run:  python labs/B05/python/ring_allreduce.py [--quick] [--bench] [--seed N]
"""

from __future__ import annotations

import datetime
import os
import queue as queue_module
import socket
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast (SHARP) for these runs

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.multiprocessing.spawn import ProcessExitedException, ProcessRaisedException

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402

LAB = "ring_allreduce"
RTOL, ATOL = 1e-5, 1e-6


def bounds(n: int, p: int, c: int) -> tuple[int, int]:
    """Chunk c of n elements cut p ways."""
    return n * c // p, n * (c + 1) // p


def exchange(send: torch.Tensor, to: int, recv: torch.Tensor, frm: int) -> None:
    """Send one chunk to the next rank while receiving one from the previous rank."""
    reqs = []
    if send.numel():  # both ends compute the same bounds, so both skip an empty chunk
        reqs.append(dist.isend(send, to))
    if recv.numel():
        reqs.append(dist.irecv(recv, frm))
    for r in reqs:
        r.wait()


def ring_allreduce(x: torch.Tensor, out: torch.Tensor, recv: torch.Tensor, rank: int, p: int) -> None:
    """out = the sum over all ranks of x, by reduce-scatter then all-gather; recv holds one chunk."""
    n, nxt, prv = x.numel(), (rank + 1) % p, (rank - 1) % p
    for s in range(p - 1):  # reduce-scatter
        # TODO 1: at step s this rank sends chunk (rank - s) mod p and receives chunk (rank - 1 - s) mod p;
        #         the placeholder forgets the step, so the same two chunks travel every time.
        a, b = bounds(n, p, rank)
        c, d = bounds(n, p, (rank - 1) % p)
        src = x if s == 0 else out  # step 0 sends this rank's own input
        exchange(src[a:b], nxt, recv[:d - c], prv)
        # TODO 2: the chunk that arrived is a partial sum of the ranks before this one: add this rank's
        #         own input to it, into out[c:d]. The placeholder keeps what arrived and drops ours.
        out[c:d].copy_(recv[:d - c])
    for s in range(p - 1):  # all-gather: rank r holds the full sum of chunk r + 1; pass it on
        # TODO 3: pass the finished chunk (rank + 1 - s) mod p to the next rank and keep, in place in out,
        #         the finished chunk (rank - s) mod p that the previous rank sends.
        pass


# ---------------------------------------------------------------- one rank
def worker(rank, p, cfg, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    gpu = cfg["backend"] == "nccl"
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(cfg["backend"], rank=rank, world_size=p, timeout=datetime.timedelta(seconds=120))
    out_items = []
    for n in cfg["sizes"]:
        g = torch.Generator().manual_seed(cfg["seed"] * 7919 + rank * 104729 + n)  # each rank its own inputs
        x = tutor_lab.guarded_empty(n, name=f"x of rank {rank}", device=device)
        x.copy_(torch.rand(n, generator=g) * 2 - 1)
        out = tutor_lab.output(n, name=f"out of rank {rank}", device=device)
        recv = tutor_lab.output((n + p - 1) // p, name=f"recv of rank {rank}", device=device)
        ring_allreduce(x, out, recv, rank, p)
        ref = x.clone()
        dist.all_reduce(ref)  # the library's all-reduce of the same inputs
        written = tutor_lab.guards_written()
        out_items.append(("check", p, n, rank, out.cpu().numpy(), ref.cpu().numpy(), written))  # by value, not shared memory
    if cfg["bench"]:
        out_items += bench(rank, p, device, cfg.get("max_log2", 30))
    queue.put(out_items)
    dist.barrier(device_ids=[rank]) if gpu else dist.barrier()
    dist.destroy_process_group()


def bench(rank, p, device, max_log2):
    """NCCL timings of the hand-written ring and of dist.all_reduce, 8 B .. 2^max_log2 B (1 GiB) per rank."""
    big = torch.zeros((1 << max_log2) // 4, device=device)
    recv = torch.empty((big.numel() + p - 1) // p, device=device)
    out = torch.empty_like(big)
    rows = []
    for k in range(3, max_log2 + 1):
        n = (1 << k) // 4
        x = big[:n]
        for name, fn in (("nccl", lambda: dist.all_reduce(x)), ("ring", lambda: ring_allreduce(x, out[:n], recv, rank, p))):
            dist.barrier(device_ids=[rank]) if device.type == "cuda" else dist.barrier()
            ms = tutor_lab.timed_ms(fn, warmup=3, reps=10 if k > 26 else 20, flush=False, queue_ahead=False)
            rows.append(("time", name, k, rank, ms))
    return rows


def peer_copy_ceiling() -> dict:
    """GPU 0 to GPU 1, 1 GiB: the link one ring step crosses."""
    src = torch.zeros(1 << 30, dtype=torch.uint8, device="cuda:0")
    dst = torch.empty_like(src, device="cuda:1")
    ms = tutor_lab.median_ms(lambda: dst.copy_(src))
    return {"name": "peer copy GPU 0 to GPU 1", "value": tutor_lab.gbps(1 << 30, ms), "unit": "GB/s"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(p, cfg):
    """Runs p ranks: (their results, None), or (None, why) when a rank raised (its traceback) or the ranks
    waited on each other past cfg["timeout"] seconds."""
    queue = mp.get_context("spawn").Queue()
    procs = mp.spawn(worker, args=(p, cfg, free_port(), queue), nprocs=p, join=False)
    timeout = cfg.get("timeout", 180)
    deadline, items, got = time.monotonic() + timeout, [], 0
    while got < p:  # drain the queue before joining: a large put blocks until read
        try:
            items += queue.get(timeout=0.5)
            got += 1
            continue
        except queue_module.Empty:
            pass
        try:
            procs.join(timeout=0)  # raises at once, with the child's traceback, when a rank failed
        except ProcessRaisedException as e:
            return None, f"rank {e.error_index} of {p} raised an error (the other ranks were stopped):\n{e}"
        except ProcessExitedException as e:
            return None, f"rank {e.error_index} of {p} exited with code {e.exit_code} before it finished"
        if time.monotonic() > deadline:  # a send with no matching receive waits forever
            for proc in procs.processes:
                proc.kill()
            return None, (f"ranks waited on each other for {timeout} s: a send with no matching receive "
                          "(chunk bounds differ between sender and receiver, or a step is missing)")
    procs.join()
    return items, None


def main():
    args = tutor_lab.parse_args()
    sizes = [1, 7, 1001, 65537] if args.quick else [1, 7, 1001, 65537, (1 << 20) + 3]
    for p in (2, 3, 4):
        cfg = dict(sizes=sizes, seed=args.seed, backend="gloo", bench=False, timeout=30 if args.quick else 180)
        print(f"{LAB}: p = {p} ranks (gloo, CPU) ...", file=sys.stderr, flush=True)
        items, why = spawn(p, cfg)
        if items is None:
            print(f"{LAB}: p = {p}: {why}", file=sys.stderr, flush=True)
            tutor_lab.emit({"event": "note", "lab": LAB, "message": f"p = {p}: {why}"})
            tutor_lab.check(LAB, f"p{p}_finished", "every size", torch.zeros(1), torch.ones(1), args.seed)
            continue
        for _, _, n, rank, got, ref, written in items:
            size = f"n={n} floats, p={p}"
            got, ref = torch.as_tensor(got), torch.as_tensor(ref)
            tutor_lab.check(LAB, f"p{p}_rank{rank}", size, got, ref, args.seed, atol=ATOL * p, rtol=RTOL)
            # a write past a buffer, seen by the rank's own guard zones: zero of them may change
            tutor_lab.check(LAB, f"p{p}_rank{rank}_guards", size, torch.tensor([float(len(written))]),
                            torch.zeros(1), args.seed)
    if args.bench:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if gpus < 2:
            tutor_lab.emit({"event": "note", "lab": LAB, "message": f"{gpus} GPU(s): the NCCL timing needs two "
                            "or more, skipped; the checks above ran on CPU ranks (gloo)"})
        else:
            ceiling = peer_copy_ceiling()
            rows, why = spawn(gpus, dict(sizes=[1001], seed=args.seed, backend="nccl", bench=True))
            if why:
                print(f"{LAB}: NCCL run on {gpus} GPUs: {why}", file=sys.stderr, flush=True)
            for row in rows or [("check", gpus, 0, 0, torch.zeros(1), torch.ones(1), [])]:
                if row[0] == "check":
                    _, p, n, rank, got, ref, written = row
                    got, ref = torch.as_tensor(got), torch.as_tensor(ref)
                    tutor_lab.check(LAB, f"nccl_p{p}_rank{rank}", f"n={n} floats, p={p}", got, ref, args.seed,
                                    atol=ATOL * p, rtol=RTOL)
                elif row[3] == 0:  # rank 0's clock; the ranks start each size together
                    _, name, k, _, ms = row
                    nbytes = 1 << k
                    busbw = tutor_lab.gbps(nbytes, ms) * 2 * (gpus - 1) / gpus
                    tutor_lab.measure(LAB, f"g{gpus}_{name}_2e{k}", "busbw", busbw, "GB/s", ceiling,
                                      nbytes=nbytes, ms=ms)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
