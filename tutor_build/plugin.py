"""The MkDocs plugin: a thin adapter. Load and check in on_config, add generated pages in on_files,
turn TeX into MathML in on_page_content. The work happens in load, checks and render."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from . import figures
from .checks import run_all
from .diagnostics import ERROR, NOT_STRICT, WARNING
from .book import link_pdfs
from .load import load_course
from .notebooks import colab_base
from .render.citations import Numberer
from .render import highlight_cache
from .render.glossary import mark_terms
from .render.inline import inline_figures, raw_tex, without_svg
from .render.modlinks import link_modules
from .render.math import stash_display_math, tex_to_mathml
from .render.searchtext import plain_code
from .render.measured import Filler
from .render.page_cache import PageCache
from .render.pages import Site, render_site

log = logging.getLogger("mkdocs.plugins.tutor")
WATCHED = ("modules", "labs", "cards", "sheets", "measurements", "references.yml", "curriculum.yml")


def build_nav(course, docs_dir: Path) -> list:
    """Home, curriculum, one section per track (its page, then its modules), the learner tools, reference."""
    def present(entries: list[tuple[str, str]]) -> list[dict]:
        return [{title: path} for title, path in entries if (docs_dir / path).is_file()]

    tracks = []
    for track, title in course.tracks.items():
        mods = [m for m in course.modules if m.track == track]
        if mods:
            tracks.append({f"{track}: {title}": [f"tracks/{track}.md"] + [{f"{m.id} {m.title}": m.page_path} for m in mods]})
    tools = present([("Study planner", "planner/index.md"), ("Recall cards", "cards/index.md"),
                     ("Concept players", "players/index.md")])
    tools += [{"Reference sheets": "sheets/index.md"}]
    reference = present([("Setup", "SETUP.md"), ("Triton primer", "primers/triton.md"),
                         ("Writing a module", "AUTHORING.md")]) + [{"Bibliography": "references.md"}]
    if course.glossary:
        reference.append({"Glossary": "glossary.md"})
    reference.append({"Errata": "errata.md"})
    return [{"Home": "index.md"}, {"Curriculum": "curriculum.md"}, {"Tracks": tracks}, {"Tools": tools},
            {"Reference": reference}]


def _plain_math_in_toc(items) -> None:  # noqa: ANN001 - MkDocs' TableOfContents
    """A heading's inline math reaches the table of contents as TeX source; show its letters instead."""
    for item in items or ():
        item.title = re.sub(r"\\\((.+?)\\\)", lambda m: m.group(1).replace("\\", ""), item.title)
        _plain_math_in_toc(item.children)


class TutorConfig(Config):
    enabled = c.Type(bool, default=True)
    root = c.Type(str, default=".")
    highlight_cache = c.Type(bool, default=True)
    # "Open in Colab" opens the notebooks of the published site from this branch of repo_url (mkdocs gh-deploy)
    notebook_branch = c.Type(str, default="gh-pages")
    figure_cache = c.Type(bool, default=True)  # drawn figures kept in <root>/.cache/figures
    page_cache = c.Type(bool, default=True)  # converted pages kept in <root>/.cache/pages (render/page_cache.py)


class TutorPlugin(BasePlugin[TutorConfig]):
    def __init__(self) -> None:
        self.site: Site | None = None
        self.course = None
        self.page_problems: list[str] = []  # raw TeX and missing figures, reported together before writing
        self.svgs: dict[str, str] = {}
        self.pdfs: dict[str, Path] = {}
        self.pages: PageCache | None = None

    def _root(self, config: MkDocsConfig) -> Path:
        return (Path(config.config_file_path).parent / self.config.root).resolve()

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if not self.config.enabled:
            return None
        course, load_diags = load_course(self._root(config))
        figures.cache_in(self._root(config) if self.config.figure_cache else None)  # before the checks draw them
        diags = run_all(course, load_diags)
        errors = [d for d in diags if d.severity == ERROR]
        if errors:
            listing = "\n".join(d.format() for d in errors)
            raise PluginError(f"the course has {len(errors)} contract error(s):\n{listing}")
        for d in diags:
            if d.severity == WARNING:  # a planned module is a fact of the course's growth, not a problem
                (log.info if d.code in NOT_STRICT else log.warning)(d.format())
        self.course = course
        if self.config.highlight_cache:
            highlight_cache.install(self._root(config) / ".cache" / "highlight")
        docs = Path(config.docs_dir)
        colab = colab_base(config.repo_url or "", self.config.notebook_branch)
        self.site = render_site(course, {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}, colab=colab)
        self.pdfs = link_pdfs(self._root(config), self.site.pages, self.site.assets, course.modules)
        self.svgs = dict(self.site.inline_svg)
        self.page_problems = []
        if config.nav is None:
            config.nav = build_nav(course, Path(config.docs_dir))
        return config

    @event_priority(-100)
    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        if not self.site:
            return files
        for path, content in {**self.site.pages, **self.site.assets}.items():
            existing = files.get_file_from_path(path)
            if existing is not None:
                files.remove(existing)
            files.append(File.generated(config, path, content=content))
        for path, pdf in self.pdfs.items():  # module PDFs that `tutor book` printed from these very pages
            files.append(File.generated(config, path, abs_src_path=str(pdf)))
        if self.config.page_cache:
            self._close_page_cache()
            self.pages = PageCache(self._root(config) / ".cache" / "pages", self._root(config), config, files,
                                   self.course.glossary)
        return files

    def _close_page_cache(self) -> None:
        if self.pages is not None:
            self.pages.close()
            self.pages = None

    def on_page_markdown(self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        markdown = self._markdown(markdown, page, config, files)
        page.tutor_cached = None
        if self.pages is not None:
            self.pages.start()
            page.tutor_page_key = self.pages.key(markdown, page, self.svgs)
            page.tutor_cached = self.pages.get(page.tutor_page_key)
            if page.tutor_cached is not None:
                return ""  # nothing to convert: on_page_content puts the kept page back
        return markdown

    def _markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Display math is taken out before Markdown parses the page; hand-written pages (players, setup) may
        cite sources and quote measurements too."""
        markdown, page.tutor_display_math = stash_display_math(markdown)
        if not self.site:
            return markdown
        own = next((m.id for m in self.course.modules if m.page_path == page.file.src_uri), "")
        markdown = link_modules(markdown, self.course, page.file.src_uri, own)
        if page.file.src_uri in self.site.pages:
            return markdown
        depth = page.file.src_uri.count("/")
        numberer = Numberer(dict(self.course.references), target="../" * depth + "references.md#ref-{key}")
        filler = Filler(self.course)
        markdown = numberer.replace(filler.fill(markdown, asset_prefix="../" * depth))
        self.svgs.update(filler.inline)
        for path, svg in filler.plots.items():
            if files.get_file_from_path(path) is None:
                files.append(File.generated(config, path, content=svg))
        return markdown

    def on_page_content(self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if getattr(page, "tutor_cached", None) is not None:
            return self.pages.restore(page.tutor_cached, page, files)
        problems = len(self.page_problems)
        html = self._content(html, page)
        if self.pages is not None:
            self.pages.keep(page.tutor_page_key, page, html, clean=len(self.page_problems) == problems)
        return html

    def _content(self, html: str, page: Page) -> str:
        html = tex_to_mathml(html, getattr(page, "tutor_display_math", {}))
        _plain_math_in_toc(page.toc)
        if not self.site:
            return html
        if page.file.src_uri != "glossary.md" and not page.file.src_uri.startswith("code/"):
            html = mark_terms(html, self.course.glossary)
        html, missing = inline_figures(html, self.svgs)
        where = page.file.src_uri
        self.page_problems += [f"{where}: figure or plot {key} was not drawn" for key in missing]
        self.page_problems += [f"{where}: TeX left unrendered: ...{snippet}..." for snippet in raw_tex(html)]
        return html

    def on_env(self, env, /, *, config: MkDocsConfig, files: Files):  # noqa: ANN001
        """Every page has been converted and none written yet: refuse the build here, all problems at once."""
        if self.page_problems:
            listing = "\n".join(self.page_problems)
            raise PluginError(f"{len(self.page_problems)} page problem(s):\n{listing}")
        return env

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.pages is not None:
            log.debug(f"tutor: {self.pages.hits} page(s) from the page cache")
        self._close_page_cache()

    def on_build_error(self, *, error: Exception) -> None:
        self._close_page_cache()

    # The search plugin parses every page's HTML tag by tag; highlighted code is a tag per token, most of the
    # build's time. It indexes only text, so hand it the page with the highlighting spans removed, then put
    # the highlighted page back for the theme.
    @event_priority(100)
    def _code_as_plain_text_for_search(self, context, /, *, page: Page, config: MkDocsConfig, nav):  # noqa: ANN001
        page.tutor_highlighted = page.content
        page.content = plain_code(without_svg(page.content or ""))
        return context

    @event_priority(-100)
    def _highlighted_code_for_the_theme(self, context, /, *, page: Page, config: MkDocsConfig, nav):  # noqa: ANN001
        page.content = getattr(page, "tutor_highlighted", page.content)
        return context

    on_page_context = CombinedEvent(_code_as_plain_text_for_search, _highlighted_code_for_the_theme)

    def on_serve(self, server, /, *, config: MkDocsConfig, builder):  # noqa: ANN001 - livereload types
        root = self._root(config)
        for name in WATCHED:
            if (root / name).exists():
                server.watch(str(root / name))
        return server


def build_with(config_file: Path, site_dir: Path, **overrides) -> None:  # noqa: ANN003 - mkdocs.yml keys
    """Build the site of `config_file` into `site_dir` with some of its keys replaced (`tutor bundle`)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    mk = logging.getLogger("mkdocs")
    shown = logging.StreamHandler()  # the warnings that fail a strict build, named as `mkdocs build` names them
    shown.setLevel(logging.WARNING)
    mk.addHandler(shown)
    try:
        build(load_config(config_file=str(config_file), site_dir=str(site_dir), **overrides))
    except Abort as exc:
        raise RuntimeError(f"the build failed: {exc}") from exc
    finally:
        mk.removeHandler(shown)

