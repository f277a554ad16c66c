"""The labs of the real course: CUDA compiles for Hopper, HIP for CDNA, Triton and PyTorch paths verify on
the CPU, HIP mirrors CUDA, and every measurement record is valid and current."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from requirements_gate import need

from tutor_build.checks import measurements as measurement_check
from tutor_build.labs.counterparts import check_pairs
from tutor_build.load import load_course

ROOT = Path(__file__).resolve().parents[1]


def tutor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor_build.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env)


def vendors_present(vendor: str) -> bool:
    course, _ = load_course(ROOT)
    return any(vendor in lab.paths for m in course.modules for lab in m.labs)


@pytest.mark.slow
def test_cuda_labs_compile_for_hopper():
    if not vendors_present("cuda"):
        pytest.skip("no CUDA labs yet")
    need(shutil.which("nvcc") is not None, "nvcc not found: CUDA labs are not compiled here")
    done = tutor("labs", "build", "--vendor", "cuda")
    assert done.returncode == 0, done.stdout[-4000:]
    assert " 0 failed" in done.stdout
    need(" 0 skipped" in done.stdout, f"the toolchain probe skipped CUDA builds: {done.stdout[-300:]}")


@pytest.mark.slow
def test_hip_labs_compile_for_cdna():
    if not vendors_present("hip"):
        pytest.skip("no HIP labs yet")
    need(shutil.which("hipcc") is not None, "hipcc not found: HIP labs are not compiled here (apt install hipcc)")
    done = tutor("labs", "build", "--vendor", "hip")
    assert done.returncode == 0, done.stdout[-4000:]
    need(" 0 skipped" in done.stdout, f"the toolchain probe skipped HIP builds: {done.stdout[-300:]}")


@pytest.mark.slow
@pytest.mark.parametrize("vendor", ["triton", "python"])
def test_portable_labs_verify_on_the_cpu(vendor):
    if not vendors_present(vendor):
        pytest.skip(f"no {vendor} labs yet")
    import importlib.util

    need(importlib.util.find_spec("torch") is not None, "PyTorch is not installed")
    if vendor == "triton":
        need(importlib.util.find_spec("triton") is not None, "Triton is not installed")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the CPU path, even on a machine with a GPU
    done = tutor("labs", "verify", "--vendor", vendor, "--quick", env=env)
    assert done.returncode == 0, done.stdout[-4000:]
    assert "SKIP" not in done.stdout, done.stdout


def test_exercises_fail_their_checks_loudly():
    """An untouched exercise must not pass: its check is what tells a learner they are done."""
    import importlib.util

    need(importlib.util.find_spec("triton") is not None and importlib.util.find_spec("torch") is not None,
         "PyTorch and Triton are needed to run the Triton exercises")
    course, _ = load_course(ROOT)
    exercises = [f"labs/{m.id}/triton/{lab.name}_exercise.py" for m in course.modules for lab in m.labs if "triton" in lab.paths]
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(ROOT / "labs/common/python"))
    for path in exercises:
        done = subprocess.run([sys.executable, path, "--quick"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode != 0, f"{path} passes its check untouched"


def test_hip_files_mirror_cuda_files_line_for_line():
    mismatches = check_pairs(ROOT)
    assert not mismatches, "\n".join(f"{m.hip_path}:{m.line}: {m.reason}: {m.cuda_line!r} vs {m.hip_line!r}" for m in mismatches)


def test_every_measurement_record_is_valid_and_current():
    course, load_diags = load_course(ROOT)
    bad = [d for d in load_diags if d.path.startswith("measurements/")] + measurement_check.check(course)
    assert not bad, "\n".join(d.format() for d in bad)


def test_vendor_blas_is_linked_only_where_the_lab_includes_it_and_the_toolkit_has_it(tmp_path, monkeypatch):
    from tutor_build.labs import runner

    kit = tmp_path / "cuda-kit"
    (kit / "bin").mkdir(parents=True)
    (kit / "targets" / "x86_64-linux" / "include").mkdir(parents=True)
    nvcc = kit / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{kit / 'bin'}:{os.environ['PATH']}")
    lab = tmp_path / "gemm.cu"
    lab.write_text("#if __has_include(<cublas_v2.h>)\n#include <cublas_v2.h>\n#endif\n")
    plain = tmp_path / "copy.cu"
    plain.write_text("#include <cuda_runtime.h>\n")
    assert runner.blas_flags(tmp_path, "gemm.cu", "cuda") == []  # the toolkit has no cuBLAS: compile without
    (kit / "targets" / "x86_64-linux" / "include" / "cublas_v2.h").write_text("")
    assert runner.blas_flags(tmp_path, "gemm.cu", "cuda") == ["-lcublas"]
    assert runner.blas_flags(tmp_path, "copy.cu", "cuda") == []
