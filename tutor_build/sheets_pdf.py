"""Print every reference sheet of a built site to PDF and count its pages.

``print_sheets(site_dir, out_dir)`` serves the built site on 127.0.0.1, opens each sheet page
(``sheets/<name>/index.html``) in headless Chromium through Playwright, prints it with the site's
print stylesheet in A4 and in US Letter (``page.pdf``), counts the pages with pypdf and returns
``{sheet: (pages_a4, pages_letter)}``. Requests that would leave 127.0.0.1 are blocked, so the
result does not depend on the network. The contract is at most ``MAX_PAGES`` pages per sheet.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

MAX_PAGES = 2
FORMATS = ("A4", "Letter")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serve(directory: Path):
    """Serve `directory` on 127.0.0.1 (a free port); yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def sheet_pages(site_dir: Path) -> dict[str, str]:
    """{sheet name: URL path} for every built sheet page (the sheets index excluded)."""
    root = Path(site_dir) / "sheets"
    return {p.parent.name: f"sheets/{p.parent.name}/"
            for p in sorted(root.glob("*/index.html"))}


def count_pages(pdf_path: Path) -> int:
    from pypdf import PdfReader

    return len(PdfReader(str(pdf_path)).pages)


def print_sheets(site_dir: str | Path, out_dir: str | Path, *, names: list[str] | None = None,
                 executable_path: str | None = None) -> dict[str, tuple[int, int]]:
    """Print each sheet to ``out_dir/<sheet>-a4.pdf`` and ``-letter.pdf``; return page counts."""
    from playwright.sync_api import sync_playwright

    site = Path(site_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pages = sheet_pages(site)
    if names is not None:
        pages = {n: u for n, u in pages.items() if n in names}
    exe = executable_path or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    results: dict[str, tuple[int, int]] = {}
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()

            def keep_local(route):
                url = route.request.url
                host = urlparse(url).hostname
                if url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost"):
                    route.continue_()
                else:
                    route.abort()

            context.route("**/*", keep_local)
            page = context.new_page()
            for name, path in pages.items():
                page.goto(base + path, wait_until="load")
                page.emulate_media(media="print")
                counts = []
                for fmt in FORMATS:
                    pdf = out / f"{name}-{fmt.lower()}.pdf"
                    page.pdf(path=str(pdf), format=fmt, print_background=True)
                    counts.append(count_pages(pdf))
                results[name] = (counts[0], counts[1])
            context.close()
        finally:
            browser.close()
    return results


def report(results: dict[str, tuple[int, int]]) -> tuple[str, bool]:
    """A printable table of the results and whether every sheet is within MAX_PAGES."""
    ok = True
    lines = [f"{'sheet':<24} A4  Letter"]
    for name, (a4, letter) in sorted(results.items()):
        bad = a4 > MAX_PAGES or letter > MAX_PAGES
        ok = ok and not bad
        lines.append(f"{name:<24} {a4:>2}  {letter:>6}" + ("   over the limit" if bad else ""))
    return "\n".join(lines), ok
