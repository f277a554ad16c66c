"""Disk -> Course. Loading never raises on bad content: it records a Diagnostic and keeps going."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, error
from .model import (
    Erratum,
    FigureSpec,
    GlossaryEntry,
    LAB_PATHS,
    SECTION_SPECS,
    Card,
    Course,
    Hours,
    LabSpec,
    LearningPath,
    Measurement,
    Module,
    Reference,
    Section,
    Sheet,
    SourceRef,
)
from .yamlio import LineDict, LineList, load_yaml, read_text

MODULE_DIR = re.compile(r"^(?P<id>[A-D]\d\d)-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)$")
DEFAULT_TRACKS = {
    "A": "GPU foundations",
    "B": "ML numerics and parallelism",
    "C": "LLM systems, training and serving",
    "D": "Expert kernels and portability",
}


def rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _str(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(_str(v) for v in value if isinstance(v, (str, int, float)))
    return ()


def _lab_specs(raw: Any, path: str) -> tuple[LabSpec, ...]:
    specs = []
    if not isinstance(raw, LineList):
        return ()
    for i, item in enumerate(raw):
        line = raw.line_of(i)
        if isinstance(item, str):
            specs.append(LabSpec(item, ("cuda", "hip", "triton"), SourceRef(path, line)))
        elif isinstance(item, dict):
            paths = _strings(item.get("paths")) or ("cuda", "hip", "triton")
            specs.append(LabSpec(_str(item.get("name")), paths, SourceRef(path, line)))
    return tuple(specs)


def load_figures(root: Path, folder: Path) -> tuple[tuple[FigureSpec, ...], str, list[Diagnostic]]:
    """modules/<ID>/figures.yml: a list of {id, draw, args, alt, caption}; the checks judge the contents."""
    path = folder / "figures.yml"
    if not path.is_file():
        return (), "", []
    path_rel = rel(root, path)
    raw, diags = load_yaml(path, path_rel)
    if raw is None:
        return (), path_rel, diags
    if not isinstance(raw, LineList):
        return (), path_rel, diags + [error(path_rel, 1, "E901", "figures.yml must be a list of figures")]
    figures = []
    for i, item in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(item, LineDict):
            diags.append(error(path_rel, line, "E901", "each figure is a mapping with id, draw, alt and caption"))
            continue
        args = item.get("args") if isinstance(item.get("args"), dict) else {}
        figures.append(FigureSpec(id=_str(item.get("id")), draw=_str(item.get("draw")), args=dict(args),
                                  alt=_str(item.get("alt")), caption=_str(item.get("caption")),
                                  ref=SourceRef(path_rel, line)))
    return tuple(figures), path_rel, diags


ERRATA_PLACES = ("module", "cards", "labs", "figures")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def load_errata(root: Path, folder: Path) -> tuple[tuple[Erratum, ...], list[Diagnostic]]:
    """modules/<ID>/errata.yml: a list of {date, section, wrong, right, cite?}; E114 for each malformed entry
    (citation keys are judged with the other citations, E115)."""
    path = folder / "errata.yml"
    if not path.is_file():
        return (), []
    path_rel = rel(root, path)
    raw, diags = load_yaml(path, path_rel)
    if raw is None:
        return (), diags
    if not isinstance(raw, LineList):
        return (), diags + [error(path_rel, 1, "E114", "errata.yml must be a list of {date, section, wrong, right, cite}")]
    places = set(ERRATA_PLACES) | {s.filename.removesuffix(".md") for s in SECTION_SPECS}
    out = []
    for i, item in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(item, LineDict):
            diags.append(error(path_rel, line, "E114", "each erratum is a mapping {date, section, wrong, right, cite}"))
            continue
        date = str(item.get("date", ""))  # YAML reads 2026-12-01 as a date
        problems = []
        if not DATE.match(date):
            problems.append(f"date must be YYYY-MM-DD, not {item.get('date')!r}")
        if _str(item.get("section")) not in places:
            problems.append(f"section {item.get('section')!r} is none of {', '.join(sorted(places))}")
        for key in ("wrong", "right"):
            if not _str(item.get(key)):
                problems.append(f"an erratum needs `{key}`: what the page said and what is right")
        cite = item.get("cite", [])
        if not isinstance(cite, list) or not all(isinstance(c, str) for c in cite):
            problems.append("cite must be a list of bibliography keys")
            cite = []
        diags += [error(path_rel, line, "E114", p) for p in problems]
        if not problems:
            out.append(Erratum(date, _str(item.get("section")), " ".join(_str(item.get("wrong")).split()),
                               " ".join(_str(item.get("right")).split()), tuple(cite), SourceRef(path_rel, line)))
    return tuple(out), diags


def load_module(root: Path, folder: Path) -> tuple[Module | None, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    folder_rel = rel(root, folder)
    meta_path = folder / "module.yml"
    meta_rel = rel(root, meta_path)
    if not meta_path.is_file():
        return None, [error(folder_rel, 1, "E100", "module folder has no module.yml")]
    raw, parse_diags = load_yaml(meta_path, meta_rel)
    diags += parse_diags
    if raw is not None and not isinstance(raw, LineDict):
        diags.append(error(meta_rel, 1, "E001", "module.yml must be a mapping of keys to values"))
        raw = None
    if raw is None:  # already reported; the metadata check stays quiet rather than repeat it
        raw = LineDict()
        raw.broken = True
    hours = raw.get("hours") if isinstance(raw.get("hours"), dict) else {}
    sections = []
    for spec in SECTION_SPECS:
        path = folder / spec.filename
        if path.is_file():
            text, read_diags = read_text(path, rel(root, path))
            diags += read_diags
            sections.append(Section(spec, rel(root, path), text or ""))
    figures, figures_path, figure_diags = load_figures(root, folder)
    diags += figure_diags
    errata, errata_diags = load_errata(root, folder)
    diags += errata_diags
    match = MODULE_DIR.match(folder.name)
    module = Module(
        id=_str(raw.get("id")) or (match.group("id") if match else folder.name),
        title=_str(raw.get("title")),
        track=_str(raw.get("track")),
        summary=_str(raw.get("summary")),
        hours=Hours(_num(hours.get("read")), _num(hours.get("lab")), _num(hours.get("drill"))),
        prerequisites=_strings(raw.get("prerequisites")),
        concepts=_strings(raw.get("concepts")),
        headline=_str(raw.get("headline")),
        labs=_lab_specs(raw.get("labs"), meta_rel),
        vendor_scope=_str(raw.get("vendor_scope")) or "both",
        counterpart=_str(raw.get("counterpart")),
        player=_str(raw.get("player")),
        folder=folder_rel,
        sections=tuple(sections),
        ref=SourceRef(meta_rel, 1),
        raw=raw,
        figures=figures,
        figures_path=figures_path,
        errata=errata,
    )
    return module, diags


def load_cards(root: Path) -> tuple[list[Card], list[Diagnostic]]:
    cards: list[Card] = []
    diags: list[Diagnostic] = []
    for path in sorted((root / "cards").glob("*.yml")):
        path_rel = rel(root, path)
        data, parse_diags = load_yaml(path, path_rel)
        diags += parse_diags
        if data is None:
            continue
        if not isinstance(data, LineList):
            diags.append(error(path_rel, 1, "E502", "a card file must be a list of cards"))
            continue
        for i, item in enumerate(data):
            line = data.line_of(i)
            if not isinstance(item, dict):
                diags.append(error(path_rel, line, "E502", "a card must be a mapping with id, q, a, cite, section"))
                continue
            cards.append(
                Card(
                    id=_str(item.get("id")),
                    module=path.stem,
                    q=_str(item.get("q")),
                    a=_str(item.get("a")),
                    cite=_str(item.get("cite")),
                    section=_str(item.get("section")),
                    ref=SourceRef(path_rel, line),
                )
            )
    return cards, diags


REFERENCE_FIELDS = {"title", "author", "year", "url", "doi", "arxiv", "note", "publisher", "venue"}


def load_references(root: Path) -> tuple[dict[str, Reference], list[Diagnostic]]:
    path = root / "references.yml"
    if not path.is_file():
        return {}, []
    data, diags = load_yaml(path, "references.yml")
    refs: dict[str, Reference] = {}
    if data is None:
        return refs, diags
    if not isinstance(data, LineDict):
        return refs, diags + [error("references.yml", 1, "E603", "the bibliography must map keys to entries")]
    for key, entry in data.items():
        line = data.line_of(key)
        if not isinstance(entry, dict):
            diags.append(error("references.yml", line, "E603", f"entry '{key}' must be a mapping"))
            continue
        for unknown in sorted(set(entry) - REFERENCE_FIELDS):
            diags.append(error("references.yml", entry.line_of(unknown), "E604", f"entry '{key}' has unknown field '{unknown}'"))
        refs[str(key)] = Reference(
            key=str(key),
            title=_str(entry.get("title")),
            author=_str(entry.get("author")),
            year=_str(entry.get("year")),
            url=_str(entry.get("url")),
            doi=_str(entry.get("doi")),
            arxiv=_str(entry.get("arxiv")),
            note=_str(entry.get("note")),
            ref=SourceRef("references.yml", line),
        )
    return refs, diags


MEASUREMENT_FIELDS = ("module", "lab", "variant", "vendor", "gpu", "toolkit", "date", "metric", "value", "unit",
                      "ceiling", "source_sha256")


def load_measurements(root: Path) -> tuple[list[Measurement], list[Diagnostic]]:
    records: list[Measurement] = []
    diags: list[Diagnostic] = []
    folder = root / "measurements"
    files = [(p, False) for p in sorted(folder.glob("*.jsonl"))] + [(p, True) for p in sorted(folder.glob("local/*.jsonl"))]
    for path, local in files:
        path_rel = rel(root, path)
        text, read_diags = read_text(path, path_rel)
        diags += read_diags
        for lineno, line in enumerate((text or "").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                diags.append(error(path_rel, lineno, "E701", f"malformed JSON record: {exc.msg}"))
                continue
            if not isinstance(rec, dict):
                diags.append(error(path_rel, lineno, "E701", "a record must be a JSON object"))
                continue
            missing = [f for f in MEASUREMENT_FIELDS if f not in rec]
            ceiling = rec.get("ceiling")
            if missing or not isinstance(ceiling, dict) or not isinstance(rec.get("value"), (int, float)):
                what = ", ".join(missing) if missing else "a numeric value and a ceiling {name, value, unit}"
                diags.append(error(path_rel, lineno, "E704", f"record lacks {what}"))
                continue
            source = rec.get("source") or []
            records.append(
                Measurement(
                    key="/".join(str(rec[k]) for k in ("module", "lab", "variant", "vendor")),
                    metric=str(rec["metric"]),
                    value=float(rec["value"]),
                    unit=str(rec["unit"]),
                    gpu=str(rec["gpu"]),
                    toolkit=str(rec["toolkit"]),
                    date=str(rec["date"]),
                    ceiling_name=str(ceiling.get("name", "")),
                    ceiling_value=_num(ceiling.get("value")),
                    ceiling_unit=str(ceiling.get("unit", "")),
                    source=tuple(source) if isinstance(source, list) else (str(source),),
                    source_sha256=str(rec["source_sha256"]),
                    local=local,
                    ref=SourceRef(path_rel, lineno),
                    raw=rec,
                )
            )
    return records, diags


def load_curriculum(root: Path) -> tuple[dict[str, str], list[LearningPath], dict[str, str], list[Diagnostic]]:
    """Tracks, learning paths, and the planned modules (id -> title) of curriculum.yml."""
    path = root / "curriculum.yml"
    if not path.is_file():
        return dict(DEFAULT_TRACKS), [], {}, []
    data, diags = load_yaml(path, "curriculum.yml")
    if not isinstance(data, LineDict):
        return dict(DEFAULT_TRACKS), [], {}, diags
    tracks = data.get("tracks") if isinstance(data.get("tracks"), dict) else DEFAULT_TRACKS
    paths = []
    raw_paths = data.get("paths") if isinstance(data.get("paths"), LineList) else LineList()
    for i, item in enumerate(raw_paths):
        if isinstance(item, dict):
            paths.append(LearningPath(_str(item.get("id")), _str(item.get("title")), _strings(item.get("goals")),
                                      SourceRef("curriculum.yml", raw_paths.line_of(i))))
    planned = data.get("planned") if isinstance(data.get("planned"), dict) else {}
    return ({str(k): str(v) for k, v in tracks.items()}, paths, {str(k): str(v) for k, v in planned.items()}, diags)


def load_glossary(root: Path) -> tuple[tuple[GlossaryEntry, ...], list[Diagnostic]]:
    path = root / "glossary.yml"
    if not path.is_file():
        return (), []
    raw, diags = load_yaml(path, "glossary.yml")
    if raw is None:
        return (), diags
    if not isinstance(raw, LineList):
        return (), diags + [error("glossary.yml", 1, "E113", "glossary.yml must be a list of {term, definition}")]
    entries, seen = [], set()
    for i, item in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(item, dict) or not _str(item.get("term")) or not _str(item.get("definition")):
            diags.append(error("glossary.yml", line, "E113", "a glossary entry needs a term and a definition"))
            continue
        term = _str(item.get("term"))
        if term in seen:
            diags.append(error("glossary.yml", line, "E113", f"glossary term {term} is defined twice"))
            continue
        seen.add(term)
        entries.append(GlossaryEntry(term, _str(item.get("expansion")), " ".join(_str(item.get("definition")).split()),
                                     _str(item.get("module")), SourceRef("glossary.yml", line)))
    return tuple(entries), diags


def load_sheets(root: Path) -> list[Sheet]:
    sheets = []
    for path in sorted((root / "sheets").glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        sheets.append(Sheet(path.stem, title, rel(root, path), text))
    return sheets


def load_course(root: Path | str) -> tuple[Course, list[Diagnostic]]:
    root = Path(root).resolve()
    diags: list[Diagnostic] = []
    modules = []
    for folder in sorted(p for p in (root / "modules").glob("*") if p.is_dir()):
        module, module_diags = load_module(root, folder)
        diags += module_diags
        if module:
            modules.append(module)
    cards, card_diags = load_cards(root)
    references, ref_diags = load_references(root)
    measurements, measurement_diags = load_measurements(root)
    tracks, paths, planned, curriculum_diags = load_curriculum(root)
    glossary, glossary_diags = load_glossary(root)
    diags += glossary_diags
    diags += card_diags + ref_diags + measurement_diags + curriculum_diags
    course = Course(
        root=root,
        tracks=tracks,
        paths=tuple(paths),
        modules=tuple(sorted(modules, key=lambda m: m.id)),
        cards=tuple(cards),
        references=references,
        measurements=tuple(measurements),
        sheets=tuple(load_sheets(root)),
        planned=planned,
        glossary=glossary,
    )
    return course, diags
