"""Measurement records: reading them for tests and pages, and hashing the sources they measured."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .diagnostics import Diagnostic
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


# ---------------------------------------------------------------- plot declarations (labs/<MODULE>/plots.yml)

PLOTS_FILE = "labs/{module}/plots.yml"
VENDOR_LABELS = {"cuda": "CUDA", "hip": "HIP", "triton": "Triton", "python": "Python"}
VENDOR_ORDER = tuple(VENDOR_LABELS)


@dataclass(frozen=True)
class PlotDecl:
    """How one lab's records are plotted: its variants in the lab's own (ladder) order, each with the label a
    reader sees, and the sentence that says what was measured. Declared in labs/<MODULE>/plots.yml."""

    module: str
    lab: str
    path: str  # labs/<MODULE>/plots.yml
    line: int  # the line of the lab's entry
    variants: tuple[tuple[str, str, int], ...]  # (variant id, label, line)
    what: str = ""  # what was measured, for the caption
    axis: str = ""  # the measured quantity, for the axis title ("bandwidth", "time per decode step")
    mark: str = ""  # what the tick on each bar is, when each record carries its own prediction

    def label(self, variant: str) -> str | None:
        return next((label for vid, label, _ in self.variants if vid == variant), None)

    def rank(self, variant: str) -> int:
        """Position in the ladder; variants not declared come after every declared one."""
        return next((i for i, (vid, _, _) in enumerate(self.variants) if vid == variant), len(self.variants))


def plot_declarations(root: Path | str, module: str) -> tuple[dict[str, PlotDecl], list["Diagnostic"]]:
    """lab -> its declaration, from labs/<module>/plots.yml (none if the file is absent), and the problems
    found in the file's shape (E509). Never raises."""
    from .diagnostics import error
    from .yamlio import LineDict, load_yaml

    rel_path = PLOTS_FILE.format(module=module)
    path = Path(root) / rel_path
    if not path.is_file():
        return {}, []
    data, diags = load_yaml(path, rel_path)
    if data is None:
        return {}, diags
    if not isinstance(data, LineDict):
        return {}, diags + [error(rel_path, 1, "E509", "plots.yml maps each lab to {what, axis, variants: {id: label}}")]
    found: dict[str, PlotDecl] = {}
    for lab, spec in data.items():
        line = data.line_of(lab)
        variants = spec.get("variants") if isinstance(spec, LineDict) else None
        if not isinstance(variants, LineDict) or not variants:
            diags.append(error(rel_path, line, "E509", f"lab {lab!r} needs `variants:`, a mapping of variant id to label in ladder order"))
            continue
        listed = []
        for vid, label in variants.items():
            if not isinstance(label, str) or not label.strip():
                diags.append(error(rel_path, variants.line_of(vid), "E509", f"variant {vid!r} of {lab!r} needs a label a reader can read"))
                continue
            listed.append((str(vid), " ".join(label.split()), variants.line_of(vid)))
        extra = {k: " ".join(str(spec.get(k, "")).split()) for k in ("what", "axis", "mark")}
        found[str(lab)] = PlotDecl(module, str(lab), rel_path, line, tuple(listed), **extra)
    return found, diags


def plot_declaration(root: Path | str, module: str, lab: str) -> PlotDecl | None:
    path = Path(root) / PLOTS_FILE.format(module=module)
    stamp = path.stat().st_mtime_ns if path.is_file() else 0
    return _declarations(str(root), module, stamp)[0].get(lab)


@functools.lru_cache(maxsize=64)
def _declarations(root: str, module: str, stamp: int) -> tuple[dict[str, PlotDecl], list["Diagnostic"]]:
    """Read once per version of the file (`stamp`, its mtime): a page asks for each record's label."""
    return plot_declarations(root, module)


def plotted_records(course: "Course", prefix: str) -> list["Measurement"]:
    """The newest course record of every key under the prefix, in the lab's order: vendor by vendor (CUDA,
    HIP, Triton, Python), each vendor's variants in the order of labs/<MODULE>/plots.yml; variants it does
    not declare come last, in the order of their ids."""
    newest: dict[str, "Measurement"] = {}
    for m in course.measurements:
        if m.local or not m.key.startswith(prefix) or m.raw.get("kind") == "counter":  # counters are no bars
            continue
        if m.key not in newest or m.date >= newest[m.key].date:
            newest[m.key] = m
    recs = list(newest.values())
    decls: dict[tuple[str, str], PlotDecl | None] = {}
    for m in recs:
        ml = (str(m.raw.get("module", "")), str(m.raw.get("lab", "")))
        if ml not in decls:
            decls[ml] = plot_declaration(course.root, *ml)

    def order(m: "Measurement") -> tuple:
        ml = (str(m.raw.get("module", "")), str(m.raw.get("lab", "")))
        vendor, variant = str(m.raw.get("vendor", "")), str(m.raw.get("variant", ""))
        decl = decls.get(ml)
        vrank = VENDOR_ORDER.index(vendor) if vendor in VENDOR_ORDER else len(VENDOR_ORDER)
        return (ml, vrank, vendor, decl.rank(variant) if decl else 0, variant)

    return sorted(recs, key=order)


def variant_label(course: "Course", m: "Measurement") -> str:
    """The reader's name of a record's variant: its label in plots.yml, else the id made readable."""
    decl = plot_declaration(course.root, str(m.raw.get("module", "")), str(m.raw.get("lab", "")))
    variant = str(m.raw.get("variant", m.key))
    label = decl.label(variant) if decl else None
    return label or variant.replace("_", " ")


def vendor_label(vendor: str) -> str:
    return VENDOR_LABELS.get(vendor, vendor)
