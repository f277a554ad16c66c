"""Profiler evidence: Nsight Compute counters of a lab's kernels, recorded like any other measurement.

labs/<MODULE>/profile.yml lists what to count:

    - lab: transpose            # a CUDA lab of the module
      kernel: naive_row         # the kernel's name (with or without template arguments)
      launch_skip: 8            # launches of that kernel to let pass first (the checks' small sizes)
      args: [--bench]           # the lab's arguments for the profiled run
      metrics: [lts__t_requests_srcunit_tex_op_write.sum, lts__t_sectors_srcunit_tex_op_write.sum]
      cache_control: all        # optional: all (Nsight Compute's default: caches flushed before the profiled
                                # launch) or none (the caches as the program left them, for a warm working set)

Each counter becomes a record with variant "<kernel>.<metric>" (key A02/transpose/naive_row.lts__...sum/cuda),
its unit as Nsight Compute reports it, and no ceiling: a count is evidence for a mechanism, not a rate."""

from __future__ import annotations

import csv
import io
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import Diagnostic, error
from ..yamlio import load_yaml

PROFILE_FILE = "labs/{module}/profile.yml"
METRIC = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")
# What the profiled launch finds in the caches, as the record's note says it.
CACHE_CONTROL = {"all": "caches flushed before the launch", "none": "caches as the program left them"}


@dataclass(frozen=True)
class Counters:
    module: str
    lab: str
    kernel: str
    launch_skip: int
    args: tuple[str, ...]
    metrics: tuple[str, ...]
    line: int
    label: str = ""  # names the records (<label>.<metric>) when two entries count one kernel; else the kernel
    cache_control: str = "all"  # Nsight Compute flushes every cache before the profiled launch unless "none"

    @property
    def name(self) -> str:
        return self.label or self.kernel


def load(root: Path, module: str, labs: set[str]) -> tuple[list[Counters], list[Diagnostic]]:
    """The module's profile.yml (absent: nothing to count); E513 for every entry that is not well formed."""
    rel = PROFILE_FILE.format(module=module)
    if not (root / rel).is_file():
        return [], []
    raw, diags = load_yaml(root / rel, rel)
    if diags:
        return [], diags
    if not isinstance(raw, list):
        return [], [error(rel, 1, "E513", "profile.yml must be a list of {lab, kernel, launch_skip, args, metrics}")]
    out, problems = [], []
    for i, item in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(item, dict):
            problems.append(error(rel, line, "E513", "each entry is a mapping {lab, kernel, launch_skip, args, metrics}"))
            continue
        lab, kernel, metrics = item.get("lab"), item.get("kernel"), item.get("metrics")
        skip, args = item.get("launch_skip", 0), item.get("args", [])
        why = []
        if lab not in labs:
            why.append(f"lab {lab!r} is not a lab of {module} (its labs: {', '.join(sorted(labs))})")
        if not isinstance(kernel, str) or not re.fullmatch(r"[A-Za-z_]\w*", kernel):
            why.append("kernel must be the kernel's plain name")
        if not isinstance(skip, int) or skip < 0:
            why.append("launch_skip must be a whole number >= 0")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            why.append("args must be a list of strings")
        if not isinstance(metrics, list) or not metrics or not all(isinstance(x, str) and METRIC.match(x) for x in metrics):
            why.append("metrics must be a list of Nsight Compute metric names (e.g. lts__t_sectors_op_read.sum)")
        label = item.get("label", "")
        if label and (not isinstance(label, str) or not re.fullmatch(r"[A-Za-z_]\w*", label)):
            why.append("label must be a plain name (letters, digits, _), e.g. sweep_k128")
        cache = item.get("cache_control", "all")
        if cache not in CACHE_CONTROL:
            why.append(f"cache_control must be one of: {', '.join(CACHE_CONTROL)}")
        if why:
            problems += [error(rel, line, "E513", w) for w in why]
            continue
        out.append(Counters(module, lab, kernel, skip, tuple(args), tuple(metrics), line, label, cache))
    return _distinct(rel, out, problems)


def _distinct(rel: str, entries: list[Counters], problems: list[Diagnostic]) -> tuple[list[Counters], list[Diagnostic]]:
    """Two entries that would write one record (lab, kernel or label, metric): the later one is an error."""
    first_line: dict[tuple[str, str, str], int] = {}
    kept = []
    for c in entries:
        clash = [(m, first_line[(c.lab, c.name, m)]) for m in c.metrics if (c.lab, c.name, m) in first_line]
        if clash:
            m, line = clash[0]
            problems.append(error(rel, c.line, "E513", f"the entry at line {line} records {c.name}.{m} too: "
                                                       "give one of them a `label` of its own"))
            continue
        first_line.update({(c.lab, c.name, m): c.line for m in c.metrics})
        kept.append(c)
    return kept, problems


def ncu_command(binary: str, c: Counters, log: Path) -> list[str]:
    # --clock-control none: the GPU keeps its own clocks, as in every other measurement of the course
    # --cache-control: "all" flushes every cache before the launch (a cold start); "none" leaves them as they are
    return ["ncu", "--csv", "--clock-control", "none", "--cache-control", c.cache_control, "--log-file", str(log), "--metrics", ",".join(c.metrics), "-k", f"regex:^{c.kernel}(<|$)",
            "--launch-skip", str(c.launch_skip), "--launch-count", "1", binary, *c.args]


def parse_csv(text: str) -> dict[str, tuple[float, str, str]]:
    """metric -> (value, unit, kernel name) from Nsight Compute's --csv output (other lines are skipped)."""
    rows = [line for line in text.splitlines() if line.startswith('"')]
    found = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        name, value = row.get("Metric Name"), (row.get("Metric Value") or "").replace(",", "")
        try:
            found[name] = (float(value), row.get("Metric Unit") or "", row.get("Kernel Name") or "")
        except ValueError:
            continue
    return found


def ncu_version() -> str:
    try:
        out = subprocess.run(["ncu", "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"Version (\S+)", out)
    return f"Nsight Compute {m.group(1)}" if m else "Nsight Compute"
