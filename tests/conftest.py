import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
# The tree under test, not wherever the virtual environment's editable install points: first on this
# process's path, and on every subprocess's (the CLI, mkdocs and the labs that tests start).
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)

from fakecourse import make_course  # noqa: E402

REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"
SKIPPED: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under TUTOR_REQUIRE_ALL=1 (CI) a skip of any kind -- a missing tool, package or record, an
    importorskip, a skipif -- is a failure: CI has everything, so a skip there hides a test that did not run."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    # Carried on the report, so that the run's summary lists it: under pytest-xdist this hook runs in a
    # worker, and only the report reaches the process that prints the summary (pytest_runtest_logreport).
    report.user_properties.append(("tutor_skipped", f"{item.nodeid}: {reason}"))
    if REQUIRE_ALL:
        report.outcome = "failed"
        report.longrepr = f"skipped under TUTOR_REQUIRE_ALL=1, which makes every skip a failure: {reason}"


def pytest_runtest_logreport(report):
    SKIPPED.extend(value for name, value in report.user_properties if name == "tutor_skipped")


def pytest_collectreport(report):
    """A module-level skip (importorskip at import time) never reaches the test hook: count it here; under
    TUTOR_REQUIRE_ALL=1 it fails the session (pytest_sessionfinish)."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        SKIPPED.append(f"{report.nodeid} (whole file): {reason}")
        WHOLE_FILES_SKIPPED.append(report.nodeid)


WHOLE_FILES_SKIPPED: list[str] = []


def pytest_sessionfinish(session, exitstatus):
    if REQUIRE_ALL and WHOLE_FILES_SKIPPED and exitstatus in (0, 5):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    mode = "each one failed (TUTOR_REQUIRE_ALL=1)" if REQUIRE_ALL else "set TUTOR_REQUIRE_ALL=1 to fail them"
    for line in SKIPPED:
        terminalreporter.write_line(f"  skipped: {line}")
    terminalreporter.write_line(f"skipped tests: {len(SKIPPED)} ({mode})")


# ---------------------------------------------------------------- one build per run, under pytest-xdist too

def run_tmp(tmp_path_factory) -> Path:
    """A folder of this test run that every pytest-xdist worker shares: the workers' base folders are
    siblings in it. Without xdist, the run's own base folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build: Callable[[Path], str]) -> Path:
    """`build(dest)` run once per test run, whichever worker asks first; the others wait on a file lock and
    reuse what it built. `build` returns "" on success, else the error that every test asking for it fails
    with (the failure is recorded, so a broken build is not tried again by each worker)."""
    shared = run_tmp(tmp_path_factory)
    dest, outcome = shared / name, shared / f"{name}.outcome"
    with FileLock(str(shared / f"{name}.lock")):
        if not outcome.exists():
            error = build(dest)
            outcome.write_text(error or "", encoding="utf-8")
        error = outcome.read_text(encoding="utf-8")
    if error:
        pytest.fail(error)
    return dest


@pytest.fixture(scope="session")
def real_site(tmp_path_factory) -> Path:
    """The real course's site, built with `mkdocs build --strict` once per run (the browser tests read and
    serve it; tests/test_repo.py requires that it builds)."""

    def build(dest: Path) -> str:
        done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(dest)], cwd=ROOT,
                              capture_output=True, text=True, timeout=900)
        if done.returncode == 0 and (dest / "index.html").is_file():
            return ""
        return f"mkdocs build --strict failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-5000:]}"

    return built_once(tmp_path_factory, "real-site", build)


@pytest.fixture(scope="session")
def pristine_course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("pristine") / "course")


@pytest.fixture
def course_dir(pristine_course, tmp_path) -> Path:
    """A fresh copy of the valid fake course, to break one thing in."""
    dest = tmp_path / "course"
    shutil.copytree(pristine_course, dest)
    return dest
