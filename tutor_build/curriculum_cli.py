"""`tutor curriculum`, `tutor cards export`, `tutor sheets pdf`: learner-facing outputs of the course data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .load import load_course
from .render.curriculum import curriculum_markdown


def cmd_curriculum(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    course, _ = load_course(root)
    text = curriculum_markdown(course) + "\n"
    target = root / "CURRICULUM.md"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != text:
            print("CURRICULUM.md:1: E803 out of date; run `tutor curriculum` to regenerate it")
            return 1
        print("CURRICULUM.md is up to date")
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target.relative_to(root)}")
    return 0


def cmd_cards_export(args: argparse.Namespace) -> int:
    from .anki import export_anki

    course, _ = load_course(Path(args.root).resolve())
    export_anki(course.cards, course.modules, course.references, Path(args.anki), tracks=course.tracks)
    print(f"wrote {len(course.cards)} cards to {args.anki}")
    return 0


def cmd_sheets_pdf(args: argparse.Namespace) -> int:
    from .sheets_pdf import print_sheets

    result = print_sheets(Path(args.site), Path(args.out))
    too_long = {name: pages for name, pages in result.items() if max(pages) > 2}
    for name, (a4, letter) in sorted(result.items()):
        print(f"{name}: {a4} page(s) on A4, {letter} on Letter")
    if too_long:
        print(f"sheets longer than 2 pages: {', '.join(sorted(too_long))}", file=sys.stderr)
    return 1 if too_long else 0


def register(sub: argparse._SubParsersAction) -> None:
    cur = sub.add_parser("curriculum", help="write CURRICULUM.md from the modules' metadata")
    cur.add_argument("root", nargs="?", default=".")
    cur.add_argument("--check", action="store_true", help="fail if CURRICULUM.md is out of date")
    cur.set_defaults(func=cmd_curriculum)

    cards = sub.add_parser("cards", help="recall cards")
    cards_sub = cards.add_subparsers(dest="cards_command", required=True)
    export = cards_sub.add_parser("export", help="export every card as an Anki package")
    export.add_argument("--anki", required=True, metavar="FILE.apkg")
    export.add_argument("--root", default=".")
    export.set_defaults(func=cmd_cards_export)

    sheets = sub.add_parser("sheets", help="reference sheets")
    sheets_sub = sheets.add_subparsers(dest="sheets_command", required=True)
    pdf = sheets_sub.add_parser("pdf", help="print every sheet to PDF (A4 and Letter) through Chromium")
    pdf.add_argument("--site", default="site", help="the built site (make site)")
    pdf.add_argument("--out", default="site/pdf")
    pdf.set_defaults(func=cmd_sheets_pdf)
