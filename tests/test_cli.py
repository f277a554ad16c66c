"""`tutor check`: compiler-style lines, exit codes, JSON summary, no tracebacks on broken input."""

from __future__ import annotations

import json
import subprocess
import sys


def tutor(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor_build.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_clean_course_exits_zero(pristine_course):
    done = tutor("check", str(pristine_course))
    assert done.returncode == 0, done.stdout
    assert done.stdout == ""


def test_errors_are_sorted_lines_and_exit_one(course_dir):
    (course_dir / "modules/A01-fake-basics/module.yml").write_text("id: A01\ntitle: [broken\n")
    (course_dir / "modules/A02-fake-coalescing/6-tradeoffs.md").write_text("Nothing here.\n")
    done = tutor("check", str(course_dir))
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines == sorted(lines, key=lambda line: (line.split(":")[0], int(line.split(":")[1])))
    assert "modules/A01-fake-basics/module.yml:2: E001 malformed YAML" in done.stdout
    assert "modules/A02-fake-coalescing/6-tradeoffs.md:1: E362" in done.stdout


def test_strict_fails_on_warnings_only_when_asked(course_dir):
    cu = course_dir / "labs/A01/cuda/vec.cu"
    hip = course_dir / "labs/A01/hip/vec.hip"
    cu.write_text(cu.read_text() + "// tuned\n")
    hip.write_text(hip.read_text() + "// tuned\n")
    assert tutor("check", str(course_dir)).returncode == 0
    strict = tutor("check", str(course_dir), "--strict")
    assert strict.returncode == 1 and "W705 stale record A01/vec/kernel/cuda" in strict.stdout


def test_a_planned_module_is_reported_but_does_not_fail_strict(course_dir):
    (course_dir / "curriculum.yml").write_text((course_dir / "curriculum.yml").read_text() + "planned:\n  A05: Reductions\n")
    prod = course_dir / "modules/A01-fake-basics/7-production.md"
    prod.write_text(prod.read_text() + "\nA05 builds on this.\n")
    strict = tutor("check", str(course_dir), "--strict")
    assert strict.returncode == 0 and "W110 mentions A05 (Reductions)" in strict.stdout
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(course_dir / "site")],
                           cwd=course_dir, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    assert "A05 (planned)" in (course_dir / "site/modules/A01-fake-basics/index.html").read_text()


def test_json_summary(pristine_course):
    done = tutor("check", str(pristine_course), "--format", "json")
    data = json.loads(done.stdout)
    a01 = data["modules"][0]
    assert data["errors"] == 0 and a01["id"] == "A01"
    assert all(a01["rules"].values())
    assert a01["words"]["analogy"] >= 150 and a01["cards"] == 8
    assert a01["labs"] == [{"name": "vec", "paths": ["cuda", "hip", "triton"]}]


def test_root_defaults_to_current_directory(pristine_course):
    assert tutor("check", cwd=pristine_course).returncode == 0


def test_not_utf8_is_a_diagnostic(course_dir):
    (course_dir / "modules/A01-fake-basics/7-production.md").write_bytes(b"PyTorch\n\xff\xfe\n")
    done = tutor("check", str(course_dir))
    assert "modules/A01-fake-basics/7-production.md:2: E002 file is not valid UTF-8" in done.stdout
    assert "Traceback" not in done.stderr
