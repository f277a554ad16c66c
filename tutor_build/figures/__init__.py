"""Concept figures, drawn by code at build time.

A module lists its figures in modules/<ID>/figures.yml (id, draw, args, alt, caption); `draw` names a
function `<file>.<function>` in this package that takes the args and returns a :class:`~..render.svg.Canvas`.
The drawing functions compute what they show from the course's models (tutor_build/models), the same code
the players and the claims tests use, so a figure cannot disagree with them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
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


_PACKAGE = Path(__file__).resolve().parents[1]  # tutor_build/
_root: Path | None = None  # the course whose records the figures may read, and whose .cache/figures keeps them


def cache_in(root: Path | None) -> None:
    """Keep drawn figures in <root>/.cache/figures (None: in memory only), keyed by what they are drawn from."""
    global _root
    _root = root


def _inputs() -> list[Path]:
    """What any figure may be drawn from: the drawing code, the models (and their data), the canvas, and the
    measurement records (some figures plot them). Coarse on purpose: one changed model redraws every figure."""
    found = [_PACKAGE / "render" / "svg.py", _PACKAGE / "measurements.py"]
    for folder in (_PACKAGE / "figures", _PACKAGE / "models"):
        found += sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".py", ".yml", ".yaml", ".json"))
    if _root is not None:
        found += sorted((_root / "measurements").glob("*.jsonl"))
    return found


_fingerprints: dict[tuple, str] = {}


def _fingerprint() -> str:
    """sha256 over the inputs' contents; rehashed only when a file's size or mtime changed (`mkdocs serve`)."""
    files = _inputs()
    stamp = tuple((str(p), st.st_size, st.st_mtime_ns) for p in files if (st := p.stat()))
    if stamp not in _fingerprints:
        digest = hashlib.sha256()
        for p in files:
            digest.update(str(p.relative_to(p.anchor)).encode() + b"\0" + p.read_bytes() + b"\0")
        _fingerprints.clear()
        _fingerprints[stamp] = digest.hexdigest()
    return _fingerprints[stamp]


def _draw(draw: str, args_json: str, alt: str) -> str:
    fn = resolve(draw)
    try:
        canvas = fn(**json.loads(args_json))
        return canvas.render(alt)
    except FigureError:
        raise
    except Exception as exc:  # noqa: BLE001 - an author's drawing bug becomes a diagnostic, not a traceback
        raise FigureError(f"{draw}({args_json[1:-1]}) failed: {type(exc).__name__}: {exc}") from None


@functools.lru_cache(maxsize=512)
def _svg(draw: str, args_json: str, alt: str, fingerprint: str) -> str:
    key = hashlib.sha256(f"{fingerprint}\0{draw}\0{args_json}\0{alt}".encode()).hexdigest()
    path = _root / ".cache" / "figures" / key[:2] / f"{key}.svg" if _root is not None else None
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8")
    text = _draw(draw, args_json, alt)  # a figure that fails is never cached: it fails again, with its message
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # whole or absent: a build killed mid-write leaves no half figure
    return text


def svg(spec: FigureSpec) -> str:
    """The figure's SVG, drawn once per content of what it is drawn from: memoized in the process and, after
    cache_in(folder), on disk, so a warm build or `mkdocs serve` never redraws an unchanged figure."""
    return _svg(spec.draw, json.dumps(dict(spec.args), sort_keys=True), spec.alt, _fingerprint())
