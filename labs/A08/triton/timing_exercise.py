"""A08 timing in Triton, exercise: the kernel, the right way's timer and the graph of launches.
The worked solution is timing.py.

One memory-bound kernel, y = a * x, timed three wrong ways and the right way,
beside triton.testing.do_bench; then the cost of a launch, eager against a CUDA graph of launches.
Every time is printed in microseconds; each trap's error is its time over the right way's.

    python labs/A08/triton/timing.py            check the kernel on odd sizes
    python labs/A08/triton/timing.py --bench    time every variant, with the copy ceiling

With --bench the Triton cache goes to a fresh folder, so that the first call compiles, as it does on a
machine that has never run this kernel.
"""

import os
import pathlib
import statistics
import sys
import tempfile
import time

if "--bench" in sys.argv:  # before triton is imported: its cache folder is read from here
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="a08-triton-cache-")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.testing  # noqa: E402

import tutor_lab  # noqa: E402

BLOCK = 1024


@triton.jit
def scale_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    # y = a * x: 4 bytes read and 4 written per element, no reuse.
    # TODO 1: each program owns BLOCK consecutive elements, starting at its index times BLOCK; the grid is
    #         rounded up, so no lane may read or write at or past n.
    pass


@triton.jit
def scale_first_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    # The same kernel under another name: the bench calls it once, as the first call, so it compiles then.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def bump_kernel(y_ptr):
    # As close to an empty kernel as can be checked: one program adds 1 to one float.
    tl.store(y_ptr, tl.load(y_ptr) + 1.0)


def scale(x: torch.Tensor, y: torch.Tensor, kernel=scale_kernel) -> None:
    n = x.numel()
    kernel[(triton.cdiv(n, BLOCK),)](x, y, 2.0, n, BLOCK=BLOCK)


def verify(n: int, seed: int) -> None:
    x = tutor_lab.rand(n, name="x")
    y = tutor_lab.output(n, name="y")
    scale(x, y)
    tutor_lab.check("timing", "scale", str(n), y, 2.0 * x, seed)


def verify_graph(n: int, seed: int) -> None:
    """n launches of bump, eager and (on a GPU) captured in a CUDA graph, each from 0: both leave n."""
    y = tutor_lab.output(1, name="y")
    want = torch.full((1,), float(n))
    y.zero_()
    for _ in range(n):
        bump_kernel[(1,)](y)
    tutor_lab.check("timing", "eager_bumps", str(n), y, want, seed)
    if tutor_lab.DEVICE == "cuda":
        graph = bump_graph(y, n)
        y.zero_()
        graph.replay()
        tutor_lab.sync()
        tutor_lab.check("timing", "graph_bumps", str(n), y, want, seed)


def bump_graph(y: torch.Tensor, n: int) -> "torch.cuda.CUDAGraph":
    bump_kernel[(1,)](y)  # compiled before the capture: a graph cannot record a compilation
    tutor_lab.sync()
    graph = torch.cuda.CUDAGraph()
    # TODO 3: record n launches of bump_kernel on y into `graph`, without running them now.
    return graph


# ---------------------------------------------------------------- timers (GPU only)
def stats(t: list[float]) -> tuple[float, float, float]:
    """median, 10th and 90th percentile, by the same rank rule as the CUDA lab."""
    t = sorted(t)
    at = lambda q: t[int(q * (len(t) - 1) + 0.5)]  # noqa: E731
    return at(0.5), at(0.1), at(0.9)


def host_no_sync(fn, reps: int) -> float:
    """Trap 1: the host clock around the launch call alone (microseconds, median)."""
    t = []
    for _ in range(reps):
        tutor_lab.sync()
        a = time.perf_counter()
        fn()
        t.append((time.perf_counter() - a) * 1e6)
    tutor_lab.sync()
    return statistics.median(t)


def event_times(fn, before, warmup: int, reps: int) -> tuple[float, float, float]:
    """Events around each run of fn, before() enqueued ahead of each run, untimed; waited for once."""
    for _ in range(warmup):
        before()
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for r in range(reps):
        # TODO 2: run before(), then time one run of fn between this repetition's two events. Nothing but
        #         the kernel may sit between the two events, and nothing may wait for the GPU here.
        pass
    tutor_lab.sync()
    return stats([1e3 * a.elapsed_time(b) for a, b in zip(start, stop)])


def l2_bytes() -> int:
    """The L2 size the runtime reports; where this PyTorch does not say, the 128 MiB half of the buffer
    do_bench clears, so that the flush is as large as do_bench's."""
    size = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None)
    return int(size) if size else 128 * 2**20


def bench(small: int, large: int) -> None:
    copy = tutor_lab.copy_ceiling()

    def floor(nbytes: float) -> dict:
        return {"name": "DRAM floor: these bytes at the device-to-device rate of this run",
                "value": nbytes / (copy["value"] * 1e3), "unit": "us"}

    def record(variant: str, us: float, ceiling: dict, nbytes: float | None = None) -> None:
        tutor_lab.measure("timing", variant, "time", us, "us", ceiling, nbytes, us / 1e3)

    l2 = l2_bytes()
    tutor_lab.measure("timing", "device_l2", "l2_size", l2 / 2**20, "MiB", copy)
    flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")  # twice the L2

    def flush() -> None:
        flush_buf.zero_()

    def wait() -> None:
        torch.cuda._sleep(100_000)  # one thread spins ~50 us: the stream stays busy, the L2 untouched

    def warm_clocks(ms: float = 100.0) -> None:
        """Keeps the GPU busy writing the flush buffer for `ms` milliseconds, so that its clocks have risen
        from idle before anything is timed. No kernel under test runs in it."""
        t0 = time.perf_counter()
        while (time.perf_counter() - t0) * 1e3 < ms:
            for _ in range(16):
                flush()
            tutor_lab.sync()

    x = torch.zeros(large, device="cuda")
    y = torch.empty_like(x)

    # Trap 2 first: the first call of a kernel nothing has called yet, host clock, synchronized.
    xs, ys = tutor_lab.rand(small, name="x"), tutor_lab.output(small, name="y")
    flush()
    tutor_lab.sync()
    a = time.perf_counter()
    scale(xs, ys, scale_first_kernel)
    tutor_lab.sync()
    record("small_cold_first_call", (time.perf_counter() - a) * 1e6, floor(8 * small), 8 * small)
    tutor_lab.check("timing", "scale_first", str(small), ys, 2.0 * xs, 0)

    for n in (small, large):
        xv, yv = x[:n], y[:n]
        fl, nbytes, tag = floor(8 * n), 8 * n, "small" if n == small else "large"

        def run():
            scale(xv, yv)

        if n == small:
            record("small_host_no_sync", host_no_sync(run, 50), fl, nbytes)
        # Every timer from here on starts with the clocks risen (warm_clocks), as a long program's would be.
        warm_clocks()
        record(f"{tag}_kit", 1e3 * tutor_lab.median_ms(run), fl, nbytes)
        if n == small:
            warm_clocks()
            record("small_warm_l2", event_times(run, wait, 3, 100)[0], fl, nbytes)
        warm_clocks()
        med, p10, p90 = event_times(run, flush, 3, 100 if n == small else 30)
        record(f"{tag}_right", med, fl, nbytes)
        if n == small:
            record("spread_p10", p10, fl, nbytes)
            record("spread_p90", p90, fl, nbytes)
            record("small_do_bench", 1e3 * triton.testing.do_bench(run), fl, nbytes)
            record("small_do_bench_median", 1e3 * triton.testing.do_bench(run, return_mode="median"), fl, nbytes)

    # Trap 4: the right way's timer after the GPU has idled for a second, with three warm-up runs only:
    # the clocks may not have risen by the time the repeats are timed.
    time.sleep(1.0)
    xs_, ys_ = x[:small], y[:small]
    record("small_after_idle", event_times(lambda: scale(xs_, ys_), flush, 3, 100)[0], floor(8 * small), 8 * small)

    # The cost of a launch, per launch: the kit's timer on one bump, the host's enqueue of N bumps,
    # N eager bumps between two events, one CUDA graph of N bumps between two events.
    N = 1000
    one = torch.zeros(1, device="cuda")
    record("launch_event_single", 1e3 * tutor_lab.median_ms(lambda: bump_kernel[(1,)](one)), copy)
    graph = bump_graph(one, N)
    graph.replay()  # the first replay uploads the graph
    host, eager, graphed = [], [], []
    for _ in range(7):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        tutor_lab.sync()
        a = time.perf_counter()
        s.record()
        for _ in range(N):
            bump_kernel[(1,)](one)
        e.record()
        host.append((time.perf_counter() - a) * 1e6 / N)
        e.synchronize()
        eager.append(1e3 * s.elapsed_time(e) / N)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        graphed.append(1e3 * s.elapsed_time(e) / N)
    record("launch_host", statistics.median(host), copy)
    record("launch_eager", statistics.median(eager), copy)
    record("launch_graph", statistics.median(graphed), copy)


def main() -> int:
    def extra(p):
        p.add_argument("--small", type=int, default=1 << 21)
        p.add_argument("--large", type=int, default=1 << 26)

    args = tutor_lab.parse_args(extra=extra)
    sizes = [1, 255, 257, 4097, 1000003]
    if args.quick:
        sizes = [1, 257, 4097]
    for n in sizes:
        verify(n, args.seed)
    verify_graph(10 if args.quick else 100, args.seed)
    if args.bench:
        bench(args.small, args.large)
    return tutor_lab.finish("timing")


if __name__ == "__main__":
    sys.exit(main())
