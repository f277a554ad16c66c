import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakecourse import make_course  # noqa: E402

@pytest.fixture(scope="session")
def pristine_course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("pristine") / "course")


@pytest.fixture
def course_dir(pristine_course, tmp_path) -> Path:
    """A fresh copy of the valid fake course, to break one thing in."""
    dest = tmp_path / "course"
    shutil.copytree(pristine_course, dest)
    return dest
