"""The offline bundle: `tutor bundle` writes a zip of the site that works opened from disk (file://).

The build is the site's own mkdocs.yml with three changes made here, in code (no second hand-kept
config): directory URLs off (every link names an .html file), Material's ``offline`` plugin on (it
writes the search index as ``search/search_index.js``, which the theme loads by a script tag under
file://), and a local stand-in for the web worker that search runs in (a browser refuses to start a
worker from file://; ``FILE_WORKER`` runs the worker's script in a hidden frame instead). Material's
plugin would otherwise add a shim from a CDN; the local one is named so that it does not.

After the build, ``fix_links`` rewrites the relative links that pages wrote for directory URLs
(``../../players/gemm-tiling/``): each is resolved as the page would have resolved it at
``page/index.html`` and pointed at the file that is there now. A link that still names no file is
reported, and the bundle is refused.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

BUNDLE_ZIP = Path("build") / "gpu-ml-tutor-offline.zip"
SHIM_PATH = "assets/js/iframe-worker-offline.js"  # "iframe-worker" in the name: Material adds no CDN shim then

# A Worker that runs its script in a hidden frame; only where the page was opened from disk.
FILE_WORKER = r"""/* Web workers cannot start from file://: run the worker's script in a hidden frame instead. */
(function () {
  "use strict";
  if (location.protocol !== "file:") return;
  function FrameWorker(url) {
    var target = document.createDocumentFragment(), self = this, queue = [], ready = false;
    ["addEventListener", "removeEventListener", "dispatchEvent"].forEach(function (name) {
      self[name] = target[name].bind(target);
    });
    var frame = document.createElement("iframe");
    frame.hidden = true;
    frame.setAttribute("aria-hidden", "true");
    frame.srcdoc = "<!doctype html><script>postMessage=function(m){parent.postMessage(m,'*')};" +
      "importScripts=function(){};<\/script><script src=\"" + new URL(url, location.href).href + "\"><\/script>";
    function deliver(data) {  // the frame's postMessage now talks to this page: dispatch into it instead
      var w = frame.contentWindow;
      w.dispatchEvent(new w.MessageEvent("message", {data: data}));
    }
    frame.addEventListener("load", function () {
      ready = true;
      queue.splice(0).forEach(deliver);
    });
    window.addEventListener("message", function (ev) {
      if (ev.source !== frame.contentWindow) return;
      var out = new MessageEvent("message", {data: ev.data});
      target.dispatchEvent(out);
      if (typeof self.onmessage === "function") self.onmessage(out);
    });
    this.postMessage = function (data) {
      if (ready) deliver(data); else queue.push(data);
    };
    this.terminate = function () { frame.remove(); };
    (document.body || document.documentElement).appendChild(frame);
  }
  window.IFrameWorker = FrameWorker;
  window.Worker = FrameWorker;
})();
"""

_ATTR = re.compile(r'(\s(?:href|src)=)("([^"]*)"|\'([^\']*)\')')
_SKIP = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#|$)", re.IGNORECASE)


def offline_overrides(config_file: Path) -> dict:
    """What the bundle changes in mkdocs.yml: directory URLs off, the offline plugin on, the local worker shim."""
    raw = yaml.load(Path(config_file).read_text(encoding="utf-8"), Loader=yaml.SafeLoader) or {}
    plugins = list(raw.get("plugins") or ["search"])
    if not any((p if isinstance(p, str) else next(iter(p))) == "offline" for p in plugins):
        plugins.append("offline")
    extra = dict(raw.get("extra") or {})
    extra["polyfills"] = [SHIM_PATH]
    return {"use_directory_urls": False, "plugins": plugins, "extra": extra, "strict": True}


def build_offline(config_file: Path, site_dir: Path) -> None:
    """Build the site for file:// into site_dir (strict: a warning fails it, as `make site` does)."""
    from .plugin import build_with  # the one module that imports MkDocs

    build_with(config_file, site_dir, **offline_overrides(config_file))
    shim = Path(site_dir) / SHIM_PATH
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text(FILE_WORKER, encoding="utf-8")


def _target(site: Path, rel_dir: str, path: str) -> str | None:
    """The file (site-relative) that `path`, seen from the folder `rel_dir`, names; None if none."""
    joined = posixpath.normpath(posixpath.join(rel_dir, path))
    if joined.startswith(".."):
        return None
    if (site / joined).is_file():
        return joined
    if path.endswith("/") or (site / joined).is_dir():
        for cand in (posixpath.join(joined, "index.html"), joined.rstrip("/") + ".html"):
            if (site / cand).is_file():
                return posixpath.normpath(cand)
    return None


def fix_links(site_dir: Path) -> tuple[int, list[str]]:
    """Point every relative href/src of every page at a file; returns (links rewritten, links still broken)."""
    site = Path(site_dir)
    fixed, broken = 0, []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        if rel == "404.html":  # served for any missing path, so its links are written from the root
            continue
        here = posixpath.dirname(rel)
        # the folder this page would have had with directory URLs: a/b.html was a/b/index.html
        before = here if rel.endswith("index.html") else rel[:-5]
        text = html.read_text(encoding="utf-8")

        def repl(m: re.Match) -> str:
            nonlocal fixed
            url = m.group(3) if m.group(3) is not None else m.group(4)
            if _SKIP.match(url):
                return m.group(0)
            path, tail = re.match(r"([^?#]*)(.*)", url, re.DOTALL).groups()
            if not path:
                return m.group(0)
            if (site / posixpath.normpath(posixpath.join(here, path))).is_file():
                return m.group(0)
            target = _target(site, here, path) or _target(site, before, path)
            if target is None:
                broken.append(f"{rel}: {url}")
                return m.group(0)
            fixed += 1
            new = posixpath.relpath(target, here or ".") + tail
            return f'{m.group(1)}"{new}"'

        new_text = _ATTR.sub(repl, text)
        if new_text != text:
            html.write_text(new_text, encoding="utf-8")
    return fixed, broken


def zip_dir(src: Path, dest: Path, top: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for path in sorted(Path(src).rglob("*")):
            if path.is_file() and not path.name.endswith((".map", ".gz")):
                z.write(path, f"{top}/{path.relative_to(src).as_posix()}")


def make_bundle(root: Path, out: Path | None = None, *, keep_site: Path | None = None) -> tuple[Path, int]:
    """Build, fix and zip the offline site of the course at root; returns (zip, links rewritten)."""
    root = Path(root).resolve()
    out = Path(out) if out else root / BUNDLE_ZIP
    tmp = Path(tempfile.mkdtemp(prefix="tutor-bundle-"))
    try:
        site = keep_site or tmp / "site"
        build_offline(root / "mkdocs.yml", site)
        fixed, broken = fix_links(site)
        if broken:
            raise RuntimeError(f"{len(broken)} link(s) name no file in the bundle:\n" + "\n".join(broken[:40]))
        zip_dir(site, out, out.stem)
        return out, fixed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(args) -> int:  # noqa: ANN001 - argparse.Namespace
    try:
        path, fixed = make_bundle(args.root, args.out)
    except RuntimeError as exc:
        print(f"tutor bundle: {exc}", file=sys.stderr)
        return 1
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB; unzip it and open {path.stem}/index.html "
          f"({fixed} links written for directory URLs pointed at their files)")
    return 0


def register(sub) -> None:  # noqa: ANN001 - argparse subparsers
    p = sub.add_parser("bundle", help="zip the site so that it works opened from disk (file://, no server)")
    p.add_argument("root", nargs="?", default=".", type=Path)
    p.add_argument("--out", type=Path, help=f"the zip to write (default: <root>/{BUNDLE_ZIP.as_posix()})")
    p.set_defaults(func=main)
