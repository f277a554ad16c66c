"""The players' shared vectors and JS presets equal a fresh generation from the Python
models, and every JavaScript model reproduces the vectors (node --test tests/js/)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tutor_build.models import vectors

ROOT = Path(__file__).resolve().parent.parent


def test_vectors_file_is_fresh():
    assert vectors.VECTORS.read_text(encoding="utf-8") == vectors.dumps_vectors(), \
        "tests/vectors/players.json is stale: run python -m tutor_build.models.vectors"


def test_presets_file_is_fresh():
    assert vectors.PRESETS.read_text(encoding="utf-8") == vectors.dumps_presets(), \
        "docs/assets/js/players/presets.js is stale: run python -m tutor_build.models.vectors"


def test_vectors_cover_every_player_and_clamping():
    data = vectors.generate()
    assert len(data["players"]) == 12
    for name, rows in data["players"].items():
        assert any(r["output"]["clamped"] for r in rows), f"{name}: no out-of-range case"
        assert any(not r["output"]["clamped"] for r in rows), f"{name}: no in-range case"


def test_js_models_match_vectors():
    if shutil.which("node") is None:
        if os.environ.get("TUTOR_REQUIRE_ALL") == "1":
            pytest.fail("node is not installed (TUTOR_REQUIRE_ALL=1)")
        pytest.skip("node is not installed: the JavaScript models are not checked")
    result = subprocess.run(["node", "--test", "tests/js/"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
