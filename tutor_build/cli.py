"""The `tutor` command: check the course, run its labs, export cards, print sheets."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import figures
from .checks import run_all
from .diagnostics import ERROR, NOT_STRICT, WARNING
from .load import load_course


def cmd_check(args: argparse.Namespace) -> int:
    course, load_diags = load_course(args.root)
    figures.cache_in(Path(args.root).resolve())  # a later build reuses what the check drew
    diags = run_all(course, load_diags)
    if args.format == "json":
        from .report import summary

        print(json.dumps(summary(course, diags), indent=2))
    else:
        for d in diags:
            print(d.format())
        n_err = sum(d.severity == ERROR for d in diags)
        n_warn = sum(d.severity == WARNING for d in diags)
        print(f"{len(course.modules)} modules checked: {n_err} errors, {n_warn} warnings", file=sys.stderr)
    failed = any(d.severity == ERROR or (args.strict and d.severity == WARNING and d.code not in NOT_STRICT) for d in diags)
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tutor", description="Check, build and run the GPU + ML course.")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="check every module against the contract")
    check.add_argument("root", nargs="?", default=".", type=Path)
    check.add_argument("--strict", action="store_true", help="fail on warnings too (e.g. stale measurements)")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.set_defaults(func=cmd_check)

    from . import curriculum_cli, doctor, notebooks
    from .labs import cli as labs_cli

    doc = sub.add_parser("doctor", help="which toolchains this machine has, and what each lab path can do here")
    doc.add_argument("root", nargs="?", default=".", type=Path)
    doc.set_defaults(func=doctor.main)
    labs_cli.register(sub)
    curriculum_cli.register(sub)
    from . import book, bundle

    book.register(sub)
    bundle.register(sub)
    notebooks.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
