"""`tutor labs list|build|verify|bench|counterparts|sanitize`."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..load import load_course
from ..model import LAB_PATHS, Course
from . import progress, runner
from .hints import LEVELS, load_hints, todo_numbers
from ..measurements import record_key
from .counterparts import check_pairs, pairs
from .toolchains import probe

VENDORS = tuple(LAB_PATHS)


class Progress:
    """A one-line progress bar on a terminal; plain lines in a log."""

    def __init__(self, total: int, verb: str) -> None:
        self.total, self.verb, self.done = total, verb, 0
        self.tty = sys.stderr.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        text = f"[{bar}] {self.done}/{self.total} {self.verb} {label}"
        print(("\r" + text.ljust(100)) if self.tty else text, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr)


class BadInput(Exception):
    """A command-line mistake: reported in one message, exit status 2."""


def course_root(given: str | None) -> Path:
    """--root if given, else the nearest folder at or above the current one that holds the course."""
    if given:
        return Path(given).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "mkdocs.yml").is_file() and (folder / "modules").is_dir():
            return folder
    raise BadInput(f"not inside the course: no folder at or above {here} holds mkdocs.yml and modules/ "
                   "(run from the course checkout, or pass --root)")


def _select(args: argparse.Namespace, vendors: tuple[str, ...] = VENDORS) -> tuple[Path, list[runner.LabTarget], Course]:
    """The labs the arguments name; BadInput (exit 2) for an unknown module, lab or vendor, with the choices."""
    root = course_root(args.root)
    course, _ = load_course(root)
    ids = [m.id for m in course.modules]
    module = None
    if args.id:
        module = next((i for i in ids if i.lower() == args.id.lower()), None)
        if module is None:
            raise BadInput(f"no module '{args.id}'; the modules are {', '.join(ids)}")
    everything = runner.targets(course, module)
    lab = getattr(args, "lab", None)
    if lab:
        labs = sorted({t.lab for t in everything})
        if lab not in labs:
            where = f"module {module}" if module else "any module"
            raise BadInput(f"no lab '{lab}' in {where}; its labs are {', '.join(labs)}")
        everything = [t for t in everything if t.lab == lab]
    vendor = getattr(args, "vendor", None)
    wanted = [vendor] if vendor else list(vendors)
    found = [t for t in everything if t.vendor in wanted]
    if not found:
        have = sorted({t.vendor for t in everything})
        what = f"{module or 'the course'}{'/' + lab if lab else ''}"
        raise BadInput(f"{what} has no {'/'.join(wanted)} lab; it has: {', '.join(have) or 'no labs'}")
    args.id = module
    return root, found, course


def _report(outcomes: list[runner.Outcome], verb: str) -> int:
    failed = 0
    for o in outcomes:
        if o.skipped:
            print(f"SKIP {o.target.name}: {o.skipped}")
        elif o.ok:
            print(f"ok   {o.target.name}")
        else:
            failed += 1
            print(f"FAIL {o.target.name}\n{o.detail}")
    print(f"{verb}: {sum(o.ok and not o.skipped for o in outcomes)} passed, {failed} failed, "
          f"{sum(bool(o.skipped) for o in outcomes)} skipped")
    return 1 if failed else 0


def cmd_list(args: argparse.Namespace) -> int:
    root, found, _ = _select(args)
    tools = probe()
    for t in found:
        can_build = tools.can_build(t.vendor) if t.vendor in ("cuda", "hip") else (True, "")
        can_run = tools.can_run(t.vendor)
        here = "run" if can_run[0] else ("build only" if can_build[0] else "nothing")
        reason = "" if can_run[0] else f" ({can_run[1]})"
        print(f"{t.name:40s} {t.source():45s} here: {here}{reason}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    root, found, _ = _select(args, ("cuda", "hip"))
    found = [t for t in found if t.vendor in ("cuda", "hip")]
    tools = probe()
    bar = Progress(len(found) * 2, "building")
    outcomes = []
    for t in found:
        for exercise in (False, True):
            bar.step(t.source(exercise))
            o = runner.build(root, t, tools, exercise, cuda_arch=args.arch)
            outcomes.append(o if o.ok or o.skipped else runner.Outcome(t, False, detail=f"{t.source(exercise)}:\n{o.detail}"))
    bar.close()
    return _report(outcomes, "build")


def cmd_verify(args: argparse.Namespace) -> int:
    root, found, _ = _select(args)
    tools = probe()
    bar = Progress(len(found), "verifying")
    outcomes = []
    for t in found:
        bar.step(t.source(args.exercise))
        outcome = runner.run(root, t, tools, exercise=args.exercise, quick=args.quick)
        outcomes.append(outcome)
        if args.exercise and outcome.ok and not outcome.skipped:
            progress.record(root, t.name, t.source(exercise=True))
        elif args.exercise and not outcome.ok:
            progress.forget(root, t.name)
    bar.close()
    code = _report(outcomes, "verify")
    quick = [o.target for o in outcomes if not o.skipped and o.target.vendor in ("triton", "python") and not tools.gpu]
    if quick and not args.quick:  # the runner adds --quick without a GPU: say so, and how to check every size
        kinds = " and ".join(k for k, v in (("Triton", "triton"), ("PyTorch", "python")) if any(t.vendor == v for t in quick))
        why = "the Triton interpreter is slow" if all(t.vendor == "triton" for t in quick) else "a CPU is slow at full size"
        print(f"no GPU here: {len(quick)} {kinds} lab(s) ran their --quick sizes ({why}); "
              "these commands check every size the page lists:")
        for t in quick:
            print(f"  {_full_size_command(t, args.exercise)}")
    if args.exercise and code == 0 and any(not o.skipped for o in outcomes):
        print(f"recorded in {progress.PROGRESS}; `tutor labs status` lists what you have done")
    return code


def _full_size_command(target: runner.LabTarget, exercise: bool) -> str:
    """The command that runs one Triton or PyTorch lab at every size on a machine without a GPU. A Triton
    lab needs the interpreter switched on before it imports triton, so the variable goes on the line."""
    interpret = "TRITON_INTERPRET=1 " if target.vendor == "triton" else ""
    return f"{interpret}{_python()} {target.source(exercise)}"


def _python() -> str:
    """The interpreter running this command, as a learner would type it (e.g. .venv/bin/python)."""
    try:
        return os.path.relpath(sys.executable)
    except ValueError:  # another drive on Windows
        return sys.executable


def cmd_bench(args: argparse.Namespace) -> int:
    root, found, _ = _select(args)
    tools = probe()
    if not tools.gpu:
        print("tutor labs bench: no GPU on this machine; benchmarks need one (verify runs without)", file=sys.stderr)
        return 1
    bar = Progress(len(found), "benchmarking")
    outcomes, records = [], []
    for t in found:
        bar.step(t.source())
        o = runner.run(root, t, tools, bench=True)
        outcomes.append(o)
        if o.ok and not o.skipped:
            records += runner.records_from(root, t, o, tools)
    bar.close()
    for r in _save_records(root, tools, records, args.course):
        pct = f" ({100 * r['value'] / r['ceiling']['value']:.0f}% of {r['ceiling']['name']})" if r["ceiling"].get("value") and r["unit"] == r["ceiling"].get("unit") else ""
        print(f"  {record_key(r)}: {r['value']:.4g} {r['unit']}{pct}")
    return _report(outcomes, "bench")


def _save_records(root: Path, tools, records: list[dict], course: bool) -> list[dict]:
    """Write the records to the course's file for this GPU (--course) or to measurements/local/; say where."""
    if records:
        slug = runner.gpu_slug(tools.gpu)
        out = root / "measurements" / (f"{slug}.jsonl" if course else f"local/{slug}.jsonl")
        runner.write_records(out, records)
        print(f"wrote {len(records)} records to {out.relative_to(root)}")
    return records


def cmd_profile(args: argparse.Namespace) -> int:
    """Nsight Compute counters named in labs/<MODULE>/profile.yml, recorded as measurements."""
    from . import profile

    root, found, course = _select(args, vendors=("cuda",))
    tools = probe()
    if not tools.nvidia_gpu or not shutil.which("ncu"):
        print("tutor labs profile: needs an NVIDIA GPU and Nsight Compute (ncu) on this machine", file=sys.stderr)
        return 1
    records, failures, ncu = [], 0, profile.ncu_version()
    for module in sorted({t.module for t in found}):
        labs = {t.lab for t in found if t.module == module}
        wanted, problems = profile.load(root, module, {t.lab for t in runner.targets(course, module)})
        for d in problems:
            print(d.format(), file=sys.stderr)
        failures += len(problems)
        for c in (c for c in wanted if c.lab in labs):
            target = runner.LabTarget(module, c.lab, "cuda")
            built = runner.build(root, target, tools)
            if not built.ok:
                print(f"{target.name}: does not build\n{built.detail}", file=sys.stderr)
                failures += 1
                continue
            log = root / "build" / "profile" / f"{module}-{c.lab}-{c.name}.csv"
            log.parent.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(profile.ncu_command(f"./{target.binary()}", c, log), cwd=root,
                                  capture_output=True, text=True, timeout=1800)
            counted = profile.parse_csv(log.read_text(encoding="utf-8")) if log.is_file() else {}
            missing = [m for m in c.metrics if m not in counted]
            if done.returncode != 0 or missing:
                print(f"{target.name} {c.name}: ncu exit {done.returncode}; no value for {', '.join(missing) or '-'}\n"
                      f"{(done.stderr or done.stdout)[-1500:]}", file=sys.stderr)
                failures += 1
                continue
            outcome = runner.Outcome(target, True, events=[
                {"event": "measure", "kind": "counter", "variant": f"{c.name}.{m}", "metric": m, "value": counted[m][0],
                 "unit": counted[m][1] or "count", "ceiling": {"name": "none (a profiler counter)", "value": 0,
                                                               "unit": counted[m][1] or "count"},
                 "note": f"{ncu}, one launch of {counted[m][2]} after {c.launch_skip} skipped, "
                         f"arguments {' '.join(c.args) or '(none)'}, {profile.CACHE_CONTROL[c.cache_control]}"}
                for m in c.metrics])
            records += runner.records_from(root, target, outcome, tools)
    for r in _save_records(root, tools, records, args.course):
        print(f"  {record_key(r)}: {r['value']:,.0f} {r['unit']}")
    return 1 if failures else 0


def cmd_hint(args: argparse.Namespace) -> int:
    if not args.id:
        raise BadInput("name a module and one of its labs, e.g. `tutor labs hint A01 vector_add`")
    root, found, course = _select(args)
    labs = sorted({t.lab for t in found})
    if len(labs) > 1:
        raise BadInput(f"module {args.id} has {len(labs)} labs: name one of {', '.join(labs)} "
                       f"(e.g. `tutor labs hint {args.id} {labs[0]}`)")
    lab = labs[0]
    vendors = tuple(sorted({t.vendor for t in runner.targets(course, args.id) if t.lab == lab}))
    hints, problems = load_hints(root, args.id, lab, vendors)
    if problems:
        for d in problems:
            print(d.format(), file=sys.stderr)
        return 1
    shown = [args.vendor] if args.vendor else list(vendors)
    if args.vendor:  # only the TODOs this vendor's exercise has
        exercise = root / runner.LabTarget(args.id, lab, args.vendor).source(exercise=True)
        present = todo_numbers(exercise.read_text(encoding="utf-8")) if exercise.is_file() else set()
        hints = [h for h in hints if h.todo in present]
    if args.todo is not None:
        todos = sorted(h.todo for h in hints)
        hints = [h for h in hints if h.todo == args.todo]
        if not hints:
            raise BadInput(f"no TODO {args.todo} in {args.id} {lab}{' (' + args.vendor + ')' if args.vendor else ''}; "
                           f"its TODOs are {', '.join(map(str, todos))}")
    print(f"{args.id} {lab}: hints at level {args.level} of 3 ({', '.join(LEVELS[:args.level])})")
    for h in sorted(hints, key=lambda h: h.todo):
        print(f"\nTODO {h.todo}: {h.title}")
        print(f"  question: {h.question}")
        if args.level >= 2:
            print(f"  idea: {h.idea}")
        if args.level >= 3:
            for v in shown:
                code = "\n".join("      " + ln for ln in h.line[v].splitlines())
                print(f"  line ({v}):\n{code}")
    if args.level < 3:
        more = "".join(f" {flag} {value}" for flag, value in (("--vendor", args.vendor), ("--todo", args.todo)) if value)
        print(f"\nstill stuck? `tutor labs hint {args.id} {lab} --level {args.level + 1}{more}`")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    root, found, _ = _select(args)
    done = progress.load(root)
    print(f"{'lab':34s} {'exercise':46s} status")
    for t in found:
        entry = done.get(t.name)
        state = f"done {entry['date']}" if entry else "not done"
        print(f"{t.name:34s} {t.source(exercise=True):46s} {state}")
    n = sum(t.name in done for t in found)
    print(f"{n} of {len(found)} exercises passed (recorded in {progress.PROGRESS} by `tutor labs verify --exercise`)")
    return 0


def cmd_counterparts(args: argparse.Namespace) -> int:
    root = course_root(args.root)
    mismatches = check_pairs(root, args.id)
    for m in mismatches:
        if m.reason == "has no HIP counterpart":
            print(f"{m.cuda_path}:1: E402 has no HIP counterpart {m.hip_path}")
        else:
            print(f"{m.hip_path}:{m.line}: E402 {m.reason}\n  {m.cuda_path}:{m.line}: {m.cuda_line.strip()}\n  {m.hip_path}:{m.line}: {m.hip_line.strip()}")
    print(f"counterparts: {len(pairs(root, args.id)) - len(mismatches)} passed, {len(mismatches)} failed")
    return 1 if mismatches else 0


def cmd_sanitize(args: argparse.Namespace) -> int:
    root, found, _ = _select(args, ("cuda",))
    found = [t for t in found if t.vendor == "cuda"]
    tools = probe()
    if not tools.nvidia_gpu or not shutil.which("compute-sanitizer"):
        print("tutor labs sanitize: needs an NVIDIA GPU and compute-sanitizer", file=sys.stderr)
        return 1
    failed = 0
    for t in found:
        built = runner.build(root, t, tools, cuda_arch="native")
        if not built.ok:
            print(f"FAIL {t.name} (build)\n{built.detail}")
            failed += 1
            continue
        for cmd in runner.sanitize_commands(t):
            env = dict(runner._env(root, t, tools), TUTOR_NO_GUARDS="1")  # memcheck sees the real bounds
            done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
            summary = [line for line in done.stdout.splitlines() if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line]
            status = "ok  " if done.returncode == 0 else "FAIL"
            failed += done.returncode != 0
            print(f"{status} {t.name} {cmd[2]}: {summary[-1].strip() if summary else done.stdout.strip()[-200:]}")
    print(f"sanitize: {failed} failed")
    return 1 if failed else 0


def _guarded(func):
    """Runs a subcommand; a command-line mistake prints one message and exits 2, never a traceback."""
    def run(args: argparse.Namespace) -> int:
        if getattr(args, "lab_name", None):
            if getattr(args, "lab", None) and args.lab != args.lab_name:
                print(f"tutor labs: two labs named: {args.lab_name} and --lab {args.lab}", file=sys.stderr)
                return 2
            args.lab = args.lab_name
        try:
            return func(args)
        except BadInput as e:
            print(f"tutor labs {args.labs_command}: {e}", file=sys.stderr)
            return 2
    return run


def register(sub: argparse._SubParsersAction) -> None:
    labs = sub.add_parser("labs", help="build, verify and benchmark the labs")
    labs_sub = labs.add_subparsers(dest="labs_command", required=True)

    def add(name: str, func, help_text: str, vendor: bool = True) -> argparse.ArgumentParser:
        p = labs_sub.add_parser(name, help=help_text)
        p.add_argument("id", nargs="?", default=None, help="module id, e.g. A02 (default: every module)")
        p.add_argument("lab_name", nargs="?", default=None, metavar="lab", help="one lab of the module, e.g. transpose")
        p.add_argument("--root", default=None, help="course root (default: the checkout around this folder)")
        if vendor:
            p.add_argument("--vendor", choices=VENDORS, default=None)
            p.add_argument("--lab", default=None, help="one lab of the module, e.g. transpose")
        p.set_defaults(func=_guarded(func))
        return p

    add("list", cmd_list, "every lab, its paths, and what this machine can do with each")
    b = add("build", cmd_build, "compile CUDA (nvcc) and HIP (hipcc, AMD platform) labs")
    b.add_argument("--arch", default="sm_90a", help="CUDA architecture for nvcc (default sm_90a)")
    v = add("verify", cmd_verify, "run labs and check their results on fresh random inputs")
    v.add_argument("--exercise", action="store_true", help="check your exercise instead of the worked solution")
    v.add_argument("--quick", action="store_true", help="small sizes")
    bench = add("bench", cmd_bench, "time labs on this GPU and record measurements")
    bench.add_argument("--course", action="store_true", help="write the course's records (default: measurements/local/)")
    prof = add("profile", cmd_profile, "record the Nsight Compute counters labs/<MODULE>/profile.yml names")
    prof.add_argument("--course", action="store_true", help="write the course's records (default: measurements/local/)")
    h = add("hint", cmd_hint, "graded hints for a lab: 1 a question, 2 the idea, 3 the line")
    h.add_argument("--level", type=int, choices=(1, 2, 3), default=1, help="how much to reveal (default 1)")
    h.add_argument("--todo", type=int, default=None, help="one TODO only, by its number")
    add("status", cmd_status, "which exercises you have passed")
    add("counterparts", cmd_counterparts, "check HIP files mirror CUDA files line for line", vendor=False)
    add("sanitize", cmd_sanitize, "compute-sanitizer memcheck and racecheck over the CUDA labs", vendor=False)
