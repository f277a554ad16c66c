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

import torch


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


def rand(*shape, lo: float = -1.0, hi: float = 1.0, dtype=torch.float32) -> torch.Tensor:
    """Uniform random values in [lo, hi) on DEVICE, drawn from the run's seed."""
    return torch.rand(*shape, device=DEVICE, dtype=dtype) * (hi - lo) + lo


def poison(t: torch.Tensor) -> torch.Tensor:
    """Fills a tensor with 0xFF bytes (NaN for floats), so an element a kernel forgot to
    write can never pass the check by luck."""
    t.view(torch.uint8).fill_(0xFF)
    return t


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def _number(x) -> float | str:
    """NaN and Inf are not JSON numbers: they are written as strings."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def check(lab: str, variant: str, size: str, got: torch.Tensor, ref: torch.Tensor, seed: int,
          atol: float = 0.0, rtol: float = 0.0) -> bool:
    """Every element: |got - ref| <= atol + rtol * |ref|; NaN and Inf never pass."""
    global _failures
    g = got.detach().to("cpu", torch.float64)
    r = ref.detach().to("cpu", torch.float64)
    record = {"event": "check", "lab": lab, "variant": variant, "size": size}
    if g.shape != r.shape:
        ok, bad, max_err = False, g.numel(), float("nan")
        record["error"] = f"shape {tuple(g.shape)} != {tuple(r.shape)}"
    else:
        err = (g - r).abs()
        good = torch.isfinite(g) & (err <= atol + rtol * r.abs())
        bad = int((~good).sum())
        ok = bad == 0
        finite = err[torch.isfinite(err)]
        max_err = float(finite.max()) if finite.numel() else 0.0
        if not ok:
            first = int((~good).flatten().nonzero()[0])
            record.update(first_bad=first, got=_number(g.flatten()[first]),
                          want=_number(r.flatten()[first]))
    record.update(ok=ok, mismatches=bad, max_abs_err=max_err, seed=seed)
    emit(record)
    if not ok:
        _failures += 1
    return ok


def median_ms(fn, warmup: int = 3, reps: int = 20) -> float:
    """Median milliseconds of `fn()` over `reps` runs after `warmup` untimed ones.
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
    emit({"event": "summary", "lab": lab, "failures": _failures})
    if _failures:
        print(f"{lab}: {_failures} check(s) FAILED", file=sys.stderr)
    return 1 if _failures else 0
