"""The small kit every Triton and PyTorch lab of the course imports.

It mirrors labs/common/cuda/tutor_lab.cuh: a lab checks each variant against a reference on
fresh random inputs (output poisoned first) and prints one JSON line per check; with --bench it
times each variant with device events and prints one JSON line per measurement, beside a ceiling
measured in the same run. The exit status is non-zero if any check failed.
Flags: --bench, --quick (smaller sizes), --seed N (replay a failed run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import weakref

import torch


def _interpret_without_gpu() -> None:
    """No GPU and no TRITON_INTERPRET: run Triton kernels through the interpreter instead of failing with
    "0 active drivers". Triton reads the variable when a kernel is defined, after this import."""
    if "TRITON_INTERPRET" not in os.environ and not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
        print("tutor_lab: no GPU here, so Triton kernels run on the CPU through the interpreter "
              "(TRITON_INTERPRET=1)", file=sys.stderr)


_interpret_without_gpu()


def pick_device() -> str:
    """cuda (which is also AMD's ROCm build of PyTorch) if there is a GPU, else cpu.

    TRITON_INTERPRET=1 runs Triton kernels on the CPU, so it forces cpu tensors."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


DEVICE = pick_device()
_failures = 0


def parse_args(argv=None, extra=None) -> argparse.Namespace:
    """--bench, --quick, --seed; `extra(parser)` may add a lab's own options."""
    p = argparse.ArgumentParser()
    p.add_argument("--bench", action="store_true", help="time every variant")
    p.add_argument("--quick", action="store_true", help="smaller sizes")
    p.add_argument("--seed", type=int, default=None, help="replay a run with this seed")
    if extra is not None:
        extra(p)
    args = p.parse_args(argv)
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(8), "little") % 1_000_000_007
    torch.manual_seed(args.seed)  # seeds the CPU and every GPU generator
    return args


def poison(t: torch.Tensor) -> torch.Tensor:
    """Fills a tensor with 0xFF bytes (NaN for floats), so an element a kernel forgot to
    write can never pass the check by luck."""
    t.view(torch.uint8).fill_(0xFF)
    return t


# ---------------------------------------------------------------- guard zones
# Every buffer the kit hands out (rand, output, guarded) is a view into a larger allocation: GUARD
# bytes before and after it are filled with a pattern of their own. A kernel that writes past an
# output changes a guard, and check() names the buffer, the side and the index. A kernel that reads
# past an input reads the pattern, which is a NaN for 32-bit floats, so the value shows up wrong.
GUARD_PATTERN = bytes.fromhex("ED5EC07F")  # little-endian 0x7FC05EED: a quiet NaN with its own payload
POISON_BYTE = 0xFF  # an output's own elements start as 0xFF bytes: "never written"
_guards: list["_Guard"] = []


class _Guard:
    def __init__(self, base: torch.Tensor, before: int, numel: int, name: str):
        self.base, self.before, self.numel, self.name = base, before, numel, name
        self.view = lambda: None  # set to a weak reference to the lab's view once it exists

    def zones(self) -> tuple[torch.Tensor, torch.Tensor]:
        raw = self.base.view(torch.uint8)
        item = self.base.element_size()
        return raw[: self.before * item], raw[(self.before + self.numel) * item:]

    def arm(self) -> None:
        for zone in self.zones():
            zone.copy_(_pattern(zone.numel(), zone.device))

    def written(self) -> list[str]:
        """Plain-words reports of guard elements the kernel changed, then re-arms the guards."""
        item = self.base.element_size()
        reports = []
        for side, zone in zip(("before the start", "past the end"), self.zones()):
            want = _pattern(zone.numel(), zone.device)
            changed = (zone != want).view(-1, item).any(dim=1).nonzero().flatten().cpu()
            if changed.numel() == 0:
                continue
            if side == "before the start":
                idx = changed - self.before
                first, last = int(idx[0]), int(idx[-1])
            else:
                idx = changed + self.numel
                first, last = int(idx[0]), int(idx[-1])
            k = changed.numel()
            where = f"index {first}" if k == 1 else f"indices {first}..{last}"
            reports.append(f"wrote {k} element{'s' * (k != 1)} {side} of {self.name} "
                           f"({where}; {self.name} has {_count(self.numel)})")
        if reports:
            self.arm()
        return reports


def _count(numel: int) -> str:
    return "1 element, index 0" if numel == 1 else f"{numel} elements, 0..{numel - 1}"


def _pattern(nbytes: int, device) -> torch.Tensor:
    reps = -(-nbytes // len(GUARD_PATTERN))
    return torch.frombuffer(bytearray(GUARD_PATTERN * reps)[:nbytes], dtype=torch.uint8).to(device)


def _guard_elements(numel: int) -> int:
    # Wide enough for a whole stray block or tile past the end, small enough for GPU-sized inputs.
    return min(max(numel, 4096), 1 << 20)


def guarded_empty(*shape, dtype=torch.float32, name: str = "output", fill: int | None = None,
                  device=None) -> torch.Tensor:
    """An uninitialised tensor of `shape` with guard zones before and after it."""
    numel = math.prod(shape)
    pad = _guard_elements(numel)
    base = torch.empty(pad + numel + pad, dtype=dtype, device=device or DEVICE)
    guard = _Guard(base, pad, numel, name)
    guard.arm()
    view = base[pad: pad + numel].view(*shape)
    guard.view = weakref.ref(view)
    if fill is not None:
        view.view(torch.uint8).fill_(fill)
    _guards.append(guard)
    return view


def output(*shape, dtype=torch.float32, name: str = "output", device=None) -> torch.Tensor:
    """An output buffer: poisoned (every element 0xFF bytes, NaN for floats) inside guard zones."""
    return guarded_empty(*shape, dtype=dtype, name=name, fill=POISON_BYTE, device=device)


def output_like(t: torch.Tensor, name: str = "output", dtype=None) -> torch.Tensor:
    return output(*t.shape, dtype=dtype or t.dtype, name=name, device=t.device)


def guarded(t: torch.Tensor, name: str = "input") -> torch.Tensor:
    """A copy of `t` on DEVICE inside guard zones, so a read past either end returns the pattern."""
    view = guarded_empty(*t.shape, dtype=t.dtype, name=name)
    view.copy_(t)
    return view


def rand(*shape, lo: float = -1.0, hi: float = 1.0, dtype=torch.float32, name: str = "input") -> torch.Tensor:
    """Uniform random values in [lo, hi) on DEVICE, drawn from the run's seed, inside guard zones."""
    return guarded(torch.rand(*shape, device=DEVICE, dtype=dtype) * (hi - lo) + lo, name=name)


def guards_written() -> list[str]:
    """Every guard any kernel changed since the last call, in plain words (and re-armed)."""
    alive = []
    reports = []
    for g in _guards:
        if g.view() is not None:  # the lab still holds the buffer
            reports += g.written()
            alive.append(g)
    _guards[:] = alive
    return reports


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def _number(x) -> float | str:
    """NaN and Inf are not JSON numbers: they are written as strings."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _classify(got: torch.Tensor, bad: torch.Tensor) -> dict:
    """Counts the wrong elements by what they hold: the poison (never written), the guard pattern
    (copied from outside an input), another NaN or Inf, or a finite wrong value."""
    item = got.element_size()
    raw = got.detach().contiguous().view(torch.uint8).view(-1, item).cpu()
    flat_bad = bad.flatten()
    poison = (raw == POISON_BYTE).all(dim=1) & flat_bad
    # An element copied from a guard holds the pattern's bytes at some aligned offset into it.
    period = GUARD_PATTERN * max(1, item // len(GUARD_PATTERN))
    words = {period[k:k + item] for k in range(0, len(period), item)}
    from_guard = torch.zeros_like(flat_bad)
    for word in words:
        from_guard |= (raw == torch.frombuffer(bytearray(word), dtype=torch.uint8)).all(dim=1)
    from_guard &= flat_bad & ~poison
    g = got.detach().to("cpu", torch.float64).flatten()
    nonfinite = ~torch.isfinite(g) & flat_bad & ~poison & ~from_guard
    return {"never_written": int(poison.sum()), "from_guard": int(from_guard.sum()),
            "nan_or_inf": int(nonfinite.sum()),
            "wrong_value": int(flat_bad.sum()) - int(poison.sum()) - int(from_guard.sum()) - int(nonfinite.sum())}


def _hint(counts: dict) -> str:
    for cause in ("never_written", "from_guard", "nan_or_inf", "wrong_value"):
        if counts.get(cause):
            return cause
    return "wrong_value"


def _position(flat: int, shape: tuple) -> int | list[int]:
    """A flat index as [row, column, ...] for outputs of more than one dimension."""
    if len(shape) <= 1:
        return flat
    pos = []
    for dim in reversed(shape):
        pos.append(flat % dim)
        flat //= dim
    return pos[::-1]


def replay_command(seed: int) -> str:
    script = os.path.relpath(sys.argv[0]) if sys.argv and sys.argv[0] else "the lab"
    prefix = "TRITON_INTERPRET=1 " if os.environ.get("TRITON_INTERPRET") == "1" else ""
    quick = " --quick" if "--quick" in sys.argv[1:] else ""  # the same sizes as the failed run
    return f"{prefix}python {script}{quick} --seed {seed}"


def check(lab: str, variant: str, size: str, got: torch.Tensor, ref: torch.Tensor, seed: int,
          atol: float = 0.0, rtol: float = 0.0) -> bool:
    """Every element: |got - ref| <= atol + rtol * |ref|; NaN and Inf never pass. Fails too if any
    kernel since the last check loaded or stored outside its tensors or wrote into a guard zone."""
    global _failures
    g = got.detach().to("cpu", torch.float64)
    r = ref.detach().to("cpu", torch.float64)
    record = {"event": "check", "lab": lab, "variant": variant, "size": size}
    stray, written, ran = out_of_bounds(), guards_written(), launches()
    if g.shape != r.shape:
        ok, bad_count, cause = False, g.numel(), "shape"
        record["error"] = f"shape {tuple(g.shape)} != {tuple(r.shape)}"
    else:
        err = (g - r).abs()
        bad = ~(torch.isfinite(g) & (err <= atol + rtol * r.abs()))
        bad_count = int(bad.sum())
        finite = err[torch.isfinite(err)]
        record["max_abs_err"] = float(finite.max()) if finite.numel() else None  # over the finite elements
        record["nan"] = int(torch.isnan(g).sum())
        cause = None
        if bad_count:
            counts = _classify(got, bad)
            record.update(counts)
            cause = _hint(counts)
            first = int(bad.flatten().nonzero()[0])
            record.update(shape=list(g.shape), first_bad=_position(first, tuple(g.shape)),
                          got=_number(g.flatten()[first]), want=_number(r.flatten()[first]))
    if written:
        record["guard_written"] = written
        cause = "guard_written"
    if stray:
        record["out_of_bounds"] = stray
        cause = "out_of_bounds"
    ok = bad_count == 0 and not written and not stray
    record.update(ok=ok, mismatches=bad_count, numel=g.numel(), seed=seed)
    if not ok:
        record.update(cause=cause, replay=replay_command(seed))
        if ran:
            record["launches"] = ran
        _failures += 1
    emit(record)
    return ok


_flush_buffer = None


def flush_l2() -> None:
    """Overwrites the whole L2 (a zeroed buffer twice its size), so that the next kernel finds none of
    its own data there."""
    global _flush_buffer
    if DEVICE != "cuda":
        return
    if _flush_buffer is None:
        l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0)
        _flush_buffer = torch.empty(2 * (l2 or 128 << 20), dtype=torch.uint8, device="cuda")
    _flush_buffer.zero_()


def hold_gpu(ms: float) -> None:
    """One GPU thread spins for about `ms` milliseconds (at clocks up to 2 GHz; longer at lower clocks):
    the stream stays busy, the caches untouched."""
    torch.cuda._sleep(int(ms * 2e6))


def times_ms(fn, warmup: int = 3, reps: int = 20, flush: bool = True, queue_ahead: bool = True) -> list[float]:
    """Milliseconds of each of `reps` runs of `fn()` after `warmup` untimed ones, sorted.

    On a GPU each run sits between two device events of its own, and all runs are enqueued before one
    wait. `flush`: the L2 is overwritten before every run, outside its window, so each run starts cold as
    the first touch of data in a program does (off where the warm cache is the point). `queue_ahead`: a
    spinning kernel holds the stream while the host enqueues every run, so no window holds the host's
    launch time (off where that time is what is measured, as in eager steps). On a CPU: the wall clock."""
    if DEVICE != "cuda":
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return sorted(times)
    host_ms = 1e9  # the host's quickest enqueue of one run, from the warm-up (the first may compile)
    for _ in range(warmup):
        if flush:
            flush_l2()
        t0 = time.perf_counter()
        fn()
        host_ms = min(host_ms, (time.perf_counter() - t0) * 1e3)
    sync()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    if queue_ahead:  # twice the host's estimated enqueue time of every run (events and flush included), capped
        hold_gpu(min(100.0, 0.5 + 2.0 * reps * (min(host_ms, 5.0) + 0.03)))
    for i in range(reps):
        if flush:
            flush_l2()
        start[i].record()
        fn()
        stop[i].record()
    sync()
    return sorted(a.elapsed_time(b) for a, b in zip(start, stop))


def timed_ms(fn, warmup: int = 3, reps: int = 20, flush: bool = True, queue_ahead: bool = True) -> float:
    """The median milliseconds of `fn()` (see times_ms): the kit's timer."""
    return statistics.median(times_ms(fn, warmup, reps, flush, queue_ahead))


def median_ms(fn, warmup: int = 3, reps: int = 20) -> float:
    """The kit's first timer, kept unchanged for the labs measured with it (new labs use timed_ms):
    median milliseconds of `fn()` over `reps` runs after `warmup` untimed ones, each waited for, no flush.
    On a GPU each run sits between two device events; on a CPU the wall clock is used."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        if DEVICE == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def gbps(nbytes: float, ms: float) -> float:
    """GB/s for `nbytes` moved in `ms` milliseconds (1 GB = 1e9 bytes)."""
    return nbytes / (ms * 1e6)


def copy_ceiling(nbytes: int = 1 << 30) -> dict:
    """The bandwidth ceiling: a device-to-device copy of `nbytes`, counted as read + written."""
    src = torch.zeros(nbytes, dtype=torch.uint8, device=DEVICE)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    return {"name": "device-to-device copy", "value": gbps(2 * nbytes, ms), "unit": "GB/s"}


def measure(lab: str, variant: str, metric: str, value: float, unit: str, ceiling: dict,
            nbytes: float | None = None, ms: float | None = None) -> None:
    record = {"event": "measure", "lab": lab, "variant": variant, "metric": metric,
              "value": value, "unit": unit, "ceiling": ceiling}
    if nbytes is not None:
        record["bytes"] = nbytes
    if ms is not None:
        record["ms"] = ms
    emit(record)


def finish(lab: str) -> int:
    """The exit status: 1 if any check failed. Use as `sys.exit(finish("lab"))`."""
    global _failures
    leftover = out_of_bounds() + guards_written()
    if leftover:  # a stray access after the last check still fails the run
        emit({"event": "check", "lab": lab, "variant": "after the last check", "size": "", "ok": False,
              "out_of_bounds": leftover, "cause": "out_of_bounds"})
        _failures += 1
    emit({"event": "summary", "lab": lab, "failures": _failures})
    if _failures:
        print(f"{lab}: {_failures} check(s) FAILED", file=sys.stderr)
    return 1 if _failures else 0


# ---------------------------------------------------------------- bounds under the interpreter
# Under TRITON_INTERPRET=1 a kernel's loads and stores become reads and writes of this process's own
# memory, so a missing mask corrupts the heap or kills the process instead of faulting like a GPU.
# When the kit is imported there, every load and store is checked against the tensors passed to
# that launch: a lane outside all of them is switched off (no crash) and reported at the next check,
# with the kernel's line.
_launch: dict = {"kernel": "", "file": "", "ranges": []}
_violations: dict[tuple, dict] = {}
_launches: list[str] = []  # "kernel: grid (x, y, z) = N programs" since the last check


def _span(t: torch.Tensor) -> tuple[int, int]:
    if t.numel() == 0:
        return t.data_ptr(), t.data_ptr()
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()


def _note_launch(executor, args_hst, kwargs_hst) -> None:
    names = list(executor.arg_names)
    pairs = list(zip(names, args_hst)) + list(kwargs_hst.items())
    ranges = []
    for name, arg in pairs:
        t = getattr(arg, "base", arg)  # a TensorWrapper (reinterpreted dtype) keeps its tensor in .base
        if isinstance(t, torch.Tensor):
            lo, hi = _span(t)
            ranges.append((lo, hi, name, t.element_size(), tuple(t.shape)))
    _launch.update(kernel=executor.fn.__name__, file=executor.fn.__code__.co_filename, ranges=ranges)
    grid = executor.grid
    if callable(grid):
        try:
            import inspect
            grid = grid(inspect.getcallargs(executor.fn, *args_hst, **kwargs_hst))
        except Exception:  # a grid function the learner wrote may fail here too; the launch will say why
            return
    grid = tuple(int(g) for g in grid)
    _launches.append(f"{executor.fn.__name__}: grid {grid} = {math.prod(grid)} program"
                     f"{'s' * (math.prod(grid) != 1)}")


def _kernel_line() -> str:
    """`path:line: source` of the deepest frame in the kernel's own file: the learner's load or store."""
    import traceback
    for frame in reversed(traceback.extract_stack()):
        if frame.filename == _launch["file"]:
            path = os.path.relpath(frame.filename)
            return f"{path}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""


def _bounded(op: str, addrs, mask):
    """The mask with every lane outside the launch's tensors switched off; records those lanes."""
    import numpy as np
    ranges = _launch["ranges"]
    if not ranges:
        return mask
    addrs = np.asarray(addrs, dtype=np.uint64)
    active = np.broadcast_to(np.asarray(mask, dtype=bool), addrs.shape)
    inside = np.zeros(addrs.shape, dtype=bool)
    for lo, hi, *_ in ranges:
        inside |= (addrs >= lo) & (addrs < hi)
    stray = active & ~inside
    if not stray.any():
        return mask
    bad = addrs[stray].astype(np.int64)
    # Name each stray lane by the tensor argument nearest to it.
    dist = np.stack([np.where(bad < lo, lo - bad, bad - (hi - 1)) for lo, hi, *_ in ranges])
    nearest = dist.argmin(axis=0)
    line = _kernel_line()
    for k, (lo, hi, name, item, shape) in enumerate(ranges):
        mine = bad[nearest == k]
        if mine.size == 0:
            continue
        idx = (mine - lo) // item
        numel = (hi - lo) // item
        side = "before the start of" if idx.max() < 0 else "past the end of" if idx.min() >= numel else "outside"
        key = (_launch["kernel"], op, name, side, line)
        v = _violations.setdefault(key, {"count": 0, "first": int(idx.min()), "last": int(idx.max()),
                                         "numel": numel, "shape": shape})
        v["count"] += int(mine.size)
        v["first"], v["last"] = min(v["first"], int(idx.min())), max(v["last"], int(idx.max()))
    return active & inside


def launches() -> list[str]:
    """The interpreted launches since the last call, with their grids (the last 8)."""
    seen = _launches[-8:]
    _launches.clear()
    return seen


def out_of_bounds() -> list[str]:
    """Plain-words reports of the stray loads and stores seen since the last call."""
    reports = []
    for (kernel, op, name, side, line), v in _violations.items():
        verb = "loaded" if op == "load" else "stored"
        k = v["count"]
        where = f"index {v['first']}" if v["first"] == v["last"] else f"indices {v['first']}..{v['last']}"
        reports.append(f"{kernel} {verb} {k} lane{'s' * (k != 1)} {side} {name} ({where}; {name} has "
                       f"{_count(v['numel'])})" + (f"\n    at {line}" if line else ""))
    _violations.clear()
    return reports


def _install_bounds_check() -> bool:
    """Wraps the interpreter's memory operations; False if this Triton's interpreter differs."""
    try:
        from triton.runtime import interpreter as ti
        builder, executor = ti.InterpreterBuilder, ti.GridExecutor
        load, store, init_args = builder.create_masked_load, builder.create_masked_store, executor._init_args_hst
    except (ImportError, AttributeError):
        return False
    if getattr(builder, "_tutor_bounds", False):
        return True

    def masked_load(self, ptrs, mask, other, *rest):
        mask = ti.TensorHandle(_bounded("load", ptrs.data, mask.data), mask.dtype)
        return load(self, ptrs, mask, other, *rest)

    def masked_store(self, ptrs, value, mask, *rest):
        mask = ti.TensorHandle(_bounded("store", ptrs.data, mask.data), mask.dtype)
        return store(self, ptrs, value, mask, *rest)

    def init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        _note_launch(self, args_hst, kwargs_hst)
        return args_hst, kwargs_hst

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    executor._init_args_hst = init_args_hst
    builder._tutor_bounds = True
    return True


BOUNDS_CHECKED = os.environ.get("TRITON_INTERPRET") == "1" and _install_bounds_check()
