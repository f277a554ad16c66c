"""The CUDA and HIP lab kits' host code -- the output poison, the guard zones and the check's verdict --
compiled with a plain C++ compiler against a host-only stand-in for each runtime (tests/kit_host/), and run
here without a GPU. Host loops play the kernels; each scenario is a mistake a kernel makes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from requirements_gate import need

ROOT = Path(__file__).resolve().parents[1]
SHIM = ROOT / "tests" / "kit_host"
KITS = {"cuda": (ROOT / "labs/common/cuda", "tutor_lab.cuh"), "hip": (ROOT / "labs/common/hip", "tutor_lab.hip.h")}


def shim_for(vendor: str, folder: Path) -> Path:
    """The host-only runtime stand-in for a vendor: HIP's is CUDA's with the runtime's names changed, as
    the two kits are line-for-line counterparts."""
    if vendor == "cuda":
        return SHIM / "cuda"
    text = (SHIM / "cuda" / "cuda_runtime.h").read_text(encoding="utf-8").replace("cuda", "hip").replace("CUDA", "HIP")
    (folder / "hip").mkdir(parents=True, exist_ok=True)
    (folder / "hip" / "hip_runtime.h").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module", params=sorted(KITS))
def probe(request, tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("clang++")
    need(cxx is not None, "a C++ compiler (g++ or clang++) is needed to test the CUDA and HIP kits on the host")
    vendor = request.param
    kit_dir, header = KITS[vendor]
    work = tmp_path_factory.mktemp(vendor)
    shim, exe = shim_for(vendor, work / "include"), work / "kit_probe"
    # A plain C++ compiler cannot read a kernel launch (`kernel<<<grid, block>>>(args)`): the kit is
    # compiled from a copy whose launches are plain calls; the code under test here launches nothing.
    kit_copy = work / "kit"
    kit_copy.mkdir()
    text = (kit_dir / header).read_text(encoding="utf-8")
    (kit_copy / header).write_text(re.sub(r"(\w+)<<<[^;]*?>>>\(", r"\1(", text), encoding="utf-8")
    kit_dir = kit_copy
    done = subprocess.run([cxx, "-std=c++17", "-O1", f"-I{shim}", f"-I{kit_dir}", f'-DKIT_HEADER="{header}"',
                           f"-DRT(x)={vendor}##x", str(SHIM / "kit_probe.cpp"), "-o", str(exe)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]

    def run(scenario: str) -> tuple[int, list[dict]]:
        out = subprocess.run([str(exe), scenario], capture_output=True, text=True, timeout=60)
        return out.returncode, [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]

    return run


def test_outputs_start_poisoned(probe):
    rc, _ = probe("poisoned")
    assert rc == 0, "an output buffer is not all 0xFF bytes after tutor::poison"


def test_a_correct_kernel_passes(probe):
    rc, events = probe("correct")
    assert rc == 0 and events[0]["ok"] is True and events[0]["mismatches"] == 0
    assert events[-1] == {"event": "summary", "lab": "probe", "failures": 0}


def test_unwritten_elements_are_named_as_never_written(probe):
    rc, events = probe("first_row_only")
    check = events[0]
    assert rc == 1 and check["ok"] is False and check["cause"] == "never_written"
    assert check["never_written"] == 3 and check["nan"] == 3 and check["first_bad"] == [1, 0]
    assert events[-1]["failures"] == 1


def test_a_write_past_the_end_names_the_buffer_and_index(probe):
    rc, events = probe("one_past_the_end")
    check = events[0]
    assert rc == 1 and check["cause"] == "guard_written" and check["mismatches"] == 0
    assert check["guard_written"] == ["wrote 1 element past the end of y (index 6; y has 6 elements, 0..5)"]


def test_a_write_before_the_start_is_named(probe):
    rc, events = probe("one_before_the_start")
    assert rc == 1 and events[0]["guard_written"] == [
        "wrote 1 element before the start of y (index -1; y has 6 elements, 0..5)"]


def test_a_value_read_past_an_input_is_named(probe):
    rc, events = probe("read_past_the_input")
    check = events[0]
    assert rc == 1 and check["cause"] == "from_guard" and check["from_guard"] == 1
    assert check["first_bad"] == [1, 2]  # the last element read x[6], the guard word


def test_a_wrong_value_is_judged_by_the_tolerance(probe):
    rc, events = probe("off_by_a_little")  # 1e-3 off with atol = rtol = 1e-5
    check = events[0]
    assert rc == 1 and check["cause"] == "wrong_value" and check["wrong_value"] == 6
    assert check["max_abs_err"] == pytest.approx(1e-3, rel=1e-3)
