"""Recall cards: enough per module, complete, uniquely identified, cited."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error
from ..model import SECTION_KEYS, Course

MIN_CARDS = 8


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: dict[str, str] = {}
    modules = {m.id: m for m in course.modules}
    for card in course.cards:
        where = (card.ref.path, card.ref.line)
        if card.module not in modules:
            out.append(error(*where, "E506", f"card file for '{card.module}', which is not a module"))
        for name in ("id", "q", "a", "cite", "section"):
            if not getattr(card, name):
                out.append(error(*where, "E502", f"card lacks '{name}'"))
        if card.id:
            if card.id in seen:
                out.append(error(*where, "E503", f"card id '{card.id}' is also used at {seen[card.id]}"))
            seen.setdefault(card.id, f"{card.ref.path}:{card.ref.line}")
        if card.cite.startswith("@"):
            if card.cite[1:] not in course.references:
                out.append(error(*where, "E504", f"card cites '{card.cite}', which is not in references.yml"))
        elif card.cite.startswith("#"):
            if card.cite[1:] not in SECTION_KEYS:
                out.append(error(*where, "E504", f"card cites section '{card.cite}', which is not a section anchor"))
        elif card.cite:
            out.append(error(*where, "E504", "a card cites '@key' (bibliography) or '#section' (a section anchor)"))
        if card.section and card.section not in SECTION_KEYS:
            out.append(error(*where, "E505", f"section '{card.section}' is not one of {', '.join(SECTION_KEYS)}"))
    for m in course.modules:
        count = sum(1 for c in course.cards if c.module == m.id)
        if count < MIN_CARDS:
            path = f"cards/{m.id}.yml"
            has_file = (course.root / path).is_file()
            out.append(error(path if has_file else m.ref.path, 1, "E501",
                             f"module {m.id} has {count} recall cards; at least {MIN_CARDS} are required"))
    return out
