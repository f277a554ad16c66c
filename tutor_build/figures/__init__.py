"""Concept figures, drawn by code at build time.

A module lists its figures in modules/<ID>/figures.yml (id, draw, args, alt, caption); `draw` names a
function `<file>.<function>` in this package that takes the args and returns a :class:`~..render.svg.Canvas`.
The drawing functions compute what they show from the course's models (tutor_build/models), the same code
the players and the claims tests use, so a figure cannot disagree with them.
"""

from __future__ import annotations

import functools
import importlib
import json
from pathlib import Path
from typing import Any, Callable

from ..model import FigureSpec


class FigureError(Exception):
    """A figure that cannot be drawn; the message says why (for the checks, never a traceback)."""


def _version(file: str) -> float:
    path = Path(__file__).with_name(f"{file}.py")
    return path.stat().st_mtime if path.is_file() else 0.0


def resolve(draw: str) -> Callable[..., Any]:
    file, _, func = draw.rpartition(".")
    if not file or not func or not all(part.isidentifier() for part in (file, func)):
        raise FigureError(f"draw must be <file>.<function> under tutor_build/figures/, not {draw!r}")
    try:
        module = importlib.import_module(f"{__name__}.{file}")
    except ModuleNotFoundError as exc:
        raise FigureError(f"no drawing file tutor_build/figures/{file}.py ({exc.name} not found)") from None
    if getattr(module, "_loaded_version", None) not in (None, _version(file)):
        module = importlib.reload(module)  # `mkdocs serve`: the author edited the drawing code
    module._loaded_version = _version(file)
    fn = getattr(module, func, None)
    if not callable(fn):
        raise FigureError(f"tutor_build/figures/{file}.py has no function {func}")
    return fn


@functools.lru_cache(maxsize=512)
def _svg(draw: str, args_json: str, alt: str, version: float) -> str:
    fn = resolve(draw)
    try:
        canvas = fn(**json.loads(args_json))
        return canvas.render(alt)
    except FigureError:
        raise
    except Exception as exc:  # noqa: BLE001 - an author's drawing bug becomes a diagnostic, not a traceback
        raise FigureError(f"{draw}({args_json[1:-1]}) failed: {type(exc).__name__}: {exc}") from None


def svg(spec: FigureSpec) -> str:
    """The figure's SVG (memoized on what it is drawn from, so `mkdocs serve` redraws only what changed)."""
    return _svg(spec.draw, json.dumps(dict(spec.args), sort_keys=True), spec.alt, _version(spec.draw.rpartition(".")[0]))
