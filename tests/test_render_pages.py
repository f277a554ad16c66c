"""The page machinery of the render step, piece by piece: display math anywhere, the raw-TeX gate, inline
figures, lab excerpts, module mentions, glossary tooltips, the SVG canvas's limits."""

from __future__ import annotations

import textwrap
from pathlib import Path

import markdown
import pytest

from tutor_build.model import Course, GlossaryEntry, SourceRef
from tutor_build.render.excerpts import answer_parts, excerpt_parts, rewrite_includes
from tutor_build.render.glossary import mark_terms
from tutor_build.render.inline import inline_figures, raw_tex
from tutor_build.render.math import stash_display_math, tex_to_mathml
from tutor_build.render.modlinks import link_modules, mentions
from tutor_build.render.svg import Canvas

ROOT = Path(__file__).resolve().parents[1]


def to_html(md_text: str) -> str:
    text, stash = stash_display_math(md_text)
    return tex_to_mathml(markdown.markdown(text, extensions=["pymdownx.arithmatex", "pymdownx.superfences"],
                                           extension_configs={"pymdownx.arithmatex": {"generic": True}}), stash)


def test_display_math_inside_a_list_item_renders_as_mathml():
    page = to_html(textwrap.dedent("""\
        1. The time is at least
           $$
           T \\ge \\frac{Q}{B}
           $$
           so the kernel cannot be faster.
        2. Next step.
        """))
    assert page.count("<math") == 1 and 'display="block"' in page and "<mfrac>" in page
    assert raw_tex(page) == [] and "$$" not in page
    assert page.index("<li>") < page.index("<math") < page.index("Next step")


def test_display_math_in_code_is_left_alone_and_unrendered_tex_is_caught():
    page = to_html("```text\n$$\nx\n$$\n```\n")
    assert "$$" in page and raw_tex(page) == []  # in code: fine
    assert raw_tex("<p>so $$ x = \\frac{1}{2} $$ holds</p>")
    assert raw_tex("<p>the term \\(a+b\\) stayed</p>")
    assert raw_tex("<p>costs $5 and $6</p>") == []


def test_inline_figure_tokens_become_figures_and_a_lost_token_is_reported():
    html = '<p>@@TUTOR-SVG:A01-x@@ <strong>Figure A01.1.</strong> A caption. @@END-SVG@@</p>'
    out, missing = inline_figures(html, {"A01-x": '<svg role="img"></svg>'})
    assert out == ('<figure class="tutor-figure" id="fig-a01-x"><svg role="img"></svg><figcaption><strong>Figure A01.1.'
                   '</strong> A caption.</figcaption></figure>') and missing == []
    _, missing = inline_figures(html, {})
    assert missing == ["A01-x"]
    # A token inside a list item has no </p> of its own: its caption must not swallow the next token.
    two = ('<li><p>@@TUTOR-SVG:a@@ first @@END-SVG@@ text</p></li><p>@@TUTOR-SVG:b@@ second @@END-SVG@@</p>')
    out, missing = inline_figures(two, {"a": "<svg>A</svg>", "b": "<svg>B</svg>"})
    assert missing == [] and out.count("<figure") == 2 and "<figcaption>first</figcaption>" in out


def test_excerpts_show_kernels_and_a_solution_shows_only_its_answer():
    exercise = ROOT / "labs/A02/cuda/transpose_exercise.cu"
    lines = exercise.read_text().splitlines()
    shown = "\n".join("\n".join(lines[p.first - 1:p.last]) for p in excerpt_parts(exercise))
    assert "__global__ void naive_row" in shown and "TODO 1" in shown
    assert len(shown.splitlines()) < len(lines)
    answer = answer_parts(ROOT, "labs/A02/cuda/transpose.cu")
    solution = (ROOT / "labs/A02/cuda/transpose.cu").read_text().splitlines()
    text = "\n".join("\n".join(solution[p.first - 1:p.last]) for p in answer)
    assert "__global__ void naive_row" in text and "TODO" not in text
    md_text, linked = rewrite_includes('```cuda title="labs/A02/cuda/transpose.cu"\n--8<-- "labs/A02/cuda/transpose.cu"\n```\n', ROOT)
    assert "--8<--" not in md_text and linked == {"labs/A02/cuda/transpose.cu": "cuda"}
    assert "[labs/A02/cuda/transpose.cu](../code/labs/A02/cuda/transpose.cu.md)" in md_text


def test_python_excerpts_keep_the_jit_kernel_and_its_launch():
    path = ROOT / "labs/A01/triton/vector_add_exercise.py"
    lines = path.read_text().splitlines()
    text = "\n".join("\n".join(lines[p.first - 1:p.last]) for p in excerpt_parts(path))
    assert "@triton.jit" in text and "def add_kernel" in text
    assert "add_kernel[(" in text and "def main" not in text  # the launch: kernel[grid](...), not the driver


def _course() -> Course:
    from tutor_build.load import load_course

    return load_course(ROOT)[0]


def test_module_mentions_link_written_modules_and_mark_planned_ones():
    course = _course()
    planned = next(m for m in sorted(course.planned) if m not in {x.id for x in course.modules})
    title = course.planned[planned]
    text = f"See A02 for sectors and {planned} for more; `{planned}` in code and [{planned}](x.md) stay."
    out = link_modules(text, course, "modules/A01-gpu-mental-model.md", own_id="A01")
    assert "[A02](A02-memory-coalescing.md)" in out
    assert (f'<span class="tutor-planned" title="{planned} {title}: planned, not written yet">{planned} (planned)</span>'
            in out)
    assert f"`{planned}`" in out and f"[{planned}](x.md)" in out
    assert mentions("A01 itself and A04\n```\nA05\n```\n# A06 heading") == [(1, "A01"), (1, "A04")]


def test_glossary_marks_the_first_use_only_and_never_inside_code_or_links():
    entry = GlossaryEntry("HBM", "High Bandwidth Memory", "The GPU's stacked DRAM.", "", SourceRef("glossary.yml"))
    html = '<p><code>HBM</code> and <a href="#">HBM</a>, then HBM and HBM again.</p>'
    out = mark_terms(html, (entry,))
    assert out.count("<abbr") == 1
    assert out == ('<p><code>HBM</code> and <a href="#">HBM</a>, then <abbr title="High Bandwidth Memory: The GPU&#x27;s '
                   'stacked DRAM.">HBM</abbr> and HBM again.</p>')


def test_a_term_inside_another_terms_definition_is_not_marked_inside_the_tooltip():
    ref = SourceRef("glossary.yml")
    entries = (GlossaryEntry("H200", "", "An NVIDIA GPU with HBM.", "", ref),
               GlossaryEntry("HBM", "", "Stacked memory.", "", ref), GlossaryEntry("NVIDIA", "", "A GPU designer.", "", ref))
    out = mark_terms("<p>The H200 has HBM.</p>", entries)
    assert out == ('<p>The <abbr title="An NVIDIA GPU with HBM.">H200</abbr> has <abbr title="Stacked memory.">HBM</abbr>.</p>')


@pytest.mark.parametrize("bad", [lambda: Canvas(600, 100), lambda: Canvas(400, 100).text(0, 0, "tiny", size=10),
                                 lambda: Canvas(400, 100).rect(0, 0, 1, 1, fill="#ff0000"),
                                 lambda: Canvas(400, 100).render("")])
def test_the_canvas_refuses_what_a_phone_or_a_dark_page_cannot_show(bad):
    with pytest.raises(ValueError):
        bad()


def test_every_command_a_module_page_suggests_is_one_the_cli_accepts():
    """`tutor ...` commands in the generated module pages (the "What to do next" box included) parse."""
    import re
    import subprocess
    import sys

    from tutor_build.load import load_course
    from tutor_build.render.pages import render_site

    course, _ = load_course(ROOT)
    site = render_site(course, {"cards/index.md"})
    commands = set()
    for m in course.modules:
        page = site.pages[m.page_path]
        commands |= set(re.findall(r"`(tutor labs [a-z]+ [^`]+)`", page))
    for m in course.modules:  # the next-steps box names only a vendor the module has a lab for
        box = next(c for c in commands if c.startswith(f"tutor labs verify {m.id}") and c.endswith("--exercise"))
        vendor = re.search(r"--vendor (\w+)", box)
        assert vendor is None or vendor.group(1) in {p for lab in m.labs for p in lab.paths}, (m.id, box)
    for command in sorted(commands):
        args = command.split()[1:] + ["--help"]
        done = subprocess.run([sys.executable, "-m", "tutor_build.cli", *args], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, f"{command}: {done.stderr[-400:]}"


# ---------------------------------------------------------------- errata and profiler counters
def test_the_errata_page_lists_every_correction_and_each_module_links_its_own():
    from tutor_build.load import load_course
    from tutor_build.render.errata import anchor
    from tutor_build.render.pages import render_site

    course, _ = load_course(ROOT)
    site = render_site(course)
    page = site.pages["errata.md"]
    corrected = [m for m in course.modules if m.errata]
    assert corrected, "the course has corrections: modules/<ID>/errata.yml"
    for m in corrected:
        assert f"{{ #{anchor(m)} }}" in page
        assert page.count("- **Was:**") >= len(m.errata)
        for e in m.errata:
            assert f"- **Was:** {e.wrong}" in page and f"- **Now:** {e.right}" in page
        assert f"[{len(m.errata)} listed in the errata](../errata.md#{anchor(m)})" in site.pages[m.page_path]
    assert page.count("- **Was:**") == sum(len(m.errata) for m in corrected)
    uncorrected = [m for m in course.modules if not m.errata]
    assert all("listed in the errata" not in site.pages[m.page_path] for m in uncorrected)


def test_nsight_compute_csv_is_read_by_column_name_and_counters_read_as_plurals():
    from tutor_build.labs.profile import parse_csv
    from tutor_build.model import Measurement
    from tutor_build.render.measured import unit_of

    text = ('==PROF== Connected to process 1\n{"event": "check"}\n'
            '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","naive_row(const float *, float *, int, int)","Command line profiler metrics",'
            '"lts__t_requests_srcunit_tex_op_write.sum","request","268,435,456"\n'
            '"0","naive_row(const float *, float *, int, int)","Command line profiler metrics",'
            '"lts__t_sectors_srcunit_tex_op_write.sum","sector","n/a"\n')
    assert parse_csv(text) == {"lts__t_requests_srcunit_tex_op_write.sum":
                               (268435456.0, "request", "naive_row(const float *, float *, int, int)")}

    def rec(value, unit, kind):
        return Measurement(key="k", metric="m", value=value, unit=unit, gpu="g", toolkit="t", date="d",
                           ceiling_name="", ceiling_value=0.0, ceiling_unit=unit, source=(), source_sha256="",
                           local=False, ref=SourceRef("x", 1), raw={"kind": kind} if kind else {})
    assert unit_of(rec(268435456, "request", "counter")) == "requests"
    assert unit_of(rec(8388608, "inst", "counter")) == "instructions"
    assert unit_of(rec(275456177, "count", "counter")) == ""
    assert unit_of(rec(1, "sector", "counter")) == "sector"
    assert unit_of(rec(3.0, "GB/s", None)) == "GB/s"


def test_search_text_keeps_each_identifier_once_per_section():
    from tutor_build.render.searchtext import plain_code

    page = ('<h2 id="a">Lab</h2><pre><span>cudaMalloc</span>(&amp;x, n); kernel&lt;&lt;&lt;g, b&gt;&gt;&gt;(x)</pre>'
            '<pre>hipMalloc(&amp;x, n); kernel(x)</pre><h2 id="b">Next</h2><pre>cudaMalloc(x)</pre>')
    out = plain_code(page)
    blocks = [b.split() for b in __import__("re").findall(r"<pre>(.*?)</pre>", out)]
    assert blocks == [["cudaMalloc", "kernel"], ["hipMalloc"], ["cudaMalloc"]]


def test_highlighting_keeps_only_the_spans_that_colour_something():
    from tutor_build.render.highlight_cache import lighter

    code = ('<span class="kt">float</span><span class="w"> </span><span class="n">x</span>'
            '<span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="mf">1.0f</span>'
            '<span class="p">;</span><span class="nf">f</span>')
    assert lighter(code) == ('<span class="kt">float</span> x <span class="o">=</span> <span class="mf">1.0f</span>'
                             '<span class="p">;</span><span class="nf">f</span>')


def test_the_profiled_kernel_is_matched_by_name_with_or_without_template_arguments(tmp_path):
    import re

    from tutor_build.labs.profile import Counters, ncu_command

    c = Counters("B04", "fp8_codec", "encode_kernel", 3, ("--bench",), ("smsp__inst_executed.sum",), 1)
    cmd = ncu_command("./build/x", c, tmp_path / "log.csv")
    assert cmd[:4] == ["ncu", "--csv", "--clock-control", "none"]
    pattern = cmd[cmd.index("-k") + 1].removeprefix("regex:")
    assert re.match(pattern, "encode_kernel<0>") and re.match(pattern, "encode_kernel")
    assert not re.match(pattern, "encode_kernel_hw") and not re.match(pattern, "hw_encode_kernel")
    assert cmd[cmd.index("--launch-skip") + 1] == "3" and cmd[-2:] == ["./build/x", "--bench"]


def test_a_solution_excerpt_answers_the_todos_and_leaves_extra_variants_to_the_whole_file():
    solution = (ROOT / "labs/B04/cuda/quantize.cu").read_text().splitlines()
    text = "\n".join("\n".join(solution[p.first - 1:p.last]) for p in answer_parts(ROOT, "labs/B04/cuda/quantize.cu"))
    assert "quantize_mx" in text  # the kernel whose TODOs the exercise asks for
    assert "amax_vec" not in text and "void verify" not in text  # a variant the exercise lacks; the driver
    python = (ROOT / "labs/B04/triton/quantize.py").read_text().splitlines()
    shown = [python[p.first - 1] for p in answer_parts(ROOT, "labs/B04/triton/quantize.py")]
    assert not any(line.startswith('"""') for line in shown)  # never the module docstring
