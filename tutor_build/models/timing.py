"""What a timer around one GPU kernel reads: a small model of the host and device timelines (module A08).

A host thread launches a kernel and, later, waits for it. Five intervals make up what any timer sees:

* ``enqueue``: the launch call itself, on the host. It writes the launch into the stream's queue and
  returns; the kernel has not started (kernel launches are asynchronous [nvidia-cuda-guide]).
* ``latency``: from the moment the launch is enqueued on an idle GPU to the moment the kernel starts.
* ``kernel``: the kernel's own run time, with the memory traffic it really causes.
* ``wake``: from the kernel's end to the moment a synchronizing host call returns.
* ``first_call``: what only the first launch of a kernel pays: loading it (lazy loading
  [nvidia-cuda-lazy-loading]) or, in Triton, compiling it first.

The five ways of timing of the lab then read (``reading``):

$$ t_\\text{host, no sync} = t_\\text{enqueue}, \\qquad
   t_\\text{first call} = t_\\text{first} + t_\\text{enqueue} + t_\\text{latency} + t_\\text{kernel} + t_\\text{wake}, $$
$$ t_\\text{events, idle GPU} = t_\\text{enqueue} + t_\\text{kernel}, \\qquad
   t_\\text{events, queued} = t_\\text{kernel}. $$

A start event on an idle stream is passed as soon as the GPU sees it, before the host has finished
enqueueing the kernel behind it, so events around a single launch on an idle GPU include about one
enqueue; with the stream kept busy ahead of them, the kernel is already queued when the start event
passes, and the events bracket the kernel alone.

The warm-L2 trap is a statement about ``kernel``: a kernel that streams ``bytes`` through a cache of
``l2_bytes`` reads them from DRAM unless the same working set was left in the cache by the previous
repeat (``dram_bytes``). The model takes the cache as least-recently-used under a cyclic sweep: a working
set that fits is kept whole; one that does not is evicted line by line before it is read again, so
nothing of it survives. Real replacement policies keep a little more than nothing above the size.
"""

from __future__ import annotations

from dataclasses import dataclass

WAYS = ("host_no_sync", "first_call", "events_idle", "events_warm_l2", "right")


@dataclass(frozen=True)
class Timeline:
    """Microseconds of each interval (illustrative inputs, not measurements: the lab measures them)."""

    enqueue: float = 3.0
    latency: float = 5.0
    kernel: float = 8.0
    wake: float = 3.0
    first_call: float = 40.0
    kernel_warm: float = 5.0  # the same kernel when the previous repeat left its data in the L2


def reading(t: Timeline, way: str) -> float:
    """What one way of timing reads, in microseconds."""
    if way == "host_no_sync":
        return t.enqueue
    if way == "first_call":
        return t.first_call + t.enqueue + t.latency + t.kernel + t.wake
    if way == "events_idle":  # events around each launch, each waited for (the kit's median_ms): GPU idle, L2 warm
        return t.enqueue + t.kernel_warm
    if way == "events_warm_l2":  # stream kept busy, L2 warm
        return t.kernel_warm
    if way == "right":  # stream kept busy, L2 flushed
        return t.kernel
    raise ValueError(f"unknown way {way!r}; one of {', '.join(WAYS)}")


def error(t: Timeline, way: str) -> float:
    """A way's reading over the right way's: 1 is no error."""
    return reading(t, way) / reading(t, "right")


@dataclass(frozen=True)
class Segment:
    lane: str  # "host" or "device"
    start: float
    end: float
    what: str


def segments(t: Timeline) -> list[Segment]:
    """One launch followed by a synchronize, from the host's call at time 0 (the first call, or not)."""
    host_enq = Segment("host", 0.0, t.enqueue, "launch call (enqueue)")
    start = t.enqueue + t.latency
    kernel = Segment("device", start, start + t.kernel, "kernel")
    queued = Segment("device", t.enqueue, start, "launch latency")
    wait = Segment("host", t.enqueue, kernel.end + t.wake, "synchronize (waits)")
    return [host_enq, queued, kernel, wait]


def dram_bytes(bytes_moved: float, working_set: float, l2_bytes: float, warm: bool) -> float:
    """Bytes a repeat reads and writes in DRAM: all of them after a flush; none of a working set that fit
    in the L2 and was left there by the previous repeat; all of one larger than the L2 (cyclic LRU)."""
    if not warm or working_set > l2_bytes:
        return bytes_moved
    return 0.0


def flush_bytes(l2_bytes: float, factor: float = 2.0) -> float:
    """Bytes a flush writes between repeats so that none of the timed buffers survives: ``factor`` times the
    cache (the lab writes twice the L2 the runtime reports)."""
    return factor * l2_bytes
