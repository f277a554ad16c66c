"""B07 lab (exercise): schedule_sim -- a pipeline-schedule simulator, checked against closed forms.

Three schedules on S stages (one device each) and M micro-batches:
  gpipe        every forward, then every backward            (Huang et al. 2019)
  1f1b         S-s-1 warm-up forwards, then one F / one B     (PipeDream-Flush, Megatron-LM)
  interleaved  1F1B over v model chunks per device            (Narayanan et al. 2021)

The simulator fixes the order of slots on each device, then plays it forward in time
(each slot starts when its device is free and its dependency has finished). It reports

  bubble ratio      idle / compute      closed form (S-1)/M, interleaved (S-1)/(v M)
  bubble fraction   idle / makespan     closed form (S-1)/(M+S-1), interleaved (S-1)/(v M+S-1)
  peak in flight    chunk activations alive at once on each device
                    gpipe M; 1f1b min(S-s, M); interleaved min(2(S-s-1)+(v-1)S+1, vM)

and checks every number against the closed form on a grid plus fresh random draws.
Run:  python labs/B07/python/schedule_sim.py [--quick] [--seed N] [--show S M v]
"""

from __future__ import annotations

import os
import random
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import tutor_lab  # noqa: E402
import torch  # noqa: E402  (only to hand numbers to tutor_lab.check)

LAB = "schedule_sim"


def device_order(schedule, S, M, s, v=1):
    """The (kind, micro, chunk) slots that device s runs, in order."""
    if schedule == "gpipe":
        return [("F", m, 0) for m in range(M)] + [("B", m, 0) for m in range(M)]
    if schedule == "1f1b":
        # TODO 1: 1F1B. warmup = the forwards stage s runs before its first backward. 1F1B stops when one
        #         more forward would leave s holding one micro-batch per stage from s to the last (cap: M).
        #         (As written this is GPipe again: the peak in-flight checks will fail.)
        warmup = M
        order = [("F", m, 0) for m in range(warmup)]
        for i in range(M - warmup):  # steady state: one forward, one backward
            order += [("F", warmup + i, 0), ("B", i, 0)]
        return order + [("B", m, 0) for m in range(M - warmup, M)]  # drain
    # interleaved: device s owns chunks c = 0..v-1, i.e. virtual stages c*S + s
    total = M * v

    def fwd(k):  # k-th forward on this device: groups of S micro-batches per chunk
        return (k // (S * v)) * S + k % S, (k % (S * v)) // S

    def bwd(k):  # backwards visit the chunks in reverse
        m, c = fwd(k)
        return m, v - 1 - c

    warmup = total if M == S else min(2 * (S - s - 1) + (v - 1) * S, total)
    order = [("F", *fwd(k)) for k in range(warmup)]
    for i in range(total - warmup):
        order += [("F", *fwd(warmup + i)), ("B", *bwd(i))]
    start = total - warmup if warmup < total else 0
    return order + [("B", *bwd(k)) for k in range(start, total)]


def simulate(schedule, S, M, v=1, t_f=1.0, t_b=2.0):
    """Returns (makespan, busy time per device, peak in-flight chunks per device, timeline)."""
    V = S * v
    orders = [device_order(schedule, S, M, s, v) for s in range(S)]
    dur = {"F": t_f / v, "B": t_b / v}
    end = {}  # (kind, micro, virtual stage) -> finish time
    ptr, free = [0] * S, [0.0] * S
    timeline = [[] for _ in range(S)]
    left = sum(map(len, orders))
    while left:
        moved = False
        for s in range(S):
            while ptr[s] < len(orders[s]):
                kind, m, c = orders[s][ptr[s]]
                j = c * S + s
                if kind == "F":
                    dep = ("F", m, j - 1) if j > 0 else None
                else:
                    dep = ("B", m, j + 1) if j < V - 1 else ("F", m, j)
                if dep is not None and dep not in end:
                    break  # wait for another device
                start = max(free[s], end[dep] if dep else 0.0)
                end[(kind, m, j)] = free[s] = start + dur[kind]
                timeline[s].append((kind, m, c, start, free[s]))
                ptr[s] += 1
                left -= 1
                moved = True
        if not moved:
            raise RuntimeError(f"{schedule} deadlocks at S={S} M={M} v={v}")
    peaks = []
    for order in orders:
        # TODO 2: the largest number, at any point of this device's order, of chunks whose forward has
        #         run here and whose backward has not (their activations are still stored); append it.
        peaks.append(0)
    return max(free), M * (t_f + t_b), peaks, timeline


def closed_forms(schedule, S, M, v=1):
    ratio = Fraction(S - 1, v * M)
    fraction = Fraction(S - 1, v * M + S - 1)
    if schedule == "gpipe":
        peaks = [M] * S
    elif schedule == "1f1b":
        peaks = [min(S - s, M) for s in range(S)]
    else:
        peaks = [v * M if M == S else min(2 * (S - s - 1) + (v - 1) * S + 1, v * M) for s in range(S)]
    return ratio, fraction, peaks


def gantt(timeline, makespan, unit):
    """One text row per device: a slot prints its micro-batch (mod 10) then f/b; '.' is idle."""
    rows = []
    for s, slots in enumerate(timeline):
        line = ["."] * round(makespan / unit)
        for kind, m, _, a, b in slots:
            for x in range(round(a / unit), round(b / unit)):
                line[x] = str(m % 10) if x == round(a / unit) else kind.lower()
        rows.append(f"stage {s} |{''.join(line)}|")
    return "\n".join(rows)


def check_case(schedule, S, M, v, t_f, t_b, seed):
    """Simulated [bubble ratio, bubble fraction, peak in-flight per stage] vs the closed forms."""
    makespan, busy, peaks, _ = simulate(schedule, S, M, v, t_f, t_b)
    idle = makespan - busy
    ratio, fraction, want_peaks = closed_forms(schedule, S, M, v)
    got = torch.tensor([idle / busy, idle / makespan, *peaks], dtype=torch.float64)
    want = torch.tensor([float(ratio), float(fraction), *want_peaks], dtype=torch.float64)
    size = f"S={S} M={M} v={v} tf={t_f:g} tb={t_b:g}"
    tutor_lab.check(LAB, schedule, size, got, want, seed, atol=1e-9)


def main():
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument(
        "--show", nargs=3, type=int, default=(4, 8, 2), metavar=("S", "M", "V"),
        help="draw the three schedules for these sizes (on stderr)"))
    rng = random.Random(args.seed)
    cases = []
    grid_S = (1, 2, 3, 4, 8) if not args.quick else (1, 2, 4)
    grid_M = (1, 3, 4, 8, 12, 16) if not args.quick else (1, 3, 4, 8)
    for S in grid_S:
        for M in grid_M:
            cases.append(("gpipe", S, M, 1))
            cases.append(("1f1b", S, M, 1))
            for v in (2, 3, 4):
                if M % S == 0:
                    cases.append(("interleaved", S, M, v))
    for _ in range(10 if args.quick else 40):  # fresh random draws, odd sizes included
        S = rng.randint(2, 9)
        schedule = rng.choice(("gpipe", "1f1b", "interleaved"))
        v = rng.randint(2, 4) if schedule == "interleaved" else 1
        M = S * rng.randint(1, 5) if schedule == "interleaved" else rng.randint(1, 37)
        cases.append((schedule, S, M, v))
    for schedule, S, M, v in cases:
        t_f = rng.choice((1.0, 1.5))
        t_b = t_f * rng.choice((1.0, 2.0, 3.0))
        check_case(schedule, S, M, v, t_f, t_b, args.seed)

    S, M, v = args.show
    for schedule, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
        makespan, busy, peaks, timeline = simulate(schedule, S, M, vv, 1.0, 2.0)
        print(f"# {schedule} S={S} M={M} v={vv}: bubble {1 - busy / makespan:.3f} of the step, "
              f"peak in-flight {peaks} chunks = {[p / vv for p in peaks]} stage-activations", file=sys.stderr)
        print(gantt(timeline, makespan, 1.0 / vv), file=sys.stderr)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
