"""The real course: the contract holds with --strict, the site builds strictly, CURRICULUM.md is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_course_passes_its_own_contract_strictly():
    done = subprocess.run([sys.executable, "-m", "tutor_build.cli", "check", "--strict"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-5000:]


def test_curriculum_md_is_up_to_date():
    done = subprocess.run([sys.executable, "-m", "tutor_build.cli", "curriculum", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").is_file()
