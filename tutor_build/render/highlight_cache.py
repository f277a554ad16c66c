"""Highlighted code cached by content hash: a block Pygments has seen once is never tokenized again,
across pages, rebuilds under `mkdocs serve`, and builds (the cache lives in .cache/highlight/)."""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path

_SIMPLE = (str, int, float, bool, type(None), tuple)


def _key(highlighter, args, kwargs) -> str:
    settings = sorted((k, v) for k, v in vars(highlighter).items() if isinstance(v, _SIMPLE))
    text = repr((args, sorted(kwargs.items()), settings))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def install(cache_dir: Path) -> None:
    """Wrap pymdownx's highlighter once per process; results are kept in memory and on disk."""
    from pymdownx.highlight import Highlight

    if getattr(Highlight.highlight, "tutor_cached", False):
        return
    original = Highlight.highlight
    memory: dict[str, str] = {}
    cache_dir.mkdir(parents=True, exist_ok=True)

    @functools.wraps(original)
    def highlight(self, *args, **kwargs):
        key = _key(self, args, kwargs)
        if key in memory:
            return memory[key]
        path = cache_dir / key[:2] / key
        if path.is_file():
            try:
                memory[key] = pickle.loads(path.read_bytes())
                return memory[key]
            except (OSError, pickle.PickleError, EOFError):
                pass
        result = original(self, *args, **kwargs)
        memory[key] = result
        try:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(pickle.dumps(result))
        except OSError:
            pass  # a read-only checkout still builds, just without the disk cache
        return result

    highlight.tutor_cached = True
    Highlight.highlight = highlight
