"""Latency hiding, bytes in flight and Little's law (module A03).

A streaming kernel keeps a memory system busy only if enough bytes are on their way at every moment.
Little's law [@little-1961] for a queue says that the mean number of items in it equals their arrival rate
times the mean time each spends inside: for memory, bytes in flight = bandwidth x latency. So a unit (an SM
or a CU) that keeps ``B`` bytes of loads in flight, with a latency ``L`` per load, sustains at most
``B / L`` bytes per second of reads, and ``U`` units sustain ``U B / L``, up to the memory's own limit:

$$ \\text{read rate} = \\min\\Big(\\frac{U\\,B}{L},\\ \\text{peak}\\Big), \\qquad
   B = \\text{warps} \\times \\text{lanes} \\times \\text{bytes per load} \\times \\text{loads in flight per lane}. $$

A copy reads one byte for every byte it writes, and the writes need no waiting (nothing depends on them),
so its read+write rate is twice the read rate. The same arithmetic gives the shared-memory request that
pins a kernel's resident blocks (``smem_request``, the one the A03 lab uses), a toy issue timeline of
warps hiding a latency (``timeline``, drawn in the module's first figure) and the number of passes a warp
or wavefront needs for a branch on the parity of ``thread // group`` (``split_passes``).
"""

from __future__ import annotations

from dataclasses import dataclass


def bytes_in_flight(warps: int, lanes: int, bytes_per_load: int, loads: int) -> int:
    """Bytes of loads one unit has on their way when each of its `warps` x `lanes` threads has `loads`
    loads of `bytes_per_load` bytes outstanding."""
    return warps * lanes * bytes_per_load * loads


def needed_in_flight(read_rate: float, latency: float, units: int) -> float:
    """Little's law: bytes each of `units` units must keep in flight to sustain `read_rate` bytes/s of
    reads when every load takes `latency` seconds."""
    return read_rate * latency / units


def copy_rate(in_flight: float, latency: float, units: int, ceiling: float) -> float:
    """Read+write bytes/s of a copy whose units each keep `in_flight` bytes of loads on their way: twice
    the read rate U B / L, never above the copy `ceiling` (bytes/s, read+write)."""
    return min(2.0 * units * in_flight / latency, ceiling)


def smem_request(smem_per_unit: int, reserved: int, blocks: int, threads_per_block: int,
                 threads_per_unit: int, unit: int = 128) -> int:
    """The dynamic shared memory (LDS) request that leaves exactly `blocks` blocks on a unit: request +
    reserved aimed at smem_per_unit / (blocks + 1/2), the middle of (smem/(b+1), smem/b], rounded down to
    `unit` bytes. A unit whose thread slots `blocks` already fill needs no request."""
    if blocks * threads_per_block >= threads_per_unit:
        return 0
    return (2 * smem_per_unit // (2 * blocks + 1) - reserved) // unit * unit


def split_passes(group: int, lanes: int) -> int:
    """Paths a warp (or wavefront) of `lanes` lanes runs for `if ((t / group) % 2)`, t the thread index of
    a block whose size is a multiple of `lanes`: 1 if every warp lies inside one group, else 2."""
    return 1 if group % lanes == 0 else 2


@dataclass(frozen=True)
class Timeline:
    """Which warp issues in each cycle (-1: none) and the fraction of cycles the memory pipe is busy."""

    issue: list[int]
    busy: float


def timeline(warps: int, latency: int, cycles: int, work: int = 1) -> Timeline:
    """A toy in-order scheduler: each warp issues `work` back-to-back loads (one a cycle), then waits
    `latency` cycles for them before it can issue again; the scheduler issues one instruction a cycle,
    from the lowest-numbered ready warp. `busy` is the share of cycles with a load issued, which tends to
    min(1, warps x work / (latency + work))."""
    ready = [0] * warps  # cycle from which each warp may issue
    left = [work] * warps  # loads left in the warp's current burst
    issue: list[int] = []
    for t in range(cycles):
        who = next((w for w in range(warps) if ready[w] <= t), -1)
        issue.append(who)
        if who < 0:
            continue
        left[who] -= 1
        if left[who] == 0:
            ready[who] = t + 1 + latency
            left[who] = work
        else:
            ready[who] = t + 1
    busy = sum(1 for w in issue if w >= 0) / cycles if cycles else 0.0
    return Timeline(issue, busy)
