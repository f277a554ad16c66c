"""The learner's own progress: a passing `tutor labs verify --exercise` is recorded in
measurements/local/progress.json (ignored by git, beside the learner's own benchmark results)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

PROGRESS = "measurements/local/progress.json"


def load(root: Path) -> dict[str, dict]:
    """lab name (`A01/vector_add/triton`) -> {"date": ..., "exercise": path}; {} if none or unreadable."""
    try:
        data = json.loads((root / PROGRESS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(root: Path, data: dict[str, dict]) -> None:
    path = root / PROGRESS
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)  # never a half-written file


def record(root: Path, name: str, exercise: str) -> None:
    data = load(root)
    data[name] = {"date": dt.datetime.now(dt.timezone.utc).date().isoformat(), "exercise": exercise}
    _save(root, data)


def forget(root: Path, name: str) -> None:
    """A later failing verify of the same exercise: it is no longer done."""
    data = load(root)
    if data.pop(name, None) is not None:
        _save(root, data)


def modules_done(root: Path, labs_by_module: dict[str, list[str]]) -> dict[str, dict]:
    """module id -> {"done": labs passed in at least one vendor, "total": labs}: what the planner shows."""
    passed = {name.rsplit("/", 1)[0] for name in load(root)}
    return {m: {"done": sum(f"{m}/{lab}" in passed for lab in labs), "total": len(labs)}
            for m, labs in labs_by_module.items()}
