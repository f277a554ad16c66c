"""Figures of module B06 (data parallelism, ZeRO and FSDP).

Every height drawn here comes from tutor_build.models.data_parallel (the same code the claims test and,
through training_memory, the training-memory player use): bytes per parameter per rank by ZeRO stage,
bytes per GPU for a published model, and DDP's gradient buckets for GPT-2's shapes.
"""

from __future__ import annotations

from ..models import data_parallel as dp
from ..models import hardware, training_memory
from ..render.svg import Canvas, Scale, axis_y

KINDS = (("weights", "s1", "bf16 weights"), ("gradients", "s2", "bf16 gradients"),
         ("optimizer", "s3", "fp32 master, momentum, variance"))
STAGE_NAMES = {0: "stage 0 (DDP)", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3 / FSDP"}


def _legend(c: Canvas, y: float) -> None:
    x = 8
    for _, fill, label in KINDS:
        c.rect(x, y - 11, 16, 16, fill=fill, rx=2)
        c.text(x + 22, y + 2, label)
        x += 22 + len(label) * 7.4 + 16


def desks(ranks: int = 4) -> Canvas:
    """Four groups (stages 0-3) of `ranks` columns: the bytes per parameter each rank keeps, by kind."""
    c = Canvas(560, 330)
    _legend(c, 20)
    top, bottom = 50, 270
    ys = Scale(0, 16, bottom, top)
    axis_y(c, ys, 44, "bytes per parameter", ticks=[0, 4, 8, 12, 16])
    group_w = (552 - 56) / 4
    for g, stage in enumerate(dp.STAGES):
        part = dp.per_rank(1e9, ranks, stage)
        x0 = 56 + g * group_w
        col = (group_w - 14) / ranks
        for r in range(ranks):
            y = bottom
            for kind, fill, label in KINDS:
                h = part[kind] / 1e9
                c.rect(x0 + r * col + 1, ys(h) - (bottom - y), col - 3, bottom - ys(h), fill=fill, stroke="bg",
                       title=f"{STAGE_NAMES[stage]}, rank {r}: {label} {h:g} bytes a parameter")
                y -= bottom - ys(h)
        total = part["states"] / 1e9
        c.text(x0 + (group_w - 14) / 2, ys(total) - 8, f"{total:g} B", anchor="middle", bold=True)
        c.text(x0 + (group_w - 14) / 2, bottom + 20, STAGE_NAMES[stage].split(" (")[0], anchor="middle")
        c.text(x0 + (group_w - 14) / 2, bottom + 40, f"{ranks} ranks", anchor="middle", fill="muted")
    return c


def stage_bars(model: str = "llama2-7b", ranks: int = 8) -> Canvas:
    """Bytes per GPU of weights, gradients and optimizer state by stage for a published model, beside
    the HBM of an H200 and an MI300X."""
    psi = training_memory.MODELS[model]["params"]
    c = Canvas(560, 360)
    _legend(c, 20)
    top, bottom, left = 60, 290, 64
    hi = 200
    ys = Scale(0, hi, bottom, top)
    axis_y(c, ys, left - 6, "GB per GPU", ticks=[0, 40, 80, 120, 160, 200])
    w = (540 - left) / 4
    for i, stage in enumerate(dp.STAGES):
        part = dp.per_rank(psi, ranks, stage)
        x = left + i * w + 10
        y = bottom
        for kind, fill, label in KINDS:
            gb = part[kind] / 1e9
            c.rect(x, y - (bottom - ys(gb)), w - 20, bottom - ys(gb), fill=fill, stroke="bg",
                   title=f"{STAGE_NAMES[stage]}: {label} {gb:.2f} GB")
            y -= bottom - ys(gb)
        c.text(x + (w - 20) / 2, y - 8, f"{part['states'] / 1e9:.1f} GB", anchor="middle", bold=True)
        c.text(x + (w - 20) / 2, bottom + 20, STAGE_NAMES[stage].split(" (")[0], anchor="middle")
    for dev, label, dash in (("h200", "H200 HBM", "6 3"), ("mi300x", "MI300X HBM", "2 3")):
        gb = hardware.value(dev, "hbm_bytes") / 1e9
        if gb <= hi:
            c.line(left, ys(gb), 548, ys(gb), stroke="bad", dash=dash, width=1.5)
            c.text(548, ys(gb) - 6, f"{label} {gb:g} GB", anchor="end", fill="bad")
        else:
            c.text(548, top - 8, f"{label} {gb:g} GB (above the axis)", anchor="end", fill="bad")
    c.text(8, 340, f"{training_memory.MODELS[model]['name']}, {ranks} data-parallel ranks, before activations",
           fill="muted")
    return c


def bucket_strip(model: str = "gpt2", cap_mb: float | None = None) -> Canvas:
    """DDP's buckets for a GPT-2 shape in the order backward fills them: one bar per all-reduce."""
    cfg = dp.GPT2[model]
    sizes = dp.ddp_buckets(cfg, cap_mb)
    c = Canvas(560, 140 + 26 * len(sizes))
    total = sum(sizes)
    c.text(8, 20, f"{cfg['name']}: {len(sizes)} all-reduces per step, {total / dp.MiB:.1f} MiB of fp32 gradients",
           bold=True)
    c.text(8, 42, "in the order backward fills them (first bucket first)", fill="muted")
    xs = Scale(0, max(sizes) / dp.MiB, 150, 450)
    y = 62
    for i, nb in enumerate(sizes):
        mib = nb / dp.MiB
        c.text(8, y + 9, f"all-reduce {i + 1}", middle=True)
        c.rect(150, y, max(2, xs(mib) - 150), 18, fill="s2" if i else "s4", title=f"bucket {i + 1}: {mib:.2f} MiB")
        c.text(xs(mib) + 6, y + 9, f"{mib:.1f} MiB", middle=True, fill="muted")
        y += 26
    cap = "1 MiB for the first bucket, 25 MiB after" if cap_mb is None else f"{cap_mb:g} MiB"
    c.text(8, y + 20, f"limits: {cap}", fill="muted")
    c.text(8, y + 42, "the last bucket holds the token table", fill="muted")
    return c
