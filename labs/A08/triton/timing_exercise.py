"""A08 timing in Triton, exercise: the kernel, the right way's timer and the graph of launches.
The worked solution is timing.py.

One memory-bound kernel, y = a * x, timed three wrong ways and the right way,
beside triton.testing.do_bench; then the cost of a launch, eager against a CUDA graph of launches.
Every time is printed in microseconds; each trap's error is its time over the right way's.

    python labs/A08/triton/timing.py            check the kernel on odd sizes, the timer and the graph
    python labs/A08/triton/timing.py --bench    time every variant, with the copy ceiling (GPU only)

On a CPU (the Triton interpreter) the checks run everything but the graph: a CUDA graph needs a GPU.

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


class WallEvent:
    """torch.cuda.Event's stand-in on a CPU, where a kernel runs inside its launch call: record() reads the
    host clock, so two of them bracket what the host ran between them."""

    t = float("nan")  # never recorded

    def record(self) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, end: "WallEvent") -> float:
        return (end.t - self.t) * 1e3  # milliseconds, as torch.cuda.Event's


def event():
    return torch.cuda.Event(enable_timing=True) if tutor_lab.DEVICE == "cuda" else WallEvent()


def spin(ms: float) -> None:
    """Keeps the stream busy for about `ms` milliseconds without touching memory: one GPU thread spins
    (about 2e6 cycles a millisecond at 2 GHz). On a CPU the host sleeps, since there the work runs inside
    the call."""
    if tutor_lab.DEVICE == "cuda":
        torch.cuda._sleep(int(ms * 2e6))
    else:
        time.sleep(ms / 1e3)


def verify_timer(seed: int) -> None:
    """The right way's timer on a known spin. A spin timed by event_times, with another spin enqueued ahead
    of each run, must read what one spin alone reads between two events: a start event recorded before
    before() would add the second spin. Nothing may wait inside the loop: the kit's sync() may be called
    once, after it, and on a GPU the host must have enqueued every timed run long before the first could end
    (a wait inside the loop would hold it for two spins a run)."""
    ms, reps = (2.0, 5) if tutor_lab.DEVICE == "cuda" else (10.0, 5)
    spin(20 * ms)  # busy work first, so that the clocks have risen
    alone = []
    for _ in range(3):
        a, b = event(), event()
        a.record()
        spin(ms)
        b.record()
        tutor_lab.sync()
        alone.append(1e3 * a.elapsed_time(b))
    calls, waits, sync = [], [], tutor_lab.sync

    def timed() -> None:
        calls.append(time.perf_counter())
        spin(ms)

    def counted_sync() -> None:
        waits.append(1)
        sync()

    tutor_lab.sync = counted_sync
    try:
        t = event_times(timed, lambda: spin(ms), 1, reps)
    except RuntimeError:  # on a GPU, an event never recorded: elapsed_time refuses it
        t = [float("nan")] * reps
    finally:
        tutor_lab.sync = sync
    want = statistics.median(alone)
    tutor_lab.check("timing", "timer_one_spin", "read over one spin alone",
                    torch.tensor([statistics.median(t) / want]), torch.tensor([1.0]), seed, rtol=0.25)
    tutor_lab.check("timing", "timer_no_wait", "waits inside the loop",
                    torch.tensor([float(len(waits) - 1)]), torch.tensor([0.0]), seed)
    if tutor_lab.DEVICE == "cuda":
        span_ms = (calls[-1] - calls[-reps]) * 1e3 if len(calls) >= reps else float("nan")
        tutor_lab.check("timing", "timer_queued", "host span of the timed runs over one spin",
                        torch.tensor([span_ms / want]), torch.tensor([0.0]), seed, atol=0.5)


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
    else:
        print("graph_bumps: not checked on a CPU (a CUDA graph needs a GPU): bump_graph is checked only there",
              file=sys.stderr)


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


def event_times(fn, before, warmup: int, reps: int) -> list[float]:
    """Events around each run of fn, before() enqueued ahead of each run, untimed; waited for once.
    The microseconds of each timed run, in the order they ran."""
    for _ in range(warmup):
        before()
        fn()
    start = [event() for _ in range(reps)]
    stop = [event() for _ in range(reps)]
    for r in range(reps):
        # TODO 2: run before(), then time one run of fn between this repetition's two events. Nothing but
        #         the kernel may sit between the two events, and nothing may wait for the GPU here.
        pass
    tutor_lab.sync()
    return [1e3 * a.elapsed_time(b) for a, b in zip(start, stop)]


def waited_median(fn) -> float:
    """Events around each run, each run waited for before the next start event, no flush: a timer that
    falls into the idle-gap and the warm-L2 traps at once. Three untimed runs first; 20 timed, as the course
    kit's timer did before it queued its runs behind a spin and flushed the L2 before each (microseconds)."""
    for _ in range(3):
        fn()
    tutor_lab.sync()
    t = []
    for _ in range(20):
        a, b = event(), event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        t.append(1e3 * a.elapsed_time(b))
    return stats(t)[0]


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

    def cold() -> None:
        """The right way's untimed work: the flush, then the spin, so that the host's enqueue of the next run
        is hidden behind both and the start event never waits on it."""
        flush()
        wait()

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
        record(f"{tag}_kit", 1e3 * tutor_lab.timed_ms(run), fl, nbytes)
        if n == small:
            warm_clocks()
            record("small_kit_waited", waited_median(run), fl, nbytes)  # each run waited for, no flush
            warm_clocks()
            record("small_warm_l2", stats(event_times(run, wait, 3, 100))[0], fl, nbytes)
        warm_clocks()
        med, p10, p90 = stats(event_times(run, cold, 3, 100 if n == small else 30))
        record(f"{tag}_right", med, fl, nbytes)
        if n == small:
            record("spread_p10", p10, fl, nbytes)
            record("spread_p90", p90, fl, nbytes)
            record("small_do_bench", 1e3 * triton.testing.do_bench(run), fl, nbytes)
            record("small_do_bench_median", 1e3 * triton.testing.do_bench(run, return_mode="median"), fl, nbytes)

    # Trap 4: the right way's timer after the GPU has idled for a second, with three warm-up runs only:
    # the clocks may not have risen by the time the first repeats run. A median over all the repeats would
    # hide a slow start, so the first repeat and the mean of the first 10 are recorded.
    time.sleep(1.0)
    xs_, ys_ = x[:small], y[:small]
    idle = event_times(lambda: scale(xs_, ys_), cold, 3, 100)
    record("small_after_idle", statistics.mean(idle[:10]), floor(8 * small), 8 * small)
    record("small_after_idle_first", idle[0], floor(8 * small), 8 * small)

    # The cost of a launch, per launch: the kit's timer and a timer that waits for each run on one bump, the
    # host's enqueue of N bumps, N eager bumps between two events, one CUDA graph of N bumps between two events.
    N = 1000
    one = torch.zeros(1, device="cuda")
    record("launch_event_single", 1e3 * tutor_lab.timed_ms(lambda: bump_kernel[(1,)](one)), copy)
    record("launch_event_waited", waited_median(lambda: bump_kernel[(1,)](one)), copy)
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
    if args.bench and tutor_lab.DEVICE != "cuda":
        print("--bench times a GPU and needs one; without it, run the checks alone (no --bench)", file=sys.stderr)
        return 2
    for n in sizes:
        verify(n, args.seed)
    verify_timer(args.seed)
    verify_graph(10 if args.quick else 100, args.seed)
    if args.bench:
        bench(args.small, args.large)
    return tutor_lab.finish("timing")


if __name__ == "__main__":
    sys.exit(main())
