"""A04 pointer_chase in Triton: the time of one dependent load at each working-set size.

One program follows a random cycle through a buffer of int32 slots; each hop lands on a different
128-byte line and the address of every load is the value the load before it returned, so the time
per hop is the latency of whichever level holds the set. Triton has no explicit shared memory, so
the shared-memory chase of the CUDA and HIP labs has no counterpart here.

    python labs/A04/triton/pointer_chase_exercise.py            check the cycle and the chase on small buffers
    python labs/A04/triton/pointer_chase_exercise.py --bench    ns per load from 16 KiB to 4 GiB
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

LINE = 128  # bytes from one hop's line to the next's
STRIDE = LINE // 4  # 32 int32 slots per line; a hop uses slot 0
BLOCK = 256


@triton.jit
def link_kernel(order_ptr, n, buf_ptr, BLOCK: tl.constexpr, STRIDE: tl.constexpr):
    # Slot 0 of line order[i] holds the slot index of line order[i + 1] (order[0] after the last).
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    line = tl.load(order_ptr + i, mask=mask)
    nxt = tl.load(order_ptr + (i + 1) % n, mask=mask)
    # TODO 1: slot 0 of line order[i] must hold the slot index of the line visited after it, the last line
    # leading back to the first, so that the n lines form one cycle. As shipped, the lines are linked in
    # address order: a cycle, but one a prefetcher could follow.
    tl.store(buf_ptr + i * STRIDE, ((i + 1) % n) * STRIDE, mask=mask)


@triton.jit
def chase_kernel(buf_ptr, from_ptr, hops, last_ptr):
    # One program, `hops` dependent loads: each address is the previous load's value. It starts at the slot
    # *from_ptr names and stores where it stopped, so a launch given from_ptr == last_ptr carries on.
    j = tl.load(from_ptr)
    # TODO 2: make `hops` loads, each from the slot whose index the previous load returned (the first from
    # the slot *from_ptr names), so that no load can begin before the one before it has finished.
    tl.store(last_ptr, j)


def visit_order(n: int, seed: int) -> torch.Tensor:
    """A random order of the n lines; linking each to the next makes one cycle through all of them."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randperm(n, generator=gen, dtype=torch.int64).to(torch.int32)


def build_cycle(order: torch.Tensor, buf: torch.Tensor) -> None:
    n = order.numel()
    order = tutor_lab.guarded(order.to(buf.device), name="order")
    link_kernel[(triton.cdiv(n, BLOCK),)](order, n, buf, BLOCK=BLOCK, STRIDE=STRIDE)


def chase(buf: torch.Tensor, start: torch.Tensor, hops: int, last: torch.Tensor) -> None:
    chase_kernel[(1,)](buf, start, hops, last, num_warps=1)


def expected_last(order: torch.Tensor, hops: int) -> int:
    return int(order[hops % order.numel()]) * STRIDE


def verify(n: int, seed: int) -> None:
    order = visit_order(n, seed + n)
    ref = torch.full((n * STRIDE,), -1, dtype=torch.int32)  # the poison of an int32 output is -1
    ref[order.long() * STRIDE] = torch.roll(order, -1) * STRIDE
    buf = tutor_lab.output(n * STRIDE, dtype=torch.int32, name="buf")
    build_cycle(order, buf)
    size = f"{n} lines"
    tutor_lab.check("pointer_chase", "link", size, buf, ref.to(buf.device), seed)

    # One lap of the buffer as built: the distinct lines seen before the chase is back at its start.
    got, start, seen, j = buf.cpu(), int(order[0]) * STRIDE, set(), int(order[0]) * STRIDE
    while j % STRIDE == 0 and 0 <= j // STRIDE < n and j // STRIDE not in seen:
        seen.add(j // STRIDE)
        j = int(got[j])
        if j == start:
            break
    tutor_lab.check("pointer_chase", "one_cycle", size, torch.tensor([len(seen)]), torch.tensor([n]), seed)

    first = tutor_lab.guarded(torch.tensor([start], dtype=torch.int32), name="from")
    for hops in (0, 1, n + 3, 3 * n + 2, 1000):  # distinct at every n, 1 included
        last = tutor_lab.output(1, dtype=torch.int32, name="last")
        chase(buf, first, hops, last)
        want = torch.tensor([expected_last(order, hops)], dtype=torch.int32)
        tutor_lab.check("pointer_chase", "global", f"{size}, {hops} hops", last, want.to(last.device), seed)


def size_name(nbytes: int) -> str:
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if nbytes >= 1 << shift:
            return f"{nbytes >> shift}{unit}"
    return f"{nbytes}B"


def time_chase(nbytes: int, hops: int, seed: int) -> float:
    """ns per dependent load on a cycle of `nbytes`; checks where the timed chase stopped. Every launch carries
    on where the one before it stopped, so the run visits warm + 6 x hops distinct lines before it comes round
    again: a set larger than a cache is never served from it."""
    n = nbytes // LINE
    order = visit_order(n, seed)
    buf = torch.empty(n * STRIDE, dtype=torch.int32, device=tutor_lab.DEVICE)
    build_cycle(order, buf)
    last = torch.tensor([int(order[0]) * STRIDE], dtype=torch.int32, device=tutor_lab.DEVICE)
    warm, warmup, reps = min(n, 1 << 18), 1, 5
    chase(buf, last, warm, last)  # one lap, up to 2^18 hops: a set that fits in a cache is in it
    ms = tutor_lab.timed_ms(lambda: chase(buf, last, hops, last), warmup=warmup, reps=reps,
                             flush=False)  # the set stays warm: the latency of the level it fits in
    want = torch.tensor([expected_last(order, warm + (warmup + reps) * hops)], dtype=torch.int32)
    tutor_lab.check("pointer_chase", "timed_global", size_name(nbytes), last.cpu(), want, seed)
    del buf
    # TODO 3: return the time of one load in nanoseconds: the timed launch made `hops` loads in `ms`.
    return ms


def bench(max_bytes: int, hops: int, seed: int) -> None:
    l1 = time_chase(16 << 10, hops, seed)
    ceiling = {"name": "L1 latency (16 KiB set) measured in the same run", "value": l1, "unit": "ns"}
    nbytes = 16 << 10
    while nbytes <= max_bytes:
        ns = l1 if nbytes == 16 << 10 else time_chase(nbytes, hops, seed)
        tutor_lab.measure("pointer_chase", f"ws_{size_name(nbytes)}", "latency", ns, "ns", ceiling)
        nbytes *= 2


def main() -> int:
    def extra(p):
        p.add_argument("--max-mib", type=int, default=4096)
        p.add_argument("--hops", type=int, default=1 << 17)

    args = tutor_lab.parse_args(extra=extra)
    lines = [1, 2, 3, 37, 128, 1000, 4097]
    if args.quick:
        lines = [1, 2, 37, 128]
    for n in lines:
        verify(n, args.seed)
    if args.bench:
        bench(args.max_mib << 20, args.hops, args.seed)
    return tutor_lab.finish("pointer_chase")


if __name__ == "__main__":
    sys.exit(main())
