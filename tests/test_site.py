"""A real strict MkDocs build of the fake course, the generated module page, and the failing build."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tutor_build.load import load_course
from tutor_build.model import SECTION_SPECS
from tutor_build.render.pages import render_site

MKDOCS = [sys.executable, "-m", "mkdocs"]


def build(root: Path, dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MKDOCS, "build", "--strict", "-d", str(dest)], cwd=root, capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, pristine_course):
    dest = tmp_path_factory.mktemp("site")
    done = build(pristine_course, dest)
    assert done.returncode == 0, done.stderr[-3000:]
    return dest


def test_module_page_has_nine_sections_in_order_with_anchors(pristine_course):
    course, _ = load_course(pristine_course)
    page = render_site(course).pages["modules/A02-fake-coalescing.md"]
    headings = re.findall(r"^## (\d) · .+ \{ #([a-z-]+) \}$", page, re.MULTILINE)
    assert headings == [(str(s.number), s.key) for s in SECTION_SPECS]
    outline = re.search(r'<nav class="tutor-outline".*</nav>', page).group(0)
    assert [a for a in re.findall(r"\(#([a-z-]+)\)", outline)] == [s.key for s in SECTION_SPECS]
    assert "[A01 Fake basics](A01-fake-basics.md)" in page  # prerequisites link to their pages
    assert "### Where the analogy breaks" in page  # subsections demoted under the section heading


def test_placeholders_citations_and_sources_render(pristine_course):
    course, _ = load_course(pristine_course)
    site = render_site(course)
    page = site.pages["modules/A01-fake-basics.md"]
    assert "**3,000 GB/s**, 75% of the 4,000 GB/s device-to-device copy (measured on NVIDIA H200, CUDA 13.0, 2026-11-29)" in page
    assert "{{" not in page and "[@" not in page
    assert '<span id="ref-vendor-sheet"></span>**[1]** NVIDIA. *H200 datasheet*, 2024.' in page
    assert "<sup>[1](#ref-vendor-sheet)</sup>" in page
    svg = site.assets["assets/generated/plots/a01-vec.svg"]
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "3,000 GB/s" in svg


def test_strict_build_renders_every_page_offline(built):
    page = (built / "modules/A01-fake-basics/index.html").read_text()
    assert "<math" in page and 'class="arithmatex"' not in page  # TeX became MathML at build time
    assert (built / "assets/generated/plots/a01-vec.svg").is_file()
    assert (built / "curriculum/index.html").read_text().count('<rect class="node') == 2
    for html in built.rglob("*.html"):
        text = html.read_text()
        remote = re.findall(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="(https?:)?//', text)
        assert not remote, f"{html} loads something from another host"
        assert "fonts.googleapis" not in text


def test_tabs_are_linked_and_code_has_copy_buttons(built):
    page = (built / "modules/A01-fake-basics/index.html").read_text()
    assert 'class="tabbed-set tabbed-alternate"' in page
    for label in ("CUDA", "HIP", "Triton"):
        assert f">{label}</label>" in page
    config = (built / "index.html").read_text()
    assert '"content.tabs.link"' in config and '"content.code.copy"' in config


def test_a_failed_build_reports_every_error_at_once(course_dir, tmp_path):
    sec = course_dir / "modules/A01-fake-basics/6-tradeoffs.md"
    sec.write_text(sec.read_text().replace("## When not to do this", "## Otherwise"))
    meta = course_dir / "modules/A02-fake-coalescing/module.yml"
    meta.write_text(meta.read_text().replace("concepts:", "concept:"))
    done = build(course_dir, tmp_path / "site")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "modules/A01-fake-basics/6-tradeoffs.md:1: E362" in done.stderr
    assert "modules/A02-fake-coalescing/module.yml:7: E102 unknown key 'concept'" in done.stderr
    assert "modules/A02-fake-coalescing/module.yml:1: E101 missing required key 'concepts'" in done.stderr
    assert not (tmp_path / "site" / "index.html").exists()  # never a half-written site


def test_a_broken_link_fails_the_strict_build(course_dir, tmp_path):
    sec = course_dir / "modules/A01-fake-basics/7-production.md"
    sec.write_text(sec.read_text() + "\nSee [the missing page](../nowhere.md) and [an anchor](#no-such-anchor).\n")
    done = build(course_dir, tmp_path / "site")
    assert done.returncode != 0
    assert "nowhere.md" in done.stderr and "no-such-anchor" in done.stderr
