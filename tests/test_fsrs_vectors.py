"""The FSRS vectors on disk are what the reference `fsrs` package produces today."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("fsrs", reason="the reference `fsrs` package is not installed")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _generator():
    spec = importlib.util.spec_from_file_location("gen_fsrs_vectors", TESTS / "gen_fsrs_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vectors_match_reference_package():
    gen = _generator()
    on_disk = json.loads((TESTS / "vectors" / "fsrs.json").read_text(encoding="utf-8"))
    fresh = json.loads(gen.dumps(gen.generate()))
    assert on_disk["parameters"] == fresh["parameters"]
    assert [s["name"] for s in on_disk["sequences"]] == [s["name"] for s in fresh["sequences"]]
    for old, new in zip(on_disk["sequences"], fresh["sequences"]):
        assert old == new, f"sequence {old['name']} differs; rerun tests/gen_fsrs_vectors.py"


def test_vectors_cover_every_state_and_rating():
    data = json.loads((TESTS / "vectors" / "fsrs.json").read_text(encoding="utf-8"))
    reviews = [r for s in data["sequences"] for r in s["reviews"]]
    assert {r["state"] for r in reviews} == {1, 2, 3}
    assert {r["rating"] for r in reviews} == {1, 2, 3, 4}
    assert any(r["elapsed_seconds"] >= 365 * 86400 for r in reviews)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_scheduler_matches_vectors():
    result = subprocess.run(["node", "--test", str(TESTS / "js" / "fsrs.test.js")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
