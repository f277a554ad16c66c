"""A01 timeline in Triton, exercise: write the kernel and time it honestly (solution: timeline.py).

A beginner's vector add: start the GPU runtime, allocate, copy in from ordinary (pageable)
host memory, run the kernel, copy back, free. Each phase is timed with the host's wall clock;
the kernel is also timed alone with device events. Compare the kernel with the total.
The first launch of a Triton kernel also compiles it (or loads it from Triton's cache):
that time belongs to the program, and it lands in the kernel phase.

    python labs/A01/triton/timeline_exercise.py [--n 1048576]   prints the phases, checks the result, then
        checks the kernel again at sizes that are not a multiple of BLOCK (outside the timeline)
    python labs/A01/triton/timeline_exercise.py --bench          one measure line per phase
"""

import pathlib
import os
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402
from tutor_lab import DEVICE, sync  # noqa: E402


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    # TODO 1: the kernel of vector_add: each program adds its own BLOCK elements, and no lane reads or
    #         writes at or past n. Until then the check fails.
    pass


BLOCK = 1024


def add(a, b, c):
    add_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, c, a.numel(), BLOCK=BLOCK)


def verify(n: int, seed: int) -> None:
    """The kernel alone, once, on fresh random inputs with a poisoned output inside guard zones,
    compared with the same sum computed by PyTorch on the same device (bit-identical for an fp32 add):
    the checks of Lab 1, run after the timeline, outside its clock."""
    a, b = tutor_lab.rand(n), tutor_lab.rand(n)
    c = tutor_lab.output_like(a, name="c")
    add(a, b, c)
    tutor_lab.check("timeline", "kernel", str(n), c, a + b, seed)


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def main() -> int:
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument("--n", type=int, default=None))
    n = args.n or (4099 if args.quick else 1 << 20)

    # Host inputs, prepared before the clock starts: a CPU-only program would need them too.
    gen = torch.Generator().manual_seed(args.seed)
    a = torch.rand(n, generator=gen) * 2 - 1
    b = torch.rand(n, generator=gen) * 2 - 1

    # Every phase ends with the device idle, so each time belongs to that phase alone.
    start = time.perf_counter()
    t = time.perf_counter()
    if DEVICE == "cuda":
        torch.cuda.init()  # start the runtime: this creates the context on the device
    torch.empty(1, device=DEVICE)  # the first allocation
    sync()
    t_context = ms_since(t)

    t = time.perf_counter()
    da = torch.empty(n, device=DEVICE)
    db = torch.empty(n, device=DEVICE)
    dc = torch.empty(n, device=DEVICE)
    sync()
    t_alloc = ms_since(t)

    # The check's poison (c starts as NaN), timed on its own and left out of the phases and the total:
    # it is the first PyTorch kernel of the process, so it also pays for loading that kernel's code.
    t = time.perf_counter()
    tutor_lab.poison(dc)
    sync()
    t_poison = ms_since(t)

    t = time.perf_counter()  # pageable memory: the runtime stages it through a pinned buffer
    da.copy_(a)
    db.copy_(b)
    sync()
    t_h2d = ms_since(t)

    t = time.perf_counter()
    add(da, db, dc)
    # TODO 2: this phase must end when the kernel has finished, not when the launch call returns (a
    #         launch only queues the work). Make it end the way the other phases do.
    t_kernel = ms_since(t)

    t = time.perf_counter()
    c = dc.cpu()
    t_d2h = ms_since(t)

    t = time.perf_counter()
    del da, db, dc
    if DEVICE == "cuda":
        torch.cuda.empty_cache()  # PyTorch keeps freed blocks; this hands them back to the driver
    sync()
    t_free = ms_since(t)
    t_total = ms_since(start) - t_poison

    # The check: bit-identical to the CPU's additions.
    tutor_lab.check("timeline", "result", str(n), c, a + b, args.seed)
    # The same kernel at a tiny size and at sizes that leave the last program partial (1000 and
    # 2^20 + 7 are not multiples of BLOCK), after the timeline: none of it is on the clock.
    for m in [1, 1000] + ([] if args.quick else [(1 << 20) + 7]):
        verify(m, args.seed)

    # The kernel alone, warm, between device events: the interval also holds Triton's Python launch path,
    # which runs on the host after the start event is recorded, so it is longer than a profiler's kernel time.
    da, db, dc = a.to(DEVICE), b.to(DEVICE), torch.empty(n, device=DEVICE)
    t_events = tutor_lab.median_ms(lambda: add(da, db, dc))

    phases = {"context": t_context, "alloc": t_alloc, "h2d": t_h2d, "kernel": t_kernel,
              "kernel_events": t_events, "d2h": t_d2h, "free": t_free, "total": t_total}
    total = {"name": "program total", "value": t_total, "unit": "ms"}
    for name, ms in phases.items():
        print(f"{name:<14} {ms:10.3f} ms  {100 * ms / t_total:6.2f}% of the total", file=sys.stderr)
        if args.bench:
            tutor_lab.measure("timeline", name, "time", ms, "ms", total)
    print(f"(poisoning c took {t_poison:.3f} ms, outside the phases and the total)", file=sys.stderr)
    print("(kernel_events times the kernel again, warm: it is not a phase and not in the total)", file=sys.stderr)
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("these times come from Triton's CPU interpreter, which runs the kernel as Python on this CPU,\n"
              "far slower than a GPU: here the kernel looks like most of the program, the opposite of a\n"
              "GPU run. The module's page shows the same command measured on an NVIDIA H200.", file=sys.stderr)
    return tutor_lab.finish("timeline")


if __name__ == "__main__":
    sys.exit(main())
