"""Measurement records: reading them for tests and pages, and hashing the sources they measured."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Course, Measurement


def source_digest(root: Path | str, files: list[str] | tuple[str, ...], kit: Path | None = None) -> str:
    """sha256 over the measured files, in order; a missing file hashes as missing. With `kit`, a folder
    of earlier file versions, a file found there is read from there instead (see measured_with)."""
    digest = hashlib.sha256()
    for name in files:
        path = kit / name if kit is not None and (kit / name).is_file() else Path(root) / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


PREVIOUS_KITS = "measurements/previous-kits"


def measured_with(root: Path, files: tuple[str, ...], sha256: str) -> str | None:
    """"" if the record's sources are unchanged; else the name of the kept earlier lab-kit version
    (measurements/previous-kits/<name>/ holds its files) that, with the lab's current source, gives the
    record's digest; None if neither: stale. A kept kit vouches only for the current kit files whose
    sha256 its `valid-for.txt` lists: any later kit change makes its records stale again until someone
    reviews that change and lists the new file."""
    root = Path(root)
    if source_digest(root, files) == sha256:
        return ""
    folder = root / PREVIOUS_KITS
    for kit in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        if _vouches(root, kit, files) and source_digest(root, files, kit) == sha256:
            return kit.name
    return None


def _vouches(root: Path, kit: Path, files: tuple[str, ...]) -> bool:
    listed = kit / "valid-for.txt"
    vouched = set(listed.read_text(encoding="utf-8").split()) if listed.is_file() else set()
    for name in files:
        if (kit / name).is_file():
            current = root / name
            if not current.is_file() or hashlib.sha256(current.read_bytes()).hexdigest() not in vouched:
                return False
    return True


def record_key(rec: dict[str, Any]) -> str:
    return "/".join(str(rec.get(k)) for k in ("module", "lab", "variant", "vendor"))


def records(root: Path | str, local: bool = False) -> dict[str, dict[str, Any]]:
    """key -> the newest record for it (course records, or local ones with local=True)."""
    folder = Path(root) / "measurements"
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("local/*.jsonl" if local else "*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            key = record_key(rec)
            if key not in found or str(rec.get("date")) >= str(found[key].get("date")):
                found[key] = rec
    return found


def roofline_points(course: "Course", prefix: str) -> list[tuple[str, float, float, "Measurement"]]:
    """(label, FLOP per byte, FLOP/s) for every record under the prefix that counted its bytes and FLOPs."""
    points = []
    for m in sorted(course.measurements, key=lambda m: m.key):
        if m.local or not m.key.startswith(prefix):
            continue
        flops, nbytes = m.raw.get("flops"), m.raw.get("bytes")
        ms = m.raw.get("ms") or (m.value if m.unit == "ms" else None)
        if flops and nbytes and ms:
            points.append((m.key[len(prefix):].strip("/"), flops / nbytes, flops / (ms * 1e-3), m))
    return points
