"""Runs the held-out mutants of tests/mutants/labs.py on this machine's GPU: the Triton ones compiled for the
GPU (guard zones only: there is no interpreter to watch each access) and the CUDA ones. Prints, for each,
whether `tutor labs verify` caught it and the first lines of what it said. Usage: python3 bench/gpu_mutants.py"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/mutants"))
from labs import CUDA_MUTANTS, MUTANTS  # noqa: E402


def main() -> int:
    scratch = Path(tempfile.mkdtemp()) / "course"
    shutil.copytree(ROOT, scratch, ignore=shutil.ignore_patterns(".git", "build", "site", "__pycache__"))
    missed = 0
    for mid, path, old, new, phrase in MUTANTS + CUDA_MUTANTS:
        f = scratch / path
        original = f.read_text(encoding="utf-8")
        f.write_text(original.replace(old, new, 1), encoding="utf-8")
        vendor = "cuda" if path.endswith(".cu") else "triton"
        done = subprocess.run([sys.executable, "-m", "tutor_build.cli", "labs", "verify", path.split("/")[1],
                               Path(path).stem, "--vendor", vendor, "--root", str(scratch)],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(scratch)))
        f.write_text(original, encoding="utf-8")
        out = done.stdout + done.stderr
        caught = done.returncode == 1 and "Traceback" not in out and not any(
            ln.startswith("ok ") for ln in out.splitlines())
        missed += not caught
        print(f"{'CAUGHT' if caught else 'MISSED'} {mid} ({vendor}, exit {done.returncode}, "
              f"names the cause: {'yes' if phrase in out else 'no'})")
        for line in out.splitlines()[1:9]:
            print(f"    {line[:220]}")
    print(f"{missed} missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
