import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakecourse import make_course  # noqa: E402

REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"


def need(condition: bool, reason: str) -> None:
    """Skip with the reason on a learner's machine; fail in CI, where every toolchain is required."""
    if condition:
        return
    if REQUIRE_ALL:
        pytest.fail(f"required in CI (TUTOR_REQUIRE_ALL=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pristine_course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("pristine") / "course")


@pytest.fixture
def course_dir(pristine_course, tmp_path) -> Path:
    """A fresh copy of the valid fake course, to break one thing in."""
    dest = tmp_path / "course"
    shutil.copytree(pristine_course, dest)
    return dest
