"""The mutation suite: apply each mutant of tests/mutation/mutants.py to a scratch copy of the tree, run the
tests named beside it there, and require that they fail. Prints a table and the mutation score; exits 1 if
any mutant survives (no test noticed the break) or the unmutated tests do not pass.

    python tests/mutation/run.py            # every mutant
    python tests/mutation/run.py ratio-operands-swapped share-not-a-percent
    python tests/mutation/run.py --jobs 2   # two at a time (default: one; at most 4 are useful)

Runs that go at the same time each have a scratch copy of their own, so no two mutants ever share a tree.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from mutants import MUTANTS  # noqa: E402


def scratch_copy(dest: Path) -> None:
    """The tracked and untracked-but-not-ignored files: the tree as it would be committed."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    if (ROOT / "node_modules").is_dir():
        (dest / "node_modules").symlink_to(ROOT / "node_modules")


def pytest(tree: Path, args: list[str]) -> subprocess.CompletedProcess:
    # As in CI, a skip is a failure: a mutant that makes a gate skip (a toolchain "not found") is caught
    # exactly as CI would catch it. The baseline run shows that the unmutated tests skip nothing.
    env = dict(os.environ, PYTHONPATH=str(tree), TUTOR_REQUIRE_ALL="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-rfE", *args],
                          cwd=tree, capture_output=True, text=True, env=env, timeout=1200)


def first_failure(out: str) -> str:
    m = re.search(r"^FAILED (\S+)", out, flags=re.MULTILINE) or re.search(r"^ERROR (\S+)", out, flags=re.MULTILINE)
    return m.group(1) if m else "?"


def default_jobs() -> int:
    """One at a time: on a 2-core machine, parallel mutants slow each other's timed tests into failures."""
    return 1


def split_jobs(argv: list[str]) -> tuple[int, list[str]]:
    """`--jobs N` / `-j N` (or TUTOR_MUTATION_JOBS) out of the arguments; the rest are mutant ids."""
    jobs, rest, it = int(os.environ.get("TUTOR_MUTATION_JOBS") or default_jobs()), [], iter(argv)
    for arg in it:
        if arg in ("--jobs", "-j"):
            jobs = int(next(it))
        elif arg.startswith("--jobs="):
            jobs = int(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return max(1, jobs), rest


def mutate_and_run(tree: Path, mutant) -> tuple:
    """Apply one mutant in `tree`, run its tests, put the file back: (id, verdict, by, seconds, survived)."""
    mid, rel, old, new, args = mutant
    path = tree / rel
    original = path.read_text(encoding="utf-8")
    count = original.count(old)
    if count != 1:
        return mid, "STALE", f"the text to replace occurs {count} times in {rel}", 0.0, True
    path.write_text(original.replace(old, new), encoding="utf-8")
    start = time.monotonic()
    try:
        done = pytest(tree, list(args))
    finally:
        path.write_text(original, encoding="utf-8")
    took = time.monotonic() - start
    if done.returncode == 1:
        return mid, "killed", first_failure(done.stdout), took, False
    return mid, "SURVIVED", f"pytest exit {done.returncode}: {' '.join(args)}", took, True


def main(argv: list[str]) -> int:
    jobs, argv = split_jobs(argv)
    chosen = [m for m in MUTANTS if not argv or m[0] in argv]
    unknown = set(argv) - {m[0] for m in MUTANTS}
    if unknown:
        print(f"unknown mutant(s): {', '.join(sorted(unknown))}")
        return 2
    baselines = sorted({tuple(m[4]) for m in chosen})
    jobs = min(jobs, max(len(chosen), len(baselines)))
    with tempfile.TemporaryDirectory(prefix="tutor-mutants-") as tmp:
        trees: queue.Queue[Path] = queue.Queue()
        for i in range(jobs):  # one scratch copy per run at a time: a mutant never sees another's change
            tree = Path(tmp) / f"tree{i}"
            tree.mkdir()
            scratch_copy(tree)
            trees.put(tree)

        def in_a_tree(work):
            tree = trees.get()
            try:
                return work(tree)
            finally:
                trees.put(tree)

        def baseline(args: tuple) -> tuple:
            start = time.monotonic()
            done = in_a_tree(lambda tree: pytest(tree, list(args)))
            return args, done, time.monotonic() - start

        # The unmutated tests must pass, nothing skipped, for a killed mutant to mean anything; the baselines
        # go first in the queue and the mutants run beside them (a failed baseline voids every verdict below).
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            base_runs = [pool.submit(baseline, args) for args in baselines]
            mutant_runs = [pool.submit(in_a_tree, lambda tree, m=m: mutate_and_run(tree, m)) for m in chosen]
            problems = []
            for run in base_runs:
                args, done, took = run.result()
                skipped = re.search(r"(\d+) skipped", done.stdout)
                print(f"baseline {' '.join(args)}: exit {done.returncode} in {took:.1f}s", flush=True)
                if done.returncode != 0 or skipped:
                    problems.append(f"baseline {' '.join(args)}: exit {done.returncode}, "
                                    f"{skipped.group(0) if skipped else 'no skips'}\n{done.stdout[-1500:]}")
            if problems:
                for run in mutant_runs:
                    run.cancel()
                print("the unmutated tests must pass with nothing skipped first:\n" + "\n".join(problems))
                return 1
            results = [run.result() for run in mutant_runs]
    rows = [r[:4] for r in results]  # in the order of MUTANTS, whatever order they finished in
    survivors = [r[0] for r in results if r[4]]
    width = max(len(r[0]) for r in rows)
    for mid, verdict, by, took in rows:
        print(f"{mid:{width}s}  {verdict:8s} {took:6.1f}s  {by}")
    killed = len(rows) - len(survivors)
    print(f"mutation score: {killed}/{len(rows)} mutants killed ({100 * killed / len(rows):.0f}%) "
          f"({jobs} at a time)")
    if survivors:
        print(f"survived: {', '.join(survivors)}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
