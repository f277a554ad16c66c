"""The lab notebooks (tutor_build/notebooks.py): one per Triton and PyTorch lab file, exercise and solution,
generated from the file (never a second copy), with the page's explanation, the set-up and the check; the
site's "Download notebook" and "Open in Colab" links; and the notebooks of two modules executed on the CPU
through nbconvert: the solution passes, the untouched exercise fails with the lab's own message."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from fakecourse import make_course
from tutor_build import notebooks as nbs
from tutor_build.load import load_course
from tutor_build.render.pages import render_site

ROOT = Path(__file__).resolve().parents[1]
GENERATED = {"intro", "kit", "setup", "check-intro", "check"}  # the cells that are not the lab's file


@pytest.fixture(scope="module")
def course():
    return load_course(ROOT)[0]


@pytest.fixture(scope="module")
def generated(course):
    return nbs.notebooks(course)


def test_every_triton_and_pytorch_lab_file_has_a_notebook(course, generated):
    files = sorted(p.relative_to(ROOT).as_posix() for vendor in nbs.VENDORS for p in ROOT.glob(f"labs/*/{vendor}/*.py")
                   if not p.is_relative_to(ROOT / "labs/common"))  # the kit itself is no lab
    assert files, "no Triton or PyTorch lab found"
    assert sorted(generated) == sorted(f[:-3] + ".ipynb" for f in files)
    for m in course.modules:  # each lab with a Python path: its exercise and its solution
        for spec in m.labs:
            for vendor in set(spec.paths) & set(nbs.VENDORS):
                for stem in (spec.name, f"{spec.name}_exercise"):
                    assert f"labs/{m.id}/{vendor}/{stem}.ipynb" in generated


def test_generation_is_deterministic_and_the_cli_writes_the_same_bytes(tmp_path, generated, capsys):
    from tutor_build.cli import main

    assert main(["notebooks", str(ROOT), "--out", str(tmp_path)]) == 0  # a fresh load of the course
    written = {p.relative_to(tmp_path).as_posix(): p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.ipynb")}
    assert written == generated  # same bytes: fixed cell ids, sorted keys, nothing random or dated
    assert f"{len(generated)} notebooks written under {tmp_path}" in capsys.readouterr().out


def test_each_notebook_is_its_lab_file_between_set_up_and_check(generated):
    for rel, text in generated.items():
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
        source = (ROOT / (rel[:-6] + ".py")).read_text(encoding="utf-8")
        assert nbs.lab_source(nb) == source, f"{rel} drifted from its lab file"
        roles = [c.metadata["tutor"]["role"] for c in nb.cells]
        assert roles[:3] == ["intro", "kit", "setup"] and roles[-2:] == ["check-intro", "check"], rel
        assert set(roles) - GENERATED <= {"docstring", "source"}
        # Without the generated cells, the code cells are the file's code, in its order (blank lines aside).
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code" and c.metadata["tutor"]["role"] not in GENERATED)
        doc = next(c for c in nb.cells if c.metadata["tutor"]["role"] == "docstring")
        assert re.sub(r"\n\s*\n", "\n", code).strip() == re.sub(
            r"\n\s*\n", "\n", source.split(doc.source, 1)[1].split("\n", 1)[1]).strip(), rel
        check = nb.cells[-1].source  # the lab's main() in the notebook; the file, for a lab that spawns processes
        assert nb.cells[-1].cell_type == "code"
        assert ("subprocess.run([sys.executable, __file__, *ARGS]" in check) == nbs.spawns(source), rel
        assert "status = main()" in check or nbs.spawns(source)
        for cell in nb.cells:  # each code cell is whole statements
            if cell.cell_type == "code":
                compile(cell.source, rel, "exec", flags=__import__("__future__").annotations.compiler_flag)
        assert nb.metadata["tutor"]["exercise"] == rel.endswith("_exercise.ipynb")


def test_set_up_cell_finds_the_kit_and_selects_the_interpreter_without_a_gpu(course):
    f = next(f for f in nbs.lab_files(course) if f.rel == "labs/B04/triton/quantize.py")
    nb = nbs.build_notebook(course, f)
    setup = next(c.source for c in nb.cells if c.metadata["tutor"]["role"] == "setup")
    assert 'os.environ["TRITON_INTERPRET"] = "1"' in setup and '["--quick"]' in setup
    assert "__file__ = str(ROOT / LAB)" in setup and "LAB = 'labs/B04/triton/quantize.py'" in setup
    kit = next(c for c in nb.cells if c.metadata["tutor"]["role"] == "kit")
    namespace: dict = {}
    exec(kit.source, namespace)  # the embedded files are the course's files, exactly
    assert namespace["TUTOR_KIT_FILES"] == {rel: (ROOT / rel).read_text(encoding="utf-8") for rel in (
        "labs/common/python/tutor_lab.py", "labs/B04/triton/fp8_codec.py")}  # quantize imports fp8_codec


def test_intro_is_the_labs_own_paragraphs_from_its_module_page(course, generated):
    section = course.module("A01").section("labs").text
    heading, intro = nbs.intro_markdown(course, course.module("A01"), "vector_add")
    assert heading == "Lab 1 · `vector_add`: your first kernel"
    assert intro.startswith("**Goal.** Write $c_i = a_i + b_i$") and intro in section
    nb = nbformat.reads(generated["labs/A01/triton/vector_add_exercise.ipynb"], as_version=4)
    assert intro in nb.cells[0].source and "exercise" in nb.cells[0].source.splitlines()[0]
    for text in generated.values():  # no site-only syntax reaches a notebook
        first = json.loads(text)["cells"][0]["source"]
        first = "".join(first) if isinstance(first, list) else first
        assert "[@" not in first and "{{" not in first and "](../" not in first


# ---------------------------------------------------------------- the links on the site

LAB_MD = """\
=== "Triton"

    ```python title="labs/A01/triton/vec_exercise.py"
    --8<-- "labs/A01/triton/vec_exercise.py"
    ```

    ```python title="labs/A01/triton/vec.py"
    --8<-- "labs/A01/triton/vec.py"
    ```
"""


def kernel_file(body: str) -> str:
    """A lab file with what a notebook must survive: a future import, a dataclass, the __main__ guard."""
    return textwrap.dedent(f'''\
        """A01 vec in Triton."""

        from __future__ import annotations

        import sys
        from dataclasses import dataclass

        import triton


        @triton.jit
        def kernel(x):
            {body}


        @dataclass(frozen=True)
        class Size:
            n: int


        def main() -> int:
            print("vec:", Size(3))
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        ''')


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Path:
    root = make_course(tmp_path_factory.mktemp("nb") / "course")
    labs_md = next((root / "modules").glob("A01-*")) / "4-labs.md"
    labs_md.write_text(labs_md.read_text().split('=== "Triton"')[0] + LAB_MD)
    (root / "labs/A01/triton/vec.py").write_text(kernel_file("x += 1"))
    (root / "labs/A01/triton/vec_exercise.py").write_text(kernel_file("pass  # TODO 1: add one"))
    (root / "docs/SETUP.md").write_text("# Setup\n\nThe toolchains.\n")  # the whole-file pages link it
    return root


COLAB = "https://colab.research.google.com/github/example/gpu-course/blob/gh-pages/downloads/labs/A01/triton/vec.ipynb"


def test_colab_link_only_where_the_repository_is_on_github(fake):
    assert nbs.colab_base("", "gh-pages") == "" and nbs.colab_base("https://gitlab.com/a/b", "gh-pages") == ""
    assert nbs.colab_base("https://github.com/example/gpu-course.git", "gh-pages") == COLAB.split("downloads/")[0]
    course = load_course(fake)[0]
    plain = render_site(course).pages["modules/A01-fake-basics.md"]
    assert "[Download notebook](../downloads/labs/A01/triton/vec.ipynb)" in plain and "Colab" not in plain
    colab = render_site(course, colab=nbs.colab_base("https://github.com/example/gpu-course", "gh-pages"))
    assert f"[Open in Colab]({COLAB})" in colab.pages["modules/A01-fake-basics.md"]
    assert f"[Open in Colab]({COLAB})" in colab.pages["code/labs/A01/triton/vec.py.md"]


@pytest.mark.parametrize("repo_url", ["", "https://github.com/example/gpu-course"])
def test_strict_build_serves_the_notebooks_beside_the_lab_pages(fake, tmp_path, repo_url):
    config = (fake / "mkdocs.yml").read_text()
    (tmp_path / "mkdocs.yml").write_text(config + (f"repo_url: {repo_url}\n" if repo_url else ""))
    for name in ("modules", "labs", "cards", "docs", "measurements", "curriculum.yml", "references.yml", "glossary.yml"):
        if (fake / name).exists():
            (tmp_path / name).symlink_to(fake / name)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    for stem in ("vec", "vec_exercise"):
        nb = nbformat.read(site / f"downloads/labs/A01/triton/{stem}.ipynb", as_version=4)
        assert nbs.lab_source(nb) == (fake / f"labs/A01/triton/{stem}.py").read_text()
    page = (site / "modules/A01-fake-basics/index.html").read_text()
    assert re.search(r'<a [^>]*href="\.\./\.\./downloads/labs/A01/triton/vec\.ipynb"[^>]*>Download notebook</a>', page)
    assert (f'href="{COLAB}"' in page) == bool(repo_url) and ("Open in Colab" in page) == bool(repo_url)


@pytest.mark.slow
def test_a_notebook_keeps_the_main_guard_quiet_and_dataclasses_working(fake, tmp_path):
    course = load_course(fake)[0]
    f = next(f for f in nbs.lab_files(course) if f.rel == "labs/A01/triton/vec.py")
    nb, error = execute(nbs.dumps(nbs.build_notebook(course, f)), tmp_path)
    assert error is None, str(error)[-2000:]
    printed = [outputs(c) for c in nb.cells]
    assert printed[-1] == "vec: Size(n=3)\nvec: every check passed\n"  # main() ran once: in the check, not at the guard
    assert not any("vec:" in text for text in printed[:-1])


# ---------------------------------------------------------------- executed on the CPU through nbconvert

# Two modules whose labs are quick under the interpreter: a Triton lab run inside the checkout (the repository's
# kit), a PyTorch lab run from a folder of its own, as a download from the site (the kit embedded in the notebook).
EXECUTED = [("labs/A01/triton/vector_add", "vector_add", "checkout"),
            ("labs/B07/python/schedule_sim", "schedule_sim", "download")]


def execute(text: str, cwd: Path) -> tuple[nbformat.NotebookNode, Exception | None]:
    from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor

    nb = nbformat.reads(text, as_version=4)
    try:
        ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(cwd)}})
    except CellExecutionError as exc:
        return nb, exc
    return nb, None


def outputs(cell) -> str:
    return "".join(o.get("text", "") + o.get("evalue", "") for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize("exercise", [False, True], ids=["solution", "exercise"])
@pytest.mark.parametrize("stem,lab,where", EXECUTED, ids=[e[1] for e in EXECUTED])
def test_notebook_runs_on_the_cpu(generated, tmp_path, stem, lab, where, exercise):
    rel = stem + ("_exercise" if exercise else "") + ".ipynb"
    cwd = ROOT if where == "checkout" else tmp_path
    t0 = time.perf_counter()
    nb, error = execute(generated[rel], cwd)
    print(f"{rel}: executed in {time.perf_counter() - t0:.1f} s")
    check = nb.cells[-1]
    assert check.metadata["tutor"]["role"] == "check"
    for cell in nb.cells[:-1]:  # every cell before the check runs cleanly, exercise or not
        assert not any(o.get("output_type") == "error" for o in cell.get("outputs", [])), (rel, cell.source[:80])
    text = outputs(check)
    if exercise:
        assert error is not None, f"{rel}: the untouched exercise passed"
        assert re.search(rf"{lab}: \d+ check\(s\) FAILED", text), text[-2000:]  # the kit's own summary line
        assert any(o.get("ename") == "AssertionError" and "fill in the TODOs" in o.get("evalue", "")
                   for o in check.outputs)
        assert '"ok": false' in text
    else:
        assert error is None, str(error)[-3000:]
        assert f'"event": "summary", "lab": "{lab}", "failures": 0' in text and f"{Path(stem).name}: every check passed" in text
    setup = outputs(next(c for c in nb.cells if c.metadata["tutor"]["role"] == "setup"))
    kit_dir = f"the lab kit in {ROOT}" if where == "checkout" else "tutor-course"  # the checkout's, or the embedded one
    assert kit_dir in setup and "--quick" in setup, setup
