"""The build's caches: a figure is drawn once per content of what it is drawn from, kept whole on disk,
and redrawn when any of that changes; a figure that fails is never kept."""

from __future__ import annotations

import pytest

from tutor_build import figures
from tutor_build.model import FigureSpec, SourceRef


def spec(draw: str = "common.flow", steps=("load", "compute", "store")) -> FigureSpec:
    return FigureSpec(id="f", draw=draw, args={"steps": list(steps)}, alt="a chain of three steps", caption="c",
                      ref=SourceRef("modules/X/figures.yml", 1))


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """A course root with a records folder, a fresh in-process memo, and a counter of real drawings."""
    (tmp_path / "measurements").mkdir()
    figures.cache_in(tmp_path)
    figures._svg.cache_clear()
    drawn = []
    real = figures._draw
    monkeypatch.setattr(figures, "_draw", lambda *a: drawn.append(a) or real(*a))
    yield tmp_path, drawn
    figures.cache_in(None)
    figures._svg.cache_clear()


def test_an_unchanged_figure_is_read_from_disk_not_redrawn(cached):
    root, drawn = cached
    first = figures.svg(spec())
    assert len(drawn) == 1 and list((root / ".cache" / "figures").rglob("*.svg"))
    figures._svg.cache_clear()  # a new build: nothing in memory
    assert figures.svg(spec()) == first and len(drawn) == 1


def test_a_changed_input_or_record_redraws(cached):
    root, drawn = cached
    figures.svg(spec())
    figures.svg(spec(steps=("load", "store")))  # other arguments: another figure
    assert len(drawn) == 2
    (root / "measurements" / "h200.jsonl").write_text('{"module": "X"}\n')  # a record changed
    figures.svg(spec())
    assert len(drawn) == 3


def test_a_figure_that_fails_is_never_kept(cached):
    root, drawn = cached
    for _ in range(2):
        with pytest.raises(figures.FigureError):
            figures.svg(spec(draw="common.no_such_drawing"))
    assert not list((root / ".cache" / "figures").rglob("*.svg"))


# ---------------------------------------------------------------- the page cache, through real builds
def _build(root, dest):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(dest)], cwd=root,
                          capture_output=True, text=True)


def _site(dest) -> dict[str, bytes]:
    """Every file of a built site; the gzipped sitemap compared by its content (gzip stamps a time)."""
    import gzip

    files = {}
    for p in sorted(dest.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            files[p.relative_to(dest).as_posix()] = gzip.decompress(data) if p.suffix == ".gz" else data
    return files


def test_a_build_from_the_page_cache_equals_one_without_it(course_dir, tmp_path):
    import shutil

    shutil.rmtree(course_dir / ".cache", ignore_errors=True)  # the shared course may have been built before
    config = course_dir / "mkdocs.yml"
    text = config.read_text()
    assert "  - tutor\n" in text
    config.write_text(text.replace("  - tutor\n", "  - tutor:\n      page_cache: false\n"))
    done = _build(course_dir, tmp_path / "off")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (course_dir / ".cache" / "pages").exists()
    config.write_text(text)
    for name in ("cold", "warm"):
        done = _build(course_dir, tmp_path / name)
        assert done.returncode == 0, done.stderr[-2000:]
    kept = list((course_dir / ".cache" / "pages").rglob("*.json"))
    pages = [p for p in (tmp_path / "cold").rglob("*.html") if p.name != "404.html"]  # 404 is a bare template
    assert len(kept) == len(pages) > 5  # every page was kept, so the warm build took them all
    off, cold, warm = (_site(tmp_path / n) for n in ("off", "cold", "warm"))
    assert off.keys() == cold.keys() == warm.keys()
    assert [k for k in off if not off[k] == cold[k] == warm[k]] == []


def test_an_edit_shows_in_the_next_build_and_a_broken_page_is_never_kept(course_dir, tmp_path):
    assert _build(course_dir, tmp_path / "first").returncode == 0
    section = course_dir / "modules/A01-fake-basics/7-production.md"
    original = section.read_text()
    section.write_text(original + "\nA sentence added after the first build.\n")
    for lab in ("cuda/vec_exercise.cu", "hip/vec_exercise.hip"):  # line for line; no record measures them
        path = course_dir / "labs/A01" / lab
        path.write_text(path.read_text() + "// a comment added after the first build\n")
    assert _build(course_dir, tmp_path / "second").returncode == 0
    html = "\n".join(p.read_text() for p in (tmp_path / "second").rglob("*.html"))
    assert "A sentence added after the first build." in html
    assert "a comment added after the first build" in html  # a lab file the page includes changed
    section.write_text(original + "\nSee [the missing page](../nowhere.md).\n")
    for name in ("third", "fourth"):  # the page that warned was not kept: the second build warns again
        done = _build(course_dir, tmp_path / name)
        assert done.returncode != 0 and "nowhere.md" in done.stderr


def test_a_page_key_covers_the_files_its_snippets_include(tmp_path):
    from types import SimpleNamespace

    from tutor_build.render.page_cache import PageCache

    (tmp_path / "part.md").write_text("first\n")
    config = {"markdown_extensions": ["toc"], "mdx_configs": {}}
    files = [SimpleNamespace(src_uri="index.md")]
    cache = PageCache(tmp_path / ".cache", tmp_path, config, files, glossary=())
    try:
        page = SimpleNamespace(file=SimpleNamespace(src_uri="index.md", dest_uri="index.html"), url="")
        markdown = 'Intro.\n\n--8<-- "part.md"\n'
        before = cache.key(markdown, page, {})
        (tmp_path / "part.md").write_text("second\n")
        assert cache.key(markdown, page, {}) != before
        assert cache.key("--8<--\npart.md\n--8<--\n", page, {}) is None  # the block form is never kept
        drawn = {"fig-a": "<svg>1</svg>"}
        with_figure = cache.key("{fig-a}", page, drawn)
        assert cache.key("{fig-a}", page, {"fig-a": "<svg>2</svg>"}) != with_figure  # a redrawn figure
    finally:
        cache.close()
