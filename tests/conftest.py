import os
import shutil
import sys
from pathlib import Path

import pytest

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
    SKIPPED.append(f"{item.nodeid}: {reason}")
    if REQUIRE_ALL:
        report.outcome = "failed"
        report.longrepr = f"skipped under TUTOR_REQUIRE_ALL=1, which makes every skip a failure: {reason}"


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

@pytest.fixture(scope="session")
def pristine_course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("pristine") / "course")


@pytest.fixture
def course_dir(pristine_course, tmp_path) -> Path:
    """A fresh copy of the valid fake course, to break one thing in."""
    dest = tmp_path / "course"
    shutil.copytree(pristine_course, dest)
    return dest
