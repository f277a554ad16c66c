"""Highlighted code cached by content hash: a block Pygments has seen once is never tokenized again,
across pages, rebuilds under `mkdocs serve`, and builds (the cache lives in .cache/highlight/)."""

from __future__ import annotations

import functools
import hashlib
import pickle
import re
from pathlib import Path

_SIMPLE = (str, int, float, bool, type(None), tuple)
VERSION = "2"  # bump when what is stored changes (2: unstyled spans unwrapped)

# Pygments wraps every whitespace run (`w`) and every plain name (`n`) in a span of its own. Material styles
# neither differently from the code around it (`.w` has no rule; `--md-code-hl-name-color` is the code's own
# colour in both schemes), and the two are half of a lab page's highlighted bytes.
_UNSTYLED = re.compile(r'<span class="[wn]">([^<]*)</span>')


def lighter(highlighted: str) -> str:
    return _UNSTYLED.sub(r"\1", highlighted)


def _key(highlighter, args, kwargs) -> str:
    settings = sorted((k, v) for k, v in vars(highlighter).items() if isinstance(v, _SIMPLE))
    text = repr((VERSION, args, sorted(kwargs.items()), settings))
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
        if isinstance(result, str):
            result = lighter(result)
        memory[key] = result
        try:
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(pickle.dumps(result))
        except OSError:
            pass  # a read-only checkout still builds, just without the disk cache
        return result

    highlight.tutor_cached = True
    Highlight.highlight = highlight
