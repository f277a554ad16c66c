"""Converted pages kept on disk: a page whose Markdown, and everything its HTML is made from, has not
changed since the last build is not converted again.

The key covers the page's final Markdown (after the course's own rendering), its place in the site, the
Markdown configuration and package versions, the list of files (links are resolved against it), the
engine's own source, the glossary, the drawings the page inlines and the files its snippets include. A
page is kept only if it converted without a warning or a problem, so a cached page can never hide one: it
was clean when it was kept and nothing it depends on has changed since.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from mkdocs.structure.toc import get_toc

SNIPPET = re.compile(r'^[ \t]*-{1,}8<-{1,}[ \t]+"([^"]+)"', re.MULTILINE)
BARE_SNIPPET = re.compile(r"^[ \t]*-{1,}8<-{1,}[ \t]*$", re.MULTILINE)  # the block form: not keyed, not kept
PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "pygments", "latex2mathml")
ENGINE = Path(__file__).resolve().parents[1]  # tutor_build/


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _versions() -> str:
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=none")
    return ",".join(found)


class _Warnings(logging.Handler):
    """Counts warnings logged while one page converts (the build converts one page at a time)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class PageCache:
    def __init__(self, folder: Path, root: Path, config: Any, files: Any, glossary: Any) -> None:
        self.folder = folder
        self.root = root
        engine = b"".join(p.read_bytes() for p in sorted(ENGINE.rglob("*.py")))
        markdown_config = json.dumps([config["markdown_extensions"], config["mdx_configs"]], sort_keys=True, default=str)
        listing = "\n".join(sorted(f.src_uri for f in files))
        self.base = _digest(_versions(), markdown_config, listing, engine, repr(glossary))
        self.warnings = _Warnings()
        logging.getLogger("mkdocs").addHandler(self.warnings)
        self.hits = 0

    def close(self) -> None:
        logging.getLogger("mkdocs").removeHandler(self.warnings)

    def key(self, markdown: str, page: Any, svgs: dict[str, str]) -> str | None:
        """The page's key, or None if it cannot be keyed (a snippet in the block form)."""
        if BARE_SNIPPET.search(markdown):
            return None
        included = []
        for ref in SNIPPET.findall(markdown):
            path = self.root / ref.split(":")[0]
            included.append(path.read_bytes() if path.is_file() else b"<missing>")
        drawings = [f"{k}\0{v}" for k, v in sorted(svgs.items()) if k in markdown]
        return _digest(self.base, page.file.src_uri, page.file.dest_uri, page.url, markdown, *included, *drawings)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str | None) -> dict | None:
        if key is None:
            return None
        path = self._path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def start(self) -> None:
        """A page begins converting: warnings from here on are its own."""
        self.warnings.count = 0

    def restore(self, entry: dict, page: Any, files: Any) -> str:
        """Put back on the page what converting it would have set, and return its HTML."""
        page.toc = get_toc(entry["toc"])
        page._title_from_render = entry["title"]
        page.present_anchor_ids = set(entry["anchors"])
        links = {}
        for uri, anchors in entry["links"].items():
            target = files.get_file_from_path(uri)
            if target is not None:
                links[target] = anchors
        page.links_to_anchors = links
        self.hits += 1
        return entry["html"]

    def keep(self, key: str | None, page: Any, html: str, clean: bool) -> None:
        """Keep the page's HTML if it converted clean: no warning logged, no problem found."""
        if key is None or not clean or self.warnings.count:
            return
        entry = {"html": html, "toc": _tokens(page.toc), "title": page._title_from_render,
                 "anchors": sorted(page.present_anchor_ids or ()),
                 "links": {f.src_uri: dict(a) for f, a in (page.links_to_anchors or {}).items()}}
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, path)  # whole or absent


def _tokens(items: Any) -> list[dict]:
    return [{"level": i.level, "id": i.id, "name": i.title, "children": _tokens(i.children)} for i in items or ()]
