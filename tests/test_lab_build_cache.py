"""The lab runner builds a lab once per version of what it is made from: verify, bench and profile each ask
for a build, and a binary made by the same command from the same lab, sibling and kit files is used again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tutor_build.labs import runner
from tutor_build.labs.toolchains import Toolchains

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Toolchains(nvcc="fake nvcc", hipcc="", nvidia_gpu="", amd_gpu="", torch="", triton="")


def _course(tmp_path: Path) -> Path:
    (tmp_path / "labs/X01/cuda").mkdir(parents=True)
    (tmp_path / "labs/common/cuda").mkdir(parents=True)
    (tmp_path / "labs/X01/cuda/lab.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "labs/X01/cuda/helper.cu").write_text("// included by lab.cu\n")
    (tmp_path / "labs/common/cuda/tutor_lab.cuh").write_text("// kit v1\n")
    return tmp_path


def _fake_compiler(monkeypatch) -> list[list[str]]:
    calls = []

    def run(cmd, cwd=None, **kwargs):
        calls.append(cmd)
        out = Path(cwd) / cmd[cmd.index("-o") + 1]
        out.write_text("binary\n")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(runner.subprocess, "run", run)
    return calls


def test_a_lab_is_compiled_again_only_when_a_file_it_is_made_from_changes(tmp_path, monkeypatch):
    root = _course(tmp_path)
    calls = _fake_compiler(monkeypatch)
    target = runner.LabTarget("X01", "lab", "cuda")
    assert runner.build(root, target, TOOLS).ok and len(calls) == 1
    assert runner.build(root, target, TOOLS).ok and len(calls) == 1  # same files, same command: reused
    (root / "labs/common/cuda/tutor_lab.cuh").write_text("// kit v2\n")
    assert runner.build(root, target, TOOLS).ok and len(calls) == 2  # the kit changed
    (root / "labs/X01/cuda/helper.cu").write_text("// changed\n")
    assert runner.build(root, target, TOOLS).ok and len(calls) == 3  # a file the lab includes changed
    assert runner.build(root, target, TOOLS, cuda_arch="native").ok and len(calls) == 4  # another command
    assert runner.build(root, target, TOOLS).ok and len(calls) == 5  # and back: the last binary was native's
    (root / target.binary()).unlink()
    assert runner.build(root, target, TOOLS).ok and len(calls) == 6  # no binary: built


def test_a_failed_build_leaves_no_key(tmp_path, monkeypatch):
    root = _course(tmp_path)
    calls = []

    def fail(cmd, cwd=None, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "lab.cu(1): error: broken\n")

    monkeypatch.setattr(runner.subprocess, "run", fail)
    target = runner.LabTarget("X01", "lab", "cuda")
    (root / target.binary()).parent.mkdir(parents=True, exist_ok=True)
    (root / target.binary()).write_text("an old binary\n")
    assert not runner.build(root, target, TOOLS).ok
    assert not runner.build(root, target, TOOLS).ok and len(calls) == 2  # never reused after a failure


def test_the_lab_commands_run_without_nbformat():
    """The GPU machines that run the labs need not have the site's notebook package."""
    code = ("import sys; sys.modules['nbformat'] = None; "
            "from tutor_build.cli import build_parser; build_parser().parse_args(['labs', 'list'])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
