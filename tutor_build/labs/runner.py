"""Build, verify and benchmark labs. Each lab program checks itself and prints JSON lines; the
runner compiles it, runs it, reads those lines, and turns measurements into records."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..measurements import record_key, source_digest
from ..model import LAB_PATHS, Course
from .feedback import advice, describe_check, explain_exit, last_error, learner_frames, most_telling_first
from .toolchains import Toolchains

COMMON = {"cuda": "labs/common/cuda/tutor_lab.cuh", "hip": "labs/common/hip/tutor_lab.hip.h",
          "triton": "labs/common/python/tutor_lab.py", "python": "labs/common/python/tutor_lab.py"}
HIP_ARCHS = ("gfx90a", "gfx940")


@dataclass(frozen=True)
class LabTarget:
    module: str
    lab: str
    vendor: str  # cuda | hip | triton | python

    def source(self, exercise: bool = False) -> str:
        suffix = "_exercise" if exercise else ""
        return f"labs/{self.module}/{self.vendor}/{self.lab}{suffix}{LAB_PATHS[self.vendor]}"

    def binary(self, exercise: bool = False) -> str:
        suffix = "_exercise" if exercise else ""
        ext = ".o" if self.vendor == "hip" else ""
        return f"build/labs/{self.module}/{self.vendor}/{self.lab}{suffix}{ext}"

    @property
    def name(self) -> str:
        return f"{self.module}/{self.lab}/{self.vendor}"


@dataclass
class Outcome:
    target: LabTarget
    ok: bool
    skipped: str = ""
    detail: str = ""
    events: list[dict] = field(default_factory=list)


def targets(course: Course, module: str | None = None, vendor: str | None = None) -> list[LabTarget]:
    found = []
    for m in course.modules:
        if module and m.id != module:
            continue
        for lab in m.labs:
            for p in lab.paths:
                if p in LAB_PATHS and (vendor is None or p == vendor):
                    found.append(LabTarget(m.id, lab.name, p))
    return found


NVCC_LOCATION = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\): ", re.MULTILINE)


def _compiler_messages(text: str) -> str:
    """nvcc says `file(41): error`; print `file:41: error` like every other tool here."""
    return NVCC_LOCATION.sub(lambda m: f"{m.group('file')}:{m.group('line')}: ", text).strip()


# A lab that times the vendor BLAS beside its own kernels includes its header under `__has_include`, so that
# it compiles where the toolkit lacks it (and reports that ceiling as skipped); where the header is there,
# the program is linked against the library.
VENDOR_BLAS = {"cuda": ("nvcc", "cublas_v2.h", "-lcublas"), "hip": ("hipcc", "hipblas/hipblas.h", "-lhipblas")}


def _toolkit_has(compiler: str, header: str) -> bool:
    """Whether the toolkit next to `compiler` (bin/ -> include/, or targets/*/include/) has `header`."""
    found = shutil.which(compiler)
    if not found:
        return False
    root = Path(found).resolve().parent.parent
    return any((d / header).is_file() for d in [root / "include", *root.glob("targets/*/include")])


def blas_flags(root: Path, src: str, vendor: str) -> list[str]:
    compiler, header, flag = VENDOR_BLAS[vendor]
    text = (root / src).read_text(encoding="utf-8", errors="replace")
    return [flag] if f"<{header}>" in text and _toolkit_has(compiler, header) else []


def build_command(target: LabTarget, exercise: bool, tools: Toolchains, cuda_arch: str, root: Path = Path(".")) -> list[str]:
    src, out = target.source(exercise), target.binary(exercise)
    if target.vendor == "cuda":
        return ["nvcc", "-O3", "-std=c++17", f"-arch={cuda_arch}", "-lineinfo", "-I", "labs/common/cuda", "-o", out, src,
                *blas_flags(root, src, "cuda")]
    if target.vendor == "hip":
        archs = [f"--offload-arch={a}" for a in HIP_ARCHS]
        if tools.amd_gpu:  # a real AMD GPU: link a program for this machine
            return ["hipcc", "-O3", "-std=c++17", "--offload-arch=native", "-I", "labs/common/hip", "-o", out[:-2], src,
                    *blas_flags(root, src, "hip")]
        return ["hipcc", "-O3", "-std=c++17", *archs, "-I", "labs/common/hip", "-c", "-o", out, src]
    raise ValueError(f"{target.vendor} labs are not compiled")


def build(root: Path, target: LabTarget, tools: Toolchains, exercise: bool = False, cuda_arch: str = "sm_90a") -> Outcome:
    able, why = tools.can_build(target.vendor)
    if not able:
        return Outcome(target, True, skipped=why)
    (root / target.binary(exercise)).parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HIP_PLATFORM="amd") if target.vendor == "hip" else None
    cmd = build_command(target, exercise, tools, cuda_arch, root)
    # verify, bench and profile each build first: a binary made by the same command from the same lab and
    # kit files is used again (its key file holds their digest)
    key = _build_key(root, cmd, target, exercise)
    binary = root / target.binary(exercise)
    key_file = binary.with_name(binary.name + ".key")
    if binary.is_file() and key_file.is_file() and key_file.read_text(encoding="utf-8") == key:
        return Outcome(target, True)
    key_file.unlink(missing_ok=True)
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    messages = _compiler_messages(done.stdout + done.stderr)
    if done.returncode == 0 and binary.is_file():
        key_file.write_text(key, encoding="utf-8")
    return Outcome(target, done.returncode == 0, detail=messages)


def _build_key(root: Path, cmd: list[str], target: LabTarget, exercise: bool) -> str:
    digest = hashlib.sha256("\0".join(cmd).encode())
    siblings = sorted((root / target.source(exercise)).parent.glob("*"))  # a lab may include another (B04)
    kit = sorted((root / "labs/common" / target.vendor).glob("*"))
    for path in [*siblings, *kit]:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _run_command(target: LabTarget, exercise: bool, extra: list[str]) -> list[str]:
    if target.vendor in ("triton", "python"):
        return [sys.executable, target.source(exercise), *extra]
    binary = target.binary(exercise)
    if target.vendor == "hip":
        binary = binary[:-2]
    return [f"./{binary}", *extra]


def _env(root: Path, target: LabTarget, tools: Toolchains) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "labs/common/python"), env.get("PYTHONPATH", "")]))
    env.setdefault("NCCL_NVLS_ENABLE", "0")  # never NVLink multicast
    if target.vendor == "triton" and not tools.gpu:
        env["TRITON_INTERPRET"] = "1"  # Triton's interpreter runs the kernels on CPU tensors
    return env


def parse_events(stdout: str) -> list[dict]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def run(root: Path, target: LabTarget, tools: Toolchains, exercise: bool = False, bench: bool = False,
        quick: bool = False, timeout: int = 900) -> Outcome:
    able, why = tools.can_run(target.vendor)
    if not able:
        return Outcome(target, True, skipped=why)
    if target.vendor in ("cuda", "hip"):
        built = build(root, target, tools, exercise, cuda_arch="native" if tools.nvidia_gpu else "sm_90a")
        if not built.ok:
            return Outcome(target, False, detail=built.detail)
    extra = (["--bench"] if bench else []) + (["--quick"] if quick or (target.vendor in ("triton", "python") and not tools.gpu) else [])
    cmd = _run_command(target, exercise, extra)
    try:
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout, env=_env(root, target, tools))
    except subprocess.TimeoutExpired:
        return Outcome(target, False, detail=f"timed out after {timeout} s: {' '.join(cmd)}")
    outcome = judge(target, exercise, done.returncode, done.stdout, done.stderr, bench)
    if exercise and not outcome.ok and untouched(root, target.source(exercise=True)):
        outcome.detail = (f"{target.source(exercise=True)} is as the course ships it: its checks fail until its TODOs "
                          f"are done, so the hints below describe the placeholder code, not a mistake of yours. "
                          f"Start with `tutor labs hint {target.module} {target.lab} --vendor {target.vendor}`.\n"
                          + outcome.detail)
    return outcome


def untouched(root: Path, rel: str) -> bool:
    """Whether the file is exactly as committed (false outside a git checkout, or when git is missing)."""
    try:
        done = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", rel], cwd=root, capture_output=True, timeout=30)
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", rel], cwd=root, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and tracked.returncode == 0


def judge(target: LabTarget, exercise: bool, returncode: int, stdout: str, stderr: str, bench: bool = False) -> Outcome:
    """The verdict on one lab run: it passes only if it exited 0, by itself (no signal), and printed
    at least one check, all of them passing (a bench run may print measurements only)."""
    events = parse_events(stdout)
    checks = [e for e in events if e.get("event") == "check"]
    failed = [e for e in checks if not e.get("ok")]
    ok = returncode == 0 and not failed and (bool(checks) or bench)
    if ok:
        return Outcome(target, True, events=events)
    lines = [f"in {target.source(exercise)}:"]
    for e in failed:  # the C++ kits print no replay command: it is the binary with the seed
        if "replay" not in e and "seed" in e and target.vendor in ("cuda", "hip"):
            e["replay"] = " ".join(_run_command(target, exercise, ["--seed", str(e["seed"])]))
    failed = most_telling_first(failed)
    for e in failed[:3]:
        lines += describe_check(e)
    if len(failed) > 3:
        lines.append(f"... and {len(failed) - 3} more failing checks (run the file itself to see them all)")
    lines += advice(failed, framework=target.vendor == "python")
    crash = explain_exit(returncode, stderr)
    if crash:
        lines.append(crash)
    frames = learner_frames(stderr, f"labs/{target.module}/")
    error = last_error(stderr) if returncode != 0 else ""
    if frames:
        lines.append("your code in the traceback:")
        lines += [f"  {f}" for f in frames]
    if error and (frames or not failed):
        lines.append(f"error: {error}")
    if not checks and not bench and not crash and not error:
        lines.append("the lab printed no check lines")
    if not failed and not frames and not crash:
        tail = (stderr or stdout).strip().splitlines()[-8:]
        lines += [f"  | {t}" for t in tail]
    if returncode > 0 and not failed:
        lines.append(f"exit status {returncode}")
    return Outcome(target, False, detail="\n".join(lines), events=events)


def runtime_description(vendor: str, tools: Toolchains) -> str:
    if vendor in ("cuda", "hip"):
        return tools.nvcc if vendor == "cuda" else tools.hipcc
    code = ("import torch, sys; v = torch.version; "
            "print(f'PyTorch {torch.__version__}' + (f', CUDA {v.cuda}' if v.cuda else '') + (f', HIP {v.hip}' if getattr(v, 'hip', None) else ''))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    return out + (f", Triton {tools.triton}" if vendor == "triton" and tools.triton else "")


def records_from(root: Path, target: LabTarget, outcome: Outcome, tools: Toolchains, date: str | None = None) -> list[dict]:
    """Measurement records for every `measure` line of a bench run."""
    sources = [target.source(), COMMON[target.vendor]]
    digest = source_digest(root, sources)
    toolkit = runtime_description(target.vendor, tools)
    date = date or dt.datetime.now(dt.timezone.utc).date().isoformat()
    out = []
    for e in outcome.events:
        if e.get("event") != "measure":
            continue
        rec = {"module": target.module, "lab": target.lab, "variant": e["variant"], "vendor": target.vendor,
               "gpu": tools.gpu or "CPU", "toolkit": toolkit, "date": date, "metric": e["metric"],
               "value": e["value"], "unit": e["unit"], "ceiling": e["ceiling"],
               "source": sources, "source_sha256": digest}
        for extra in ("bytes", "flops", "ms", "size", "note", "kind"):
            if extra in e:
                rec[extra] = e[extra]
        out.append(rec)
    return out


def write_records(path: Path, new: list[dict]) -> None:
    """Replace records with the same key, keep the others; one JSON object per line, sorted by key."""
    keep: dict[str, dict] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                keep[record_key(rec)] = rec
    for rec in new:
        keep[record_key(rec)] = rec
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(keep[k], sort_keys=True) + "\n" for k in sorted(keep)), encoding="utf-8")


def gpu_slug(gpu: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", gpu.lower().replace("nvidia ", "")).strip("-") or "cpu"


def sanitize_commands(target: LabTarget) -> list[list[str]]:
    binary = f"./{target.binary()}"
    return [["compute-sanitizer", "--tool", tool, "--error-exitcode", "1", binary, "--quick"]
            for tool in ("memcheck", "racecheck")]
