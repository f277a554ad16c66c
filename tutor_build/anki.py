"""Export the course's recall cards as an Anki package (.apkg) with genanki.

One deck per track. Note GUIDs come from the card ids (``genanki.guid_for(card.id)``), so
re-importing a newer export updates the learner's existing notes and keeps their review
history. Deck and note-type ids are derived from fixed strings, so they never change
between exports either. The back of every card carries its citation and the section it
tests.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import genanki

from .model import Card, Module, Reference, SECTION_SPECS

ROOT_DECK = "GPU and ML systems course"
SECTION_TITLES = {s.key: s.title for s in SECTION_SPECS}

_CSS = """
.card { font-family: system-ui, sans-serif; font-size: 18px; line-height: 1.45;
        color: #1b1b1b; background: #fff; text-align: left; max-width: 42em; margin: 0 auto; }
.nightMode .card, .card.nightMode { color: #e6e6e6; background: #1e1e1e; }
.meta { font-size: 13px; opacity: 0.75; margin-bottom: 0.6em; }
.cite { font-size: 14px; margin-top: 1em; border-top: 1px solid #8886; padding-top: 0.5em; }
"""

_FRONT = """<div class="meta">{{Module}} &middot; {{Section}}</div>
<div class="q">{{Question}}</div>"""

_BACK = """{{FrontSide}}
<hr id="answer">
<div class="a">{{Answer}}</div>
<div class="cite">Source: {{Source}}<br>Tests: {{Section}}</div>"""


def stable_id(name: str) -> int:
    """A deck or model id in genanki's recommended range, derived from a fixed string."""
    digest = hashlib.sha256(f"tutor-course/anki/{name}".encode("utf-8")).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


MODEL_ID = stable_id("model/recall-card/v1")

NOTE_MODEL = genanki.Model(
    MODEL_ID,
    "Tutor recall card",
    fields=[{"name": "Question"}, {"name": "Answer"}, {"name": "Source"},
            {"name": "Section"}, {"name": "Module"}, {"name": "CardId"}],
    templates=[{"name": "Recall", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
    sort_field_index=0,
)


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _link(url: str, label: str) -> str:
    return f'<a href="{_esc(url)}">{_esc(label)}</a>' if url else _esc(label)


def _module_index(modules: Iterable[Module] | Mapping[str, Module]) -> dict[str, Module]:
    if isinstance(modules, Mapping):
        return dict(modules)
    return {m.id: m for m in modules}


def _site_link(site_url: str | None, path: str) -> str:
    return site_url.rstrip("/") + "/" + path if site_url else ""


def citation_html(card: Card, module: Module | None, references: Mapping[str, Reference],
                  site_url: str | None = None) -> str:
    """The 'Source' field: the bibliography entry, or the module section it points at."""
    cite = card.cite.strip()
    if cite.startswith("@"):
        ref = references.get(cite[1:])
        if ref is None:
            return _esc(cite[1:])
        who = ", ".join(x for x in (str(ref.author or ""), str(ref.year or "")) if x)
        label = ref.title + (f" ({who})" if who else "")
        return _link(ref.link, label)
    anchor = cite.lstrip("#")
    title = SECTION_TITLES.get(anchor, anchor)
    if module is None:
        return _esc(f"{card.module}, section {title}")
    url = _site_link(site_url, f"{module.url}#{anchor}")
    return _link(url, f"{module.id} {module.title}, section: {title}")


def section_html(card: Card, module: Module | None, site_url: str | None = None) -> str:
    title = SECTION_TITLES.get(card.section, card.section)
    if module is None:
        return _esc(title)
    return _link(_site_link(site_url, f"{module.url}#{card.section}"), f"{module.id} · {title}")


def build_decks(cards: Iterable[Card], modules: Iterable[Module] | Mapping[str, Module],
                references: Mapping[str, Reference], *, tracks: Mapping[str, str] | None = None,
                site_url: str | None = None) -> list[genanki.Deck]:
    index = _module_index(modules)
    decks: dict[str, genanki.Deck] = {}
    for card in sorted(cards, key=lambda c: (c.module, c.id)):
        module = index.get(card.module)
        track = module.track if module else "other"
        if track not in decks:
            title = (tracks or {}).get(track, "")
            name = f"{ROOT_DECK}::Track {track}" + (f" - {title}" if title else "")
            decks[track] = genanki.Deck(stable_id(f"deck/track/{track}"), name,
                                        description=f"Recall cards of track {track}.")
        note = genanki.Note(
            model=NOTE_MODEL,
            guid=genanki.guid_for(card.id),  # stable: from the card id, never the text
            fields=[
                _esc(card.q),
                _esc(card.a),
                citation_html(card, module, references, site_url),
                section_html(card, module, site_url),
                _esc(f"{card.module} {module.title}" if module else card.module),
                card.id,
            ],
            tags=[f"tutor::{card.module}", f"tutor::track-{track}", f"tutor::{card.section}"],
        )
        decks[track].add_note(note)
    return [decks[k] for k in sorted(decks)]


def export_anki(cards: Iterable[Card], modules: Iterable[Module] | Mapping[str, Module],
                references: Mapping[str, Reference], out_path: str | Path, *,
                tracks: Mapping[str, str] | None = None, site_url: str | None = None,
                timestamp: float | None = None) -> dict[str, Any]:
    """Write an .apkg with one deck per track; returns {"path", "decks": {name: notes}, "notes"}."""
    decks = build_decks(cards, modules, references, tracks=tracks, site_url=site_url)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    genanki.Package(decks).write_to_file(str(out), timestamp=timestamp)
    counts = {d.name: len(d.notes) for d in decks}
    return {"path": str(out), "decks": counts, "notes": sum(counts.values())}
