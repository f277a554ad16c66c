"""Every Triton and PyTorch lab file as a Jupyter notebook, generated from the file itself: never a second copy.

A notebook holds, in order:

- ``intro``      markdown: the lab's title and the paragraphs of its module's lab section that introduce it;
- ``kit``        code, collapsed: the course's lab kit (labs/common/python/tutor_lab.py and the sibling files the
                 lab imports), as text, for a notebook opened outside a checkout (a download from the site, Colab);
- ``setup``      code: finds the kit, sets TRITON_INTERPRET=1 where there is no GPU, the lab's arguments
                 (``--quick`` on a CPU) and ``__file__``; keeps the file's ``if __name__ == "__main__":`` quiet;
- ``docstring``  markdown: the file's docstring, verbatim;
- ``source``     code: the rest of the file, one cell per top-level item (imports, a kernel, a helper, main);
- ``check``      code, last: runs the lab's ``main()``, as ``python <lab> --quick`` would, and asserts status 0.

Each cell carries its role in ``metadata.tutor.role``; the docstring and source cells, with the blank lines
that followed them (``metadata.tutor.blank_after``), give back the file byte for byte (``lab_source``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from .mdscan import CITATION, CITE_KEY, FENCE_OPEN, PLACEHOLDER
from .model import Course, Module

if TYPE_CHECKING:  # nbformat is imported where a notebook is made: the lab commands run without it
    import nbformat

KIT = "labs/common/python/tutor_lab.py"
VENDORS = ("triton", "python")  # the lab paths that are Python files
SITE_DIR = "downloads"  # notebooks sit in the site beside the downloadable lab files: downloads/labs/<ID>/...
INTRO_CHARS = 1500  # the explanation: whole paragraphs up to about this many characters


@dataclass(frozen=True)
class LabFile:
    module: Module
    lab: str
    vendor: str
    rel: str  # labs/A01/triton/vector_add_exercise.py
    exercise: bool

    @property
    def notebook(self) -> str:
        """The notebook's path relative to an output folder: labs/A01/triton/vector_add_exercise.ipynb."""
        return self.rel[:-3] + ".ipynb"

    @property
    def site_path(self) -> str:
        return f"{SITE_DIR}/{self.notebook}"


def lab_files(course: Course) -> list[LabFile]:
    """Every Triton and PyTorch lab file of the course, solution then exercise, in course order."""
    out = []
    for m in course.modules:
        for spec in m.labs:
            for vendor in spec.paths:
                if vendor not in VENDORS:
                    continue
                for exercise in (False, True):
                    rel = f"labs/{m.id}/{vendor}/{spec.name}{'_exercise' if exercise else ''}.py"
                    if (course.root / rel).is_file():
                        out.append(LabFile(m, spec.name, vendor, rel, exercise))
    return out


# ---------------------------------------------------------------- the file, split into cells

def split_source(source: str) -> list[tuple[str, str, int]]:
    """(role, text, blank lines after it): the docstring, then one chunk per top-level item. Comment lines
    right above an item belong to it; consecutive imports and plain statements stay together."""
    lines = source.splitlines()
    body = list(ast.parse(source).body)
    starts: list[tuple[str, int]] = []  # (role, first line, 0-based); each chunk runs to the next start
    simple = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
    floor = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body.pop(0)
        if doc.lineno > 1:
            starts.append(("source", 0))
        starts.append(("docstring", doc.lineno - 1))
        floor = doc.end_lineno
        nonblank = next((i for i in range(floor, len(lines)) if lines[i].strip()), len(lines))
        if body and nonblank < min([body[0].lineno] + [d.lineno for d in getattr(body[0], "decorator_list", [])]) - 1:
            starts.append(("source", nonblank))  # comments between the docstring and the first item
    elif body:
        starts.append(("source", 0))
    for i, node in enumerate(body):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while first > floor and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        if starts and starts[-1][1] >= first:
            continue  # already opened (the file's first item, or the comments above it)
        if i > 0 and isinstance(node, simple) and isinstance(body[i - 1], simple) and starts[-1][0] == "source":
            continue
        starts.append(("source", first))
    out: list[tuple[str, str, int]] = []
    for k, (role, first) in enumerate(starts):
        end = starts[k + 1][1] if k + 1 < len(starts) else len(lines)
        block = lines[first:end]
        blank = 0
        while block and not block[-1].strip():
            block.pop()
            blank += 1
        out.append((role, "\n".join(block), blank))
    return out


def lab_source(nb: nbformat.NotebookNode) -> str:
    """The lab file the notebook was generated from, rebuilt from its docstring and source cells."""
    parts = []
    for cell in nb.cells:
        meta = cell.metadata.get("tutor", {})
        if meta.get("role") == "docstring":
            parts.append(meta["open"] + cell.source + meta["close"] + "\n" + "\n" * meta["blank_after"])
        elif meta.get("role") == "source":
            parts.append(cell.source + "\n" + "\n" * meta["blank_after"])
    return "".join(parts)


# ---------------------------------------------------------------- the explanation, from 4-labs.md

HEADING = re.compile(r"^(#{2,4})\s+(.*?)\s*(\{[^}]*\})?\s*$")
STOP = re.compile(r"^\s*(===|```|~~~|!!!|\?\?\?|--8<--|<)")


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    out, fence = [], None
    for i, line in enumerate(lines):
        opened = FENCE_OPEN.match(line)
        if fence is None and opened:
            fence = opened.group("fence")
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and (h := HEADING.match(line)):
            out.append((i, h.group(2)))
    return out


def _paragraphs(lines: list[str]) -> list[str]:
    """Whole paragraphs (lists, tables) up to the first heading, tab set, code block or admonition."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if HEADING.match(line) or STOP.match(line):
            break
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    kept, size = [], 0
    for block in (b for b in blocks if b):
        text = "\n".join(block)
        if "{{ figure" in text or "{{ plot" in text:
            continue
        if kept and size + len(text) > INTRO_CHARS:
            break
        kept.append(text)
        size += len(text)
    return kept


def intro_markdown(course: Course, m: Module, lab: str) -> tuple[str, str]:
    """(the heading of the lab's part of 4-labs.md, the paragraphs that introduce it), cleaned for a notebook:
    measurements filled, citations as the source's title, site links reduced to their text."""
    section = m.section("labs")
    lines = (section.text if section else "").splitlines()
    heads = _headings(lines)
    words = lab.replace("_", " ").lower()
    candidates = ([h for h in heads if f"`{lab}`" in h[1]]
                  + [h for h in heads if words in h[1].lower() or lab in h[1].lower()] + heads[:1])
    pick, kept = None, []
    for h in candidates or [None]:  # the first of them that has paragraphs under it
        pick, kept = h, _paragraphs(lines[h[0] + 1 if h else 0:])
        if kept:
            break
    text = "\n\n".join(kept)
    text = _fill(course, m, text)
    title = pick[1] if pick else f"Lab `{lab}`"
    return title, text


def _fill(course: Course, m: Module, text: str) -> str:
    from .render.measured import Filler

    if PLACEHOLDER.search(text):
        text = Filler(course, module=m).fill(text, asset_prefix="")

    def cite(match: re.Match) -> str:
        names = []
        for key in CITE_KEY.findall(match.group(1)):
            ref = course.references.get(key)
            names.append(f"[{ref.title}, {ref.year}]({ref.link})" if ref and ref.link else key)
        return "(" + "; ".join(names) + ")"

    text = CITATION.sub(cite, text)
    # Links into the site mean nothing in a notebook opened elsewhere: keep their words.
    text = re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]*\)", r"\1", text)
    return re.sub(r"\{\s*[.#:][^}]*\}", "", text)  # attribute lists


# ---------------------------------------------------------------- the generated cells

def _kit_files(course: Course, rel: str) -> dict[str, str]:
    """The kit, the files beside the lab that it imports (B04's quantize imports fp8_codec), and for a lab that
    spawns processes the lab's file itself (those processes import it)."""
    files = {KIT: (course.root / KIT).read_text(encoding="utf-8")} if (course.root / KIT).is_file() else {}
    source = (course.root / rel).read_text(encoding="utf-8")
    here = (course.root / rel).parent
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            sibling = here / f"{name.split('.')[0]}.py"
            if sibling.is_file() and sibling != course.root / rel:
                files[sibling.relative_to(course.root).as_posix()] = sibling.read_text(encoding="utf-8")
    if spawns(source):
        files[rel] = source
    return files


def _literal(text: str) -> str:
    """A readable Python literal for a file's text: a raw triple-quoted string where that is exact."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def kit_cell(course: Course, f: LabFile) -> str:
    items = "\n".join(f"    {json.dumps(rel)}: {_literal(text)}," for rel, text in _kit_files(course, f.rel).items())
    return ("#@title The course's lab kit, used when this notebook runs outside a checkout of the course\n"
            "# Generated by `tutor notebooks` from the files named below; edit those, never this cell.\n"
            "TUTOR_KIT_FILES = {\n" + items + "\n}\n")


SETUP = '''\
# Set-up, generated by `tutor notebooks`; not part of the lab's file. Run the cells in order: the last one runs
# the lab's checks.
import os
import pathlib
import sys
import tempfile

LAB = @REL@


def _checkout():
    """The checkout of the course this notebook sits in, if any: its lab kit is the one to use."""
    here = pathlib.Path.cwd().resolve()
    return next((d for d in (here, *here.parents) if (d / @KIT@).is_file()), None)


ROOT = _checkout()
if ROOT is None:  # a download from the site, or Colab: write out the kit of the cell above
    ROOT = pathlib.Path(tempfile.gettempdir()) / "tutor-course"
    for _rel, _text in TUTOR_KIT_FILES.items():
        (ROOT / _rel).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / _rel).write_text(_text, encoding="utf-8")
    (ROOT / LAB).parent.mkdir(parents=True, exist_ok=True)  # a path through ../.. needs the lab's folder
__file__ = str(ROOT / LAB)  # the lab finds labs/common/python (tutor_lab) from its own path

import torch  # noqa: E402

if "TRITON_INTERPRET" not in os.environ and not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: Triton kernels run on the CPU, through Triton's interpreter
ARGS = [] if torch.cuda.is_available() else ["--quick"]  # on a CPU, the lab's small sizes
sys.argv = [__file__, *ARGS]  # what the lab's parse_args reads
__name__ = "lab"  # the file's `if __name__ == "__main__":` block stays quiet here; the last cell runs main()
sys.modules[__name__] = sys.modules["__main__"]  # this notebook's namespace, under the name its code now has
print(f"{LAB}: the lab kit in {ROOT}; Triton", "through its interpreter on the CPU" if os.environ.get(
    "TRITON_INTERPRET") == "1" else "on the GPU", "; arguments:", " ".join(ARGS) or "none")
'''

CHECK = '''\
# The check, as `python {rel} --quick` runs it on a CPU: one JSON line per check, then the summary.
sys.argv = [__file__, *ARGS]
if "tutor_lab" in sys.modules:
    sys.modules["tutor_lab"]._failures = 0  # a fresh count each time this cell runs, as in a fresh process
status = main()
assert status == 0, {fail!r}
print({ok!r})
'''


# A lab that starts processes with the spawn method (B07's tp_mlp, pipeline_memory): each process imports the
# lab's code from its file, never from a notebook, so the check runs the file.
SPAWNS = re.compile(r"\bmp\.spawn\(|get_context\(\"spawn\"\)|multiprocessing")

CHECK_FILE = '''\
# This lab starts one process per rank (torch.multiprocessing, spawn), and each process imports the lab's code
# from its file, not from this notebook: the check runs the file, as `python {rel} --quick` does on a CPU.
# Your answers to the TODOs go into that file ({rel}); the cells above are there to read and try out.
import subprocess

done = subprocess.run([sys.executable, __file__, *ARGS], capture_output=True, text=True)
print(done.stdout, end="")
print(done.stderr, end="", file=sys.stderr)
assert done.returncode == 0, {fail!r}
print({ok!r})
'''


def spawns(source: str) -> bool:
    return SPAWNS.search(source) is not None


def build_notebook(course: Course, f: LabFile) -> nbformat.NotebookNode:
    source = (course.root / f.rel).read_text(encoding="utf-8")
    stem = Path(f.rel).stem
    heading, intro = intro_markdown(course, f.module, f.lab)
    kind = "exercise" if f.exercise else "worked solution"
    tab = "Triton" if f.vendor == "triton" else "PyTorch"
    where = f"the file `{f.rel}` (its processes import it)" if spawns(source) else "the code cells below"
    what = (f"The exercise: fill in the lines marked `TODO` in {where}, then run the last cell. "
            "Untouched, its checks fail, loudly; they pass once the `TODO`s are right."
            if f.exercise else
            "The worked solution: run every cell; the last one runs the lab's checks and passes.")
    head = [f"# {f.module.id} · {f.module.title}: `{stem}` ({tab}, {kind})", "",
            f"*{heading}*, from section 4 (Hands-on labs) of module {f.module.id}. Generated from `{f.rel}`; "
            "the module page has the whole explanation.", ""]
    if intro:
        head += [intro, ""]
    head += [what, "",
             "No GPU? The set-up cell selects Triton's interpreter (`TRITON_INTERPRET=1`), which runs the kernels "
             "on the CPU, and the lab's small `--quick` sizes: it checks correctness, not speed."]
    cells = [("intro", _markdown_cell("\n".join(head))),
             ("kit", _code_cell(kit_cell(course, f), metadata={
                 "cellView": "form", "jupyter": {"source_hidden": True}})),
             ("setup", _code_cell(SETUP.replace("@REL@", repr(f.rel)).replace("@KIT@", repr(KIT))))]
    for role, text, blank in split_source(source):
        meta = {"blank_after": blank}
        if role == "docstring":
            m = re.match(r'^([rRuUbB]*("""|\'\'\'))(.*)\2$', text, re.DOTALL)
            meta.update(open=m.group(1), close=m.group(2))
            cells.append((role, _markdown_cell(m.group(3), metadata={"tutor": meta})))
        else:
            cells.append((role, _code_cell(text, metadata={"tutor": meta})))
    fail = (f"{stem}: the checks failed (the lines above name each one, its cause and a seed to replay): "
            + ("fill in the TODOs" if f.exercise else "the worked solution should pass"))
    cells.append(("check-intro", _markdown_cell(
        "## Check\n\nRuns the lab's own checks: each output is poisoned first, fresh random inputs each run, "
        "compared with a reference; a kernel that reads or writes outside its tensors fails too.")))
    check = CHECK_FILE if spawns(source) else CHECK
    cells.append(("check", _code_cell(check.format(rel=f.rel, fail=fail, ok=f"{stem}: every check passed"))))
    from nbformat import v4

    nb = v4.new_notebook(metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "tutor": {"source": f.rel, "module": f.module.id, "lab": f.lab, "exercise": f.exercise},
    })
    for i, (role, cell) in enumerate(cells):
        cell.id = f"{role}-{i}"  # fixed ids: the same lab gives the same bytes
        cell.metadata.setdefault("tutor", {})["role"] = role
        nb.cells.append(cell)
    return nb


def _code_cell(source: str, metadata: dict | None = None) -> nbformat.NotebookNode:
    """nbformat.v4.new_code_cell without its check of each cell (writes() checks the whole notebook once)."""
    import nbformat

    return nbformat.from_dict({"cell_type": "code", "id": "", "metadata": metadata or {}, "execution_count": None,
                               "outputs": [], "source": source})


def _markdown_cell(source: str, metadata: dict | None = None) -> nbformat.NotebookNode:
    import nbformat

    return nbformat.from_dict({"cell_type": "markdown", "id": "", "metadata": metadata or {}, "source": source})


def dumps(nb: nbformat.NotebookNode) -> str:
    import nbformat

    return nbformat.writes(nb) + "\n"


def notebooks(course: Course) -> dict[str, str]:
    """{path relative to an output folder (labs/A01/triton/vector_add.ipynb): the notebook's JSON}."""
    return {f.notebook: dumps(build_notebook(course, f)) for f in lab_files(course)}


def colab_base(repo_url: str, branch: str) -> str:
    """https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/ for a GitHub repo_url, else ''."""
    m = re.match(r"^https?://github\.com/([^/]+)/([^/#?]+?)(?:\.git)?/?$", (repo_url or "").strip())
    if not m or not branch:
        return ""
    return f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}/blob/{branch}/"


def links(rel: str, up: str, colab: str = "", known: set[str] | frozenset = frozenset()) -> str:
    """The "Download notebook" (and "Open in Colab") links of a lab file, from a page `up` below the site root;
    '' for a file with no notebook."""
    nb = rel[:-3] + ".ipynb"
    if rel not in known:
        return ""
    out = f"[Download notebook]({up}{SITE_DIR}/{nb}){{ .tutor-notebook download }}"
    if colab:
        out += f" · [Open in Colab]({colab}{SITE_DIR}/{nb}){{ .tutor-colab }}"
    return out


def write(course: Course, out: Path) -> list[Path]:
    written = []
    for rel, text in notebooks(course).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def cmd_notebooks(args) -> int:  # noqa: ANN001 - argparse.Namespace
    from .load import load_course

    course, _ = load_course(args.root)
    out = args.out if args.out.is_absolute() else Path.cwd() / args.out
    paths = write(course, out)
    print(f"{len(paths)} notebooks written under {out}")
    return 0


def register(sub) -> None:  # noqa: ANN001 - argparse subparsers
    p = sub.add_parser("notebooks", help="write every Triton and PyTorch lab (exercise and solution) as a notebook")
    p.add_argument("root", nargs="?", default=".", type=Path)
    p.add_argument("--out", type=Path, default=Path("build/notebooks"),
                   help="output folder (default build/notebooks); the site has them under downloads/labs/")
    p.set_defaults(func=cmd_notebooks)
