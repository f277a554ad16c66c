"""The real course: the contract holds with --strict, the site builds strictly, CURRICULUM.md is current."""

from __future__ import annotations

import re
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
def test_the_site_builds_strictly(real_site):
    # real_site (tests/conftest.py) runs `mkdocs build --strict` once per run, and fails with its errors
    assert (real_site / "index.html").is_file()


def test_axe_core_is_locked_to_one_version():
    """The accessibility tests judge pages with axe-core; a new release adds rules, so its version is
    pinned exactly in package.json, locked in package-lock.json (installed by `npm ci`), and what
    node_modules holds is that version."""
    import json

    wanted = json.loads((ROOT / "package.json").read_text())["devDependencies"]["axe-core"]
    assert wanted[0].isdigit(), f"package.json asks for axe-core {wanted!r}: pin one exact version"
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/axe-core"]["version"] == wanted
    installed = ROOT / "node_modules" / "axe-core" / "package.json"
    if installed.exists():  # absent only where npm is not installed; the browser tests then say so
        assert json.loads(installed.read_text())["version"] == wanted


def test_no_section_file_repeats_a_heading_of_its_own_level_two():
    # A subsection pasted twice (an edit that kept the old copy) shows as the same `## ` heading twice.
    import collections
    import pathlib

    repeated = []
    for path in sorted(pathlib.Path(__file__).resolve().parents[1].glob("modules/*/[1-9]-*.md")):
        heads = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("## ")]
        repeated += [f"{path.name}: {h}" for h, n in collections.Counter(heads).items() if n > 1]
    assert not repeated, repeated


def test_no_authored_text_holds_a_control_character():
    """A TeX command typed into a Python string without r"" ("\alpha", "\bmod") lands in a page as a bell or a
    backspace, which the browser drops silently: the formula then reads "lpha"."""
    control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
    found = []
    for pattern in ("modules/**/*.md", "modules/**/*.yml", "docs/**/*.md", "sheets/*.md", "cards/*.yml", "*.yml"):
        for path in ROOT.glob(pattern):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if control.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}")
    assert not found, found
