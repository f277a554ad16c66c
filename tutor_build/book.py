"""Print the whole course to one PDF: `tutor book`.

``print_book(site_dir, out_pdf, chapters)`` serves a built site on 127.0.0.1 (the server and request
filter of ``sheets_pdf``: nothing leaves the machine) and prints, in headless Chromium with the site's
print stylesheet, each chapter on its own: the page's article alone, collapsed solutions opened, every
code tab under its label, links to other pages turned into text. Chapters are numbered on from one
another (Chromium's page margin boxes: the footer carries the chapter's title and the book's page
number). The cover and contents are printed once to count their pages, and again with each chapter's
start page; pypdf joins the parts and adds a bookmark per chapter.

A module's part of the book is also its PDF (``<ID>.pdf``: the book's pages and numbers), and
``manifest.json`` records the hash of the page text each was printed from. The site build links a
module's PDF only while that hash matches the page it renders now (``current_pdfs``), so a link never
points at a missing or stale file. ``--module A03`` prints one module alone, numbered from 1.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import urlparse

from .sheets_pdf import CHROMIUM, CHROMIUM_ARGS, count_pages, serve

BOOK_DIR = Path("build") / "book"  # under the course root: what the site build picks the module PDFs up from
BOOK_PDF = "gpu-ml-tutor.pdf"
MANIFEST = "manifest.json"
PAGE_HASHES = "assets/generated/page-hashes.json"  # {module id: hash of its page}, written by the build
PDF_URL = "downloads/pdf/{id}.pdf"  # where a module's PDF lands in the site
FORMATS = ("A4", "Letter")


@dataclass(frozen=True)
class Chapter:
    key: str    # A02, glossary, references, errata: the prefix of the chapter's ids in the book
    title: str  # as the page's h1 prints it
    src: str    # the docs-relative Markdown path (modules/A02-memory-coalescing.md)
    module: str = ""  # the module id, for module chapters


def chapters(course) -> list[Chapter]:  # noqa: ANN001 - tutor_build.model.Course
    """Every module in course order, then the glossary, the bibliography and the errata."""
    out = [Chapter(m.id, f"{m.id} · {m.title}", m.page_path, m.id) for m in course.modules]
    if course.glossary:
        out.append(Chapter("glossary", "Glossary", "glossary.md"))
    out += [Chapter("references", "Bibliography", "references.md"), Chapter("errata", "Errata", "errata.md")]
    return out


def page_file(site_dir: Path, src: str) -> str:
    """The built file of a docs page, with directory URLs (a/b/index.html) or without (a/b.html)."""
    stem = src[:-3]
    for rel in (f"{stem}/index.html", f"{stem}.html"):
        if (Path(site_dir) / rel).is_file():
            return rel
    raise FileNotFoundError(f"{src} is not built in {site_dir}")


def page_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def current_pdfs(root: Path, pages: dict[str, str], modules) -> dict[str, Path]:  # noqa: ANN001
    """{module id: PDF} for each module whose printed PDF was made from exactly its page text now."""
    book = Path(root) / BOOK_DIR
    try:
        manifest = json.loads((book / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for m in modules:
        entry = manifest.get("modules", {}).get(m.id) or {}
        pdf = book / str(entry.get("pdf", ""))
        text = pages.get(m.page_path)
        if text is not None and pdf.is_file() and entry.get("page") == page_hash(text):
            out[m.id] = pdf
    return out


def link_pdfs(root: Path, pages: dict[str, str], assets: dict[str, str], modules) -> dict[str, Path]:  # noqa: ANN001
    """The site build's hook: record each module page's hash (PAGE_HASHES, which the book copies into
    its manifest), and give each module whose PDF is current a link to it. Returns {site path: PDF}."""
    assets[PAGE_HASHES] = json.dumps({m.id: page_hash(pages[m.page_path]) for m in modules
                                      if m.page_path in pages}, indent=1)
    found = current_pdfs(root, pages, modules)
    for m in modules:
        if m.id in found:
            pages[m.page_path] = with_pdf_link(pages[m.page_path], m.id)
    return {PDF_URL.format(id=mid): pdf for mid, pdf in found.items()}


def with_pdf_link(page: str, module_id: str) -> str:
    """The module page's facts line (**Track** ... **Hours** ...) gains a link to the module's PDF."""
    link = f" · **Print** [{module_id} as PDF](../{PDF_URL.format(id=module_id)})"
    return re.sub(r"^(\*\*Track\*\* .*)$", lambda m: m.group(1) + link, page, count=1, flags=re.MULTILINE)


_ASSEMBLE = r"""
async ({chapter, book}) => {
  const here = document.querySelector("article.md-content__inner");
  const norm = p => p.replace(/index\.html$/, "").replace(/\.html$/, "/");
  const inBook = new Set(book.map(u => norm(new URL(u, location.href).pathname)));
  const base = new URL(chapter.url, location.href);
  const doc = new DOMParser().parseFromString(await (await fetch(base)).text(), "text/html");
  const art = doc.querySelector("article.md-content__inner");
  art.querySelectorAll(".md-content__button, a.headerlink, .md-source-file, script").forEach(e => e.remove());
  art.querySelectorAll("details").forEach(d => d.setAttribute("open", ""));
  // an interactive widget (a player, a planner) does not print: say so in its place
  let omitted = 0;
  art.querySelectorAll("[data-player], .tutor-player, canvas").forEach(e => {
    const p = document.createElement("p");
    p.className = "tutor-book-omitted";
    p.textContent = "An interactive element of this page is left out of print; open the page on the site to use it.";
    e.replaceWith(p); omitted += 1;
  });
  art.querySelectorAll("[src]").forEach(e => e.setAttribute("src", new URL(e.getAttribute("src"), base).href));
  art.querySelectorAll("a[href]").forEach(a => {
    const raw = a.getAttribute("href");
    if (raw.startsWith("#")) return;                      // inside the chapter: a link in the PDF
    const u = new URL(raw, base);
    if (u.origin !== location.origin) { a.setAttribute("href", u.href); return; }
    if (norm(u.pathname) === norm(base.pathname) && u.hash) { a.setAttribute("href", u.hash); return; }
    a.removeAttribute("href");  // another chapter, or a page the book does not hold (a player, a lab file)
    if (inBook.has(norm(u.pathname))) a.classList.add("tutor-book-xref");
  });
  const section = document.createElement("section");
  section.className = "tutor-book-chapter";
  section.append(...art.childNodes);
  here.replaceChildren(section);
  document.title = chapter.title;
  return omitted;
}
"""

_FRONT = r"""
({cover, entries}) => {
  const here = document.querySelector("article.md-content__inner");
  const front = document.createElement("div");
  front.className = "tutor-book-front";
  front.innerHTML = `<section class="tutor-book-cover">${cover}</section>` +
                    `<nav class="tutor-book-toc" aria-label="Contents"><h1>Contents</h1><ol></ol></nav>`;
  for (const [title, page] of entries) {
    const li = document.createElement("li");
    li.innerHTML = '<span class="tutor-book-toc-title"></span><span class="tutor-book-toc-page"></span>';
    li.firstChild.textContent = title;
    li.lastChild.textContent = page;
    front.querySelector("ol").append(li);
  }
  here.replaceChildren(front);
}
"""

_STYLE = """(css) => { let s = document.getElementById("tutor-book-page");
  if (!s) { s = document.createElement("style"); s.id = "tutor-book-page"; document.head.append(s); }
  s.textContent = css; }"""

# Code that does not fit its column: a print must wrap it, never cut it.
_OVERFLOW = """() => [...document.querySelectorAll(".tutor-book-chapter pre, .tutor-book-chapter pre > code")]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => (e.innerText || "").slice(0, 60))"""

# Tab panels that print nothing (every CUDA/HIP/Triton panel must print, under its label).
_TABS = """() => [...document.querySelectorAll(".tutor-book-chapter .tabbed-block")].filter(b =>
  getComputedStyle(b).display === "none" || b.getBoundingClientRect().height === 0).length"""


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def page_css(footer: str, first_page: int | None) -> str:
    """Page margins, and a footer of the chapter's title and the book's page number (Chromium's page
    margin boxes: the page counter starts at `first_page`, so separately printed chapters number on)."""
    number = "" if first_page is None else (
        "@bottom-right { content: counter(page); font: 8pt sans-serif; color: #555; } ")
    start = "" if first_page is None else f"@page :first {{ counter-increment: page {first_page}; }}"
    return (f"@page {{ margin: 12mm 12mm 15mm 12mm; {number}"
            f"@bottom-left {{ content: {_css_string(footer)}; font: 8pt sans-serif; color: #555; }} }} {start}")


@dataclass
class BookResult:
    pdf: str
    pages: int
    bytes: int
    starts: dict[str, int]  # chapter key -> the book page it starts on
    chapter_pdfs: dict[str, str] = field(default_factory=dict)  # chapter key -> its own PDF (the book's pages)
    module_pdfs: dict[str, str] = field(default_factory=dict)
    overflowing_code: list[str] = field(default_factory=list)
    hidden_tabs: int = 0
    omitted: dict[str, int] = field(default_factory=dict)  # chapter key -> interactive elements left out


def _browser(pw, executable_path):  # noqa: ANN001
    exe = executable_path or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    return pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)


def _keep_local(route) -> None:  # noqa: ANN001
    url = route.request.url
    if url.startswith(("data:", "blob:", "about:")) or urlparse(url).hostname in ("127.0.0.1", "localhost"):
        route.continue_()
    else:
        route.abort()


def print_book(site_dir: str | Path, out_pdf: str | Path, chapter_list: list[Chapter], *, fmt: str = "A4",
               title: str = "GPU + ML Expert Tutor", subtitle: str = "", front: bool = True,
               executable_path: str | None = None) -> BookResult:
    """Print `chapter_list` from the built site at `site_dir` into one PDF at `out_pdf`.

    Each chapter is printed on its own (one long document makes Chromium's pagination slow beyond
    proportion), numbered on from the last; the cover and contents are printed once to count their
    pages and again with the numbers; pypdf joins the parts and adds a bookmark per chapter. With
    `front` False, the one chapter alone, numbered from 1. Each chapter's part is kept beside the book
    as `<key>.part.pdf`."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    site, out = Path(site_dir), Path(out_pdf)
    out.parent.mkdir(parents=True, exist_ok=True)
    urls = ["/" + page_file(site, c.src) for c in chapter_list]
    cover = (f"<h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p>"
             f"<p>Printed {date.today().isoformat()} from the course's site: {len(chapter_list)} chapters, "
             "each starting on a new page; collapsed solutions are printed open, every code tab under its label.</p>")
    result = BookResult(str(out), 0, 0, {})
    with serve(site) as base, sync_playwright() as pw:
        browser = _browser(pw, executable_path)
        try:
            context = browser.new_context()
            context.route("**/*", _keep_local)
            page = context.new_page()

            def front_matter(entries: list[tuple[str, str]], path: Path) -> int:
                page.goto(base + "index.html", wait_until="load")
                page.emulate_media(media="print")
                page.evaluate(_FRONT, {"cover": cover, "entries": entries})
                page.evaluate(_STYLE, page_css(title, None))
                page.pdf(path=str(path), format=fmt, print_background=True)
                return count_pages(path)

            parts: list[Path] = []
            n_front = 0
            if front:
                front_pdf = out.with_name(out.stem + ".front.pdf")
                n_front = front_matter([(c.title, "999") for c in chapter_list], front_pdf)
            next_page = n_front + 1
            page.goto(base + urls[0].lstrip("/"), wait_until="load")  # one page holds each chapter in turn
            for c, url in zip(chapter_list, urls):
                omitted = page.evaluate(_ASSEMBLE, {"chapter": {"key": c.key, "title": c.title, "url": url},
                                                    "book": urls})
                page.evaluate(_STYLE, page_css(c.title, next_page))
                page.emulate_media(media="print")
                result.overflowing_code += [f"{c.key}: {t}" for t in page.evaluate(_OVERFLOW)]
                result.hidden_tabs += page.evaluate(_TABS)
                if omitted:
                    result.omitted[c.key] = omitted
                part = out.with_name(f"{c.key}.part.pdf")
                page.pdf(path=str(part), format=fmt, print_background=True, outline=True)
                result.starts[c.key] = next_page
                result.chapter_pdfs[c.key] = part.name
                next_page += count_pages(part)
                parts.append(part)
            if front:
                entries = [(c.title, str(result.starts[c.key])) for c in chapter_list]
                if front_matter(entries, front_pdf) != n_front:
                    raise RuntimeError("the contents took more pages with their numbers than without")
                parts.insert(0, front_pdf)
            context.close()
        finally:
            browser.close()
    writer = PdfWriter()
    for part in parts:
        writer.append(str(part), import_outline=not front)
    if front:
        for c in chapter_list:
            writer.add_outline_item(title=c.title, page_number=result.starts[c.key] - 1)
        front_pdf.unlink()
    writer.add_metadata({"/Title": title if front else chapter_list[0].title})
    with open(out, "wb") as fh:
        writer.write(fh)
    if not front:
        for part in parts:
            part.unlink()
        result.chapter_pdfs = {}
    result.pages, result.bytes = count_pages(out), out.stat().st_size
    return result


def build_site(root: Path, dest: Path) -> None:
    """A strict build of the course's site into dest."""
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(dest)], cwd=root,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("mkdocs build --strict failed:\n" + run.stdout[-3000:] + run.stderr[-3000:])


def make_book(root: Path, out_dir: Path | None = None, *, site_dir: Path | None = None, module: str | None = None,
              fmt: str = "A4", executable_path: str | None = None) -> BookResult:
    """The book (or one module) of the course at `root`, printed from `site_dir` or from a fresh build."""
    from .load import load_course

    root = Path(root).resolve()
    course, _ = load_course(root)
    out_dir = Path(out_dir) if out_dir else root / BOOK_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    chapter_list = chapters(course)
    if module:
        chapter_list = [c for c in chapter_list if c.module == module]
        if not chapter_list:
            raise SystemExit(f"tutor book: no module {module!r}")
    tmp = None
    if site_dir is None:
        tmp = tempfile.mkdtemp(prefix="tutor-book-")
        site_dir = Path(tmp) / "site"
        build_site(root, site_dir)
    try:
        if module:
            return print_book(site_dir, out_dir / f"{module}-{fmt.lower()}.pdf", chapter_list, fmt=fmt, front=False,
                              executable_path=executable_path)
        subtitle = getattr(course, "description", "") or ""
        result = print_book(site_dir, out_dir / BOOK_PDF, chapter_list, fmt=fmt, subtitle=subtitle,
                            executable_path=executable_path)
        for c in chapter_list:  # a module's part of the book is its PDF; the other parts go
            part = out_dir / result.chapter_pdfs.pop(c.key)
            if c.module:
                part.replace(out_dir / f"{c.module}.pdf")
                result.module_pdfs[c.module] = f"{c.module}.pdf"
            else:
                part.unlink()
        hashes = json.loads((Path(site_dir) / PAGE_HASHES).read_text(encoding="utf-8"))
        manifest = {"book": BOOK_PDF, "format": fmt, "pages": result.pages, "starts": result.starts,
                    "modules": {mid: {"pdf": name, "page": hashes[mid]} for mid, name in result.module_pdfs.items()}}
        (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        return result
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main(args) -> int:  # noqa: ANN001 - argparse.Namespace
    result = make_book(args.root, args.out, site_dir=args.site, module=args.module, fmt=args.format)
    problems = []
    if result.overflowing_code:
        problems.append(f"{len(result.overflowing_code)} code block(s) wider than the page: {result.overflowing_code[:3]}")
    if result.hidden_tabs:
        problems.append(f"{result.hidden_tabs} tab panel(s) hidden in print")
    print(f"{result.pdf}: {result.pages} pages, {result.bytes / 1e6:.1f} MB")
    for mid, name in result.module_pdfs.items():
        print(f"  {mid}: {name} from page {result.starts[mid]}")
    for p in problems:
        print(f"tutor book: {p}", file=sys.stderr)
    return 1 if problems else 0


def register(sub) -> None:  # noqa: ANN001 - argparse subparsers
    p = sub.add_parser("book", help="print the whole course (or one module) to PDF through Chromium")
    p.add_argument("root", nargs="?", default=".", type=Path)
    p.add_argument("--module", help="print this module alone (e.g. A03) to <out>/<ID>-a4.pdf")
    p.add_argument("--site", type=Path, help="print this built site instead of building one")
    p.add_argument("--out", type=Path, help=f"output folder (default: <root>/{BOOK_DIR.as_posix()})")
    p.add_argument("--format", choices=FORMATS, default="A4")
    p.set_defaults(func=main)
