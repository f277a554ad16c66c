"""Pipeline-parallel schedule simulator (pure Python, no dependencies).

Given S stages (devices), M micro-batches and a schedule -- ``"gpipe"``, ``"1f1b"``
(PipeDream-Flush, the non-interleaved Megatron-LM schedule) or ``"interleaved"``
(Megatron-LM's interleaved 1F1B with ``v`` model chunks per device) -- the simulator
fixes the order in which each device runs its forward (F) and backward (B) slots,
then plays that order forward in time, as soon as possible, respecting the
dependencies of the pipeline:

* F of micro-batch m on virtual stage j needs F of m on virtual stage j-1;
* B of m on virtual stage j needs B of m on virtual stage j+1 (and its own F).

Each device runs one slot at a time. A forward slot of a full stage takes ``t_f``, a
backward slot ``t_b``; with ``v`` chunks per device each chunk slot takes ``t_f / v``
and ``t_b / v`` (a chunk holds 1/v of the device's layers). ``scale`` (one factor per
device) makes the stages unequal; the closed forms below hold for equal stages only,
and with unequal ones GPipe and 1F1B no longer take the same time. Communication is
free unless ``t_comm`` is given.

What comes back (:class:`Result`): the per-stage timeline of slots, the makespan,
the bubble (idle time of a device) as a fraction of the makespan and as a ratio to
the useful compute time, and the peak number of micro-batch activations each
device holds at once. The order on a device fixes how many forwards have run
before each backward, so the in-flight count depends on the order alone, not on
the slot durations.

Units of activation memory: a device that owns L/S layers (v chunks of L/(S v)
layers) holds ``peak_in_flight`` chunk activations; in units of "one micro-batch
through one full stage" (L/S layers) that is ``peak_in_flight / v``
(:attr:`Result.peak_stage_units`).

Used by the claims test of module B07, by its ``schedule_sim`` lab and by the
pipeline-schedules concept player (through :meth:`Result.to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

SCHEDULES = ("gpipe", "1f1b", "interleaved")


@dataclass(frozen=True)
class Slot:
    """One forward or backward slot on one device."""

    stage: int  # the device (physical stage), 0 .. S-1
    kind: str  # "F" or "B"
    micro: int  # micro-batch index, 0 .. M-1
    chunk: int  # model chunk on this device, 0 .. v-1 (0 when v == 1)
    start: float
    end: float


@dataclass(frozen=True)
class Result:
    schedule: str
    stages: int
    micro_batches: int
    virtual: int
    t_f: float
    t_b: float
    timeline: tuple[tuple[Slot, ...], ...]  # one tuple of slots per device, in time order
    makespan: float
    busy: tuple[float, ...]  # compute time of each device
    peak_in_flight: tuple[int, ...]  # chunk activations alive at once, per device
    in_flight_trace: tuple[tuple[int, ...], ...] = field(repr=False, default=())

    @property
    def idle(self) -> tuple[float, ...]:
        return tuple(self.makespan - b for b in self.busy)

    @property
    def bubble_fraction(self) -> float:
        """Idle time of device 0 divided by the makespan (same on every device when the
        stages are equal)."""
        return self.idle[0] / self.makespan

    @property
    def bubble_ratio(self) -> float:
        """Idle time divided by useful compute time (Megatron-LM's 'bubble time fraction')."""
        return self.idle[0] / self.busy[0]

    @property
    def peak_stage_units(self) -> tuple[float, ...]:
        """Peak activations per device in units of one micro-batch through L/S layers."""
        return tuple(p / self.virtual for p in self.peak_in_flight)

    def activation_bytes(self, layers: int, bytes_per_layer_per_micro: float) -> tuple[float, ...]:
        """Peak activation bytes per device for a model of ``layers`` identical layers,
        each keeping ``bytes_per_layer_per_micro`` for one micro-batch."""
        per_chunk = layers / (self.stages * self.virtual) * bytes_per_layer_per_micro
        return tuple(p * per_chunk for p in self.peak_in_flight)

    def to_dict(self) -> dict:
        return {
            "schedule": self.schedule,
            "stages": self.stages,
            "micro_batches": self.micro_batches,
            "virtual": self.virtual,
            "t_f": self.t_f,
            "t_b": self.t_b,
            "makespan": self.makespan,
            "bubble_fraction": self.bubble_fraction,
            "bubble_ratio": self.bubble_ratio,
            "peak_in_flight": list(self.peak_in_flight),
            "peak_stage_units": list(self.peak_stage_units),
            "timeline": [
                [
                    {"kind": s.kind, "micro": s.micro, "chunk": s.chunk, "start": s.start, "end": s.end}
                    for s in device
                ]
                for device in self.timeline
            ],
        }


# --------------------------------------------------------------------------- orders


def _check(schedule: str, stages: int, micro_batches: int, virtual: int) -> None:
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, not {schedule!r}")
    if stages < 1 or micro_batches < 1 or virtual < 1:
        raise ValueError("stages, micro_batches and virtual must be >= 1")
    if schedule != "interleaved" and virtual != 1:
        raise ValueError(f"{schedule} has one chunk per device: virtual must be 1")
    if schedule == "interleaved" and micro_batches % stages != 0:
        raise ValueError("the interleaved schedule needs micro_batches divisible by stages")


def device_order(schedule: str, stages: int, micro_batches: int, stage: int, virtual: int = 1) -> list[tuple[str, int, int]]:
    """The order of (kind, micro, chunk) slots that device ``stage`` runs."""
    _check(schedule, stages, micro_batches, virtual)
    S, M, v, s = stages, micro_batches, virtual, stage
    if schedule == "gpipe":
        # every forward first, then every backward (GPipe, Huang et al. 2019)
        return [("F", m, 0) for m in range(M)] + [("B", m, 0) for m in range(M)]
    if schedule == "1f1b":
        # PipeDream-Flush / Megatron non-interleaved: S-s-1 warm-up forwards,
        # then alternate one forward and one backward, then drain the backwards.
        warmup = min(S - s - 1, M)
        order = [("F", m, 0) for m in range(warmup)]
        f, b = warmup, 0
        while f < M:
            order.append(("F", f, 0))
            f += 1
            order.append(("B", b, 0))
            b += 1
        order += [("B", m, 0) for m in range(b, M)]
        return order
    # interleaved 1F1B (Narayanan et al. 2021, Megatron-LM): the device owns chunks
    # 0..v-1 = virtual stages s, s+S, ..., s+(v-1)S. Forwards walk the chunks in
    # groups of S micro-batches; backwards walk them in the opposite chunk order.
    total = M * v

    def fwd(k: int) -> tuple[int, int]:
        group = k // (S * v)
        chunk = (k % (S * v)) // S
        return group * S + (k % S), chunk

    def bwd(k: int) -> tuple[int, int]:
        m, chunk = fwd(k)
        return m, v - 1 - chunk

    if M == S:
        warmup = total  # Megatron-LM runs every forward first in this case
    else:
        warmup = min((S - s - 1) * 2 + (v - 1) * S, total)
    order = []
    for k in range(warmup):
        m, c = fwd(k)
        order.append(("F", m, c))
    for i in range(total - warmup):
        m, c = fwd(warmup + i)
        order.append(("F", m, c))
        m, c = bwd(i)
        order.append(("B", m, c))
    for k in range(total - warmup if warmup < total else 0, total):
        m, c = bwd(k)
        order.append(("B", m, c))
    return order


# ----------------------------------------------------------------------- simulation


def simulate(
    schedule: str,
    stages: int,
    micro_batches: int,
    virtual: int = 1,
    t_f: float = 1.0,
    t_b: float = 2.0,
    t_comm: float = 0.0,
    scale: tuple[float, ...] | list[float] | None = None,
) -> Result:
    """Play every device's order forward in time, each slot as early as its
    dependencies and its device allow.

    ``scale`` (one factor per device) makes the stages unequal: device s runs its
    forward slots in ``scale[s] * t_f / v`` and its backward slots in
    ``scale[s] * t_b / v``. Without it every stage takes the same time, the case
    the closed forms of this module describe."""
    _check(schedule, stages, micro_batches, virtual)
    S, M, v = stages, micro_batches, virtual
    if scale is None:
        scale = (1.0,) * S
    scale = tuple(float(x) for x in scale)
    if len(scale) != S or min(scale) <= 0:
        raise ValueError("scale needs one positive factor per stage")
    V = S * v  # number of virtual stages
    orders = [device_order(schedule, S, M, s, v) for s in range(S)]
    dur = [{"F": scale[s] * t_f / v, "B": scale[s] * t_b / v} for s in range(S)]
    done: dict[tuple[str, int, int], float] = {}  # (kind, micro, virtual stage) -> end time
    ptr = [0] * S
    free = [0.0] * S
    slots: list[list[Slot]] = [[] for _ in range(S)]
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(S):
            while ptr[s] < len(orders[s]):
                kind, m, c = orders[s][ptr[s]]
                j = c * S + s  # virtual stage of this chunk
                if kind == "F":
                    dep = ("F", m, j - 1) if j > 0 else None
                else:
                    dep = ("B", m, j + 1) if j < V - 1 else ("F", m, j)
                if dep is not None and dep not in done:
                    break
                ready = 0.0
                if dep is not None:
                    ready = done[dep] + (t_comm if dep[2] != j else 0.0)
                start = max(free[s], ready)
                end = start + dur[s][kind]
                done[(kind, m, j)] = end
                free[s] = end
                slots[s].append(Slot(s, kind, m, c, start, end))
                ptr[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            raise RuntimeError(f"{schedule}: the device orders deadlock (S={S}, M={M}, v={v})")
    makespan = max(free)
    busy = tuple(M * scale[s] * (t_f + t_b) for s in range(S))
    traces, peaks = [], []
    for s in range(S):
        alive, trace = 0, []
        for kind, _, _ in orders[s]:
            alive += 1 if kind == "F" else -1
            trace.append(alive)
        traces.append(tuple(trace))
        peaks.append(max(trace))
    return Result(
        schedule=schedule,
        stages=S,
        micro_batches=M,
        virtual=v,
        t_f=t_f,
        t_b=t_b,
        timeline=tuple(tuple(x) for x in slots),
        makespan=makespan,
        busy=busy,
        peak_in_flight=tuple(peaks),
        in_flight_trace=tuple(traces),
    )


# --------------------------------------------------------------------- closed forms


def bubble_ratio_closed(schedule: str, stages: int, micro_batches: int, virtual: int = 1) -> Fraction:
    """Idle / useful compute: (S-1)/M for GPipe and 1F1B, (S-1)/(v M) interleaved."""
    _check(schedule, stages, micro_batches, virtual)
    return Fraction(stages - 1, virtual * micro_batches)


def bubble_fraction_closed(schedule: str, stages: int, micro_batches: int, virtual: int = 1) -> Fraction:
    """Idle / makespan: (S-1)/(M+S-1) for GPipe and 1F1B, (S-1)/(v M + S - 1) interleaved."""
    _check(schedule, stages, micro_batches, virtual)
    return Fraction(stages - 1, virtual * micro_batches + stages - 1)


def peak_in_flight_closed(schedule: str, stages: int, micro_batches: int, stage: int, virtual: int = 1) -> int:
    """Peak chunk activations alive on device ``stage``.

    GPipe: M on every stage. 1F1B: min(S - stage, M). Interleaved (M > S):
    min(2 (S - stage - 1) + (v - 1) S + 1, v M); with M == S every forward runs
    first, so v M.
    """
    _check(schedule, stages, micro_batches, virtual)
    S, M, v, s = stages, micro_batches, virtual, stage
    if schedule == "gpipe":
        return M
    if schedule == "1f1b":
        return min(S - s, M)
    if M == S:
        return v * M
    return min(2 * (S - s - 1) + (v - 1) * S + 1, v * M)


def activation_units_closed(schedule: str, stages: int, micro_batches: int, stage: int, virtual: int = 1) -> Fraction:
    """Peak activations on ``stage`` in units of L*a (the whole model, one micro-batch).

    Device memory = (layers on the device per chunk) x (chunks in flight) x a
                  = L/(S v) * peak_in_flight * a.
    For 1F1B on stage 0 with M >= S this is L/S * S = L: the S cancels.
    """
    p = peak_in_flight_closed(schedule, stages, micro_batches, stage, virtual)
    return Fraction(p, stages * virtual)


def render_ascii(result: Result) -> str:
    """A text Gantt chart, one row per device. Each character is one time unit of
    length min(t_f, t_b)/v; a slot prints its micro-batch number (mod 10) in its
    first cell, then 'f' (forward) or 'b' (backward); '.' is idle."""
    unit = min(result.t_f, result.t_b) / result.virtual
    cols = int(round(result.makespan / unit))
    rows = []
    for s, device in enumerate(result.timeline):
        line = ["."] * cols
        for slot in device:
            a, b = int(round(slot.start / unit)), int(round(slot.end / unit))
            for x in range(a, b):
                line[x] = str(slot.micro % 10) if x == a else slot.kind.lower()
        rows.append(f"stage {s} |" + "".join(line) + "|")
    return "\n".join(rows)
