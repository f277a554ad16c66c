"""The mutation suite: apply each mutant of tests/mutation/mutants.py to a scratch copy of the tree, run the
tests named beside it there, and require that they fail. Prints a table and the mutation score; exits 1 if
any mutant survives (no test noticed the break) or the unmutated tests do not pass.

    python tests/mutation/run.py            # every mutant
    python tests/mutation/run.py ratio-operands-swapped share-not-a-percent
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
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


def main(argv: list[str]) -> int:
    chosen = [m for m in MUTANTS if not argv or m[0] in argv]
    unknown = set(argv) - {m[0] for m in MUTANTS}
    if unknown:
        print(f"unknown mutant(s): {', '.join(sorted(unknown))}")
        return 2
    with tempfile.TemporaryDirectory(prefix="tutor-mutants-") as tmp:
        tree = Path(tmp)
        scratch_copy(tree)
        problems = []
        for args in sorted({tuple(m[4]) for m in chosen}):  # the unmutated tests pass, none skipped
            done = pytest(tree, list(args))
            skipped = re.search(r"(\d+) skipped", done.stdout)
            if done.returncode != 0 or skipped:
                problems.append(f"baseline {' '.join(args)}: exit {done.returncode}, "
                                f"{skipped.group(0) if skipped else 'no skips'}\n{done.stdout[-1500:]}")
        if problems:
            print("the unmutated tests must pass with nothing skipped first:\n" + "\n".join(problems))
            return 1
        rows, survivors = [], []
        for mid, rel, old, new, args in chosen:
            path = tree / rel
            original = path.read_text(encoding="utf-8")
            count = original.count(old)
            if count != 1:
                rows.append((mid, "STALE", f"the text to replace occurs {count} times in {rel}", 0.0))
                survivors.append(mid)
                continue
            path.write_text(original.replace(old, new), encoding="utf-8")
            start = time.monotonic()
            try:
                done = pytest(tree, list(args))
            finally:
                path.write_text(original, encoding="utf-8")
            took = time.monotonic() - start
            if done.returncode == 1:
                rows.append((mid, "killed", first_failure(done.stdout), took))
            else:
                rows.append((mid, "SURVIVED", f"pytest exit {done.returncode}: {' '.join(args)}", took))
                survivors.append(mid)
    width = max(len(r[0]) for r in rows)
    for mid, verdict, by, took in rows:
        print(f"{mid:{width}s}  {verdict:8s} {took:6.1f}s  {by}")
    killed = len(rows) - len(survivors)
    print(f"mutation score: {killed}/{len(rows)} mutants killed ({100 * killed / len(rows):.0f}%)")
    if survivors:
        print(f"survived: {', '.join(survivors)}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
