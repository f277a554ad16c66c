"""The errata page: every correction made to a module since it was published, from modules/<ID>/errata.yml,
grouped by module, newest first; each module page links to its own group."""

from __future__ import annotations

from ..model import SECTION_SPECS, Course, Module

_PLACES = {s.filename.removesuffix(".md"): s for s in SECTION_SPECS}
_OTHER = {"module": "the module's summary and headline", "cards": "its recall cards", "labs": "its labs",
          "figures": "its figures"}


def anchor(m: Module) -> str:
    return f"errata-{m.id.lower()}"


def where(m: Module, section: str) -> str:
    spec = _PLACES.get(section)
    if spec:
        return f"[§{spec.number} {spec.title}](modules/{m.name}.md#{spec.key})"
    return _OTHER[section]


def module_line(m: Module) -> str:
    """The line under a module's headline that points to its corrections (empty when it has none)."""
    if not m.errata:
        return ""
    n = len(m.errata)
    latest = max(e.date for e in m.errata)
    return f"**Corrections** [{n} listed in the errata](../errata.md#{anchor(m)}), the latest on {latest}"


def errata_page(course: Course) -> str:
    lines = ["---", "title: Errata", "---", "", "# Errata", "",
             "Every correction made to a module after it was published: what the page said, what is right, and "
             "why. The pages themselves carry the corrected text; this list is kept so that a reader who learned "
             "the old version can find what changed.", ""]
    corrected = [m for m in course.modules if m.errata]
    if not corrected:
        lines.append("No module has been corrected yet.")
    for m in corrected:
        lines += [f'## {m.id} · {m.title} {{ #{anchor(m)} }}', ""]
        for e in sorted(m.errata, key=lambda e: e.date, reverse=True):
            cites = " ".join(f"[`{k}`](references.md#ref-{k})" for k in e.cite)
            lines += [f"**{e.date}** · {where(m, e.section)}", "",
                      f"- **Was:** {e.wrong}", f"- **Now:** {e.right}" + (f" Sources: {cites}." if cites else ""), ""]
    return "\n".join(lines) + "\n"
