"""The course as immutable data. Every object remembers where on disk it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping


@dataclass(frozen=True)
class SourceRef:
    path: str  # relative to the course root, with forward slashes
    line: int = 1


@dataclass(frozen=True)
class SectionSpec:
    number: int
    key: str  # the anchor on the module page
    title: str
    filename: str


SECTION_SPECS: tuple[SectionSpec, ...] = (
    SectionSpec(1, "analogy", "Analogy", "1-analogy.md"),
    SectionSpec(2, "first-principles", "First principles", "2-first-principles.md"),
    SectionSpec(3, "silicon", "On real silicon: CDNA 3 and Hopper", "3-silicon.md"),
    SectionSpec(4, "labs", "Hands-on labs", "4-labs.md"),
    SectionSpec(5, "performance", "Performance against the roofline", "5-performance.md"),
    SectionSpec(6, "tradeoffs", "Challenges, drawbacks and tradeoffs", "6-tradeoffs.md"),
    SectionSpec(7, "production", "Where it appears in production ML", "7-production.md"),
    SectionSpec(8, "sources", "Sources", "8-sources.md"),
    SectionSpec(9, "self-assessment", "Self-assessment and interview drills", "9-self-assessment.md"),
)
SECTION_KEYS = tuple(s.key for s in SECTION_SPECS)

LAB_PATHS = {"cuda": ".cu", "hip": ".hip", "triton": ".py", "python": ".py"}
TAB_LABELS = {"cuda": "CUDA", "hip": "HIP", "triton": "Triton", "python": "PyTorch"}


@dataclass(frozen=True)
class Hours:
    read: float = 0.0
    lab: float = 0.0
    drill: float = 0.0

    @property
    def total(self) -> float:
        return self.read + self.lab + self.drill


@dataclass(frozen=True)
class Section:
    spec: SectionSpec
    path: str  # relative path of the file
    text: str


@dataclass(frozen=True)
class LabSpec:
    name: str
    paths: tuple[str, ...]
    ref: SourceRef


@dataclass(frozen=True)
class GlossaryEntry:
    term: str
    expansion: str
    definition: str
    module: str
    ref: SourceRef


@dataclass(frozen=True)
class Erratum:
    """One correction to a module (modules/<ID>/errata.yml): when, where, what the page said, what is right."""
    date: str
    section: str  # a section file's stem (2-first-principles), or module / cards / labs / figures
    wrong: str
    right: str
    cite: tuple[str, ...]
    ref: SourceRef


@dataclass(frozen=True)
class FigureSpec:
    """A concept figure drawn by code at build time (modules/<ID>/figures.yml)."""
    id: str
    draw: str  # "<file>.<function>" under tutor_build/figures/
    args: Mapping[str, Any]
    alt: str
    caption: str
    ref: SourceRef


@dataclass(frozen=True)
class Module:
    id: str
    title: str
    track: str
    summary: str
    hours: Hours
    prerequisites: tuple[str, ...]
    concepts: tuple[str, ...]
    headline: str
    labs: tuple[LabSpec, ...]
    vendor_scope: str
    counterpart: str
    player: str
    folder: str  # e.g. modules/A02-memory-coalescing
    sections: tuple[Section, ...]
    ref: SourceRef
    raw: Mapping[str, Any] = field(repr=False, compare=False, hash=False)
    figures: tuple[FigureSpec, ...] = ()
    figures_path: str = ""  # modules/<folder>/figures.yml, when the module has one
    errata: tuple["Erratum", ...] = ()  # modules/<folder>/errata.yml, newest first as written

    @property
    def name(self) -> str:
        return self.folder.rsplit("/", 1)[-1]

    @property
    def url(self) -> str:
        return f"modules/{self.name}/"

    @property
    def page_path(self) -> str:
        return f"modules/{self.name}.md"

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.spec.key == key), None)


@dataclass(frozen=True)
class Card:
    id: str
    module: str
    q: str
    a: str
    cite: str
    section: str
    ref: SourceRef


@dataclass(frozen=True)
class Reference:
    key: str
    title: str
    author: str
    year: str
    url: str
    doi: str
    arxiv: str
    note: str
    ref: SourceRef

    @property
    def link(self) -> str:
        if self.url:
            return self.url
        if self.doi:
            return f"https://doi.org/{self.doi}"
        if self.arxiv:
            return f"https://arxiv.org/abs/{self.arxiv}"
        return ""


@dataclass(frozen=True)
class Measurement:
    key: str  # MODULE/LAB/VARIANT/VENDOR
    metric: str
    value: float
    unit: str
    gpu: str
    toolkit: str
    date: str
    ceiling_name: str
    ceiling_value: float
    ceiling_unit: str
    source: tuple[str, ...]
    source_sha256: str
    local: bool
    ref: SourceRef
    raw: Mapping[str, Any] = field(repr=False, compare=False, hash=False)

    @property
    def percent_of_ceiling(self) -> float | None:
        if self.ceiling_value and self.unit == self.ceiling_unit:
            return 100.0 * self.value / self.ceiling_value
        return None


@dataclass(frozen=True)
class Sheet:
    name: str
    title: str
    path: str
    text: str


@dataclass(frozen=True)
class LearningPath:
    id: str
    title: str
    goals: tuple[str, ...]
    ref: SourceRef


@dataclass(frozen=True)
class Course:
    root: Path
    tracks: Mapping[str, str]
    paths: tuple[LearningPath, ...]
    modules: tuple[Module, ...]
    cards: tuple[Card, ...]
    references: Mapping[str, Reference]
    measurements: tuple[Measurement, ...]  # course records, then local ones
    sheets: tuple[Sheet, ...]
    planned: Mapping[str, str] = field(default_factory=dict)  # every module of the plan: id -> title
    glossary: tuple[GlossaryEntry, ...] = ()

    def module(self, module_id: str) -> Module | None:
        return next((m for m in self.modules if m.id == module_id), None)

    def measured(self, key: str, local: bool = False) -> Measurement | None:
        """The newest record for a key (course records unless local=True)."""
        found = [m for m in self.measurements if m.key == key and m.local == local]
        return max(found, key=lambda m: m.date) if found else None
