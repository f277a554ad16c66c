"""Lab code on a module page: the parts a learner reads (kernels, their launch, the TODOs), with the whole
file one click away on a page of its own. Whole files pasted into every page made module pages of 1-2 MB.

A lab include in a section file stays what the author wrote,

    ```cuda title="labs/A02/cuda/transpose_exercise.cu"
    --8<-- "labs/A02/cuda/transpose_exercise.cu"
    ```

and the module page shows, instead, one block per excerpt ("lines 15-21") and a link to the whole file. For
a solution (a file whose `_exercise` twin exists) the excerpts are only the parts that differ from the
exercise: the answer, not the scaffolding again.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

INCLUDE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>\w+)[ \t]+title="(?P<title>[^"]+)"[ \t]*\n'
    r'(?P=indent)-{1,}8<-{1,}[ \t]+"(?P<path>labs/[^"]+)"[ \t]*\n'
    r'(?P=indent)(?P=fence)[ \t]*$', re.MULTILINE)
C_WANTED = re.compile(r"__global__|<<<|hipLaunchKernelGGL|TODO")
C_CONTEXT = re.compile(r"^\s*(constexpr|#define|using|template\b)")


@dataclass(frozen=True)
class Part:
    first: int  # 1-based line numbers, inclusive
    last: int


def _c_items(lines: list[str]) -> list[tuple[Part, str]]:
    """Top-level items of a C/C++ file, each with the comment lines right above it."""
    items, depth, start, lead = [], 0, None, None
    for i, line in enumerate(lines):
        code = re.sub(r'//.*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', "", line)
        stripped = line.strip()
        if depth == 0 and start is None:
            if not stripped:
                lead = None
                continue
            if stripped.startswith("//") or stripped.startswith("/*") or stripped.startswith("*"):
                lead = i if lead is None else lead
                continue
            start = i
        depth += code.count("{") - code.count("}")
        if start is not None and depth == 0 and (code.rstrip().endswith(("}", "};", ";")) or stripped.startswith("#")):
            first = lead if lead is not None else start
            items.append((Part(first + 1, i + 1), "\n".join(lines[start:i + 1])))
            start, lead = None, None
    return items


def _segment(lines: list[str], node: ast.AST) -> str:
    """ast.get_source_segment for a top-level node, from lines split once (that function splits the whole
    source again on every call). Column offsets count UTF-8 bytes."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset:].decode()
    tail = lines[last].encode()[:node.end_col_offset].decode()
    return "\n".join([head, *lines[first + 1:last], tail])


@functools.lru_cache(maxsize=256)  # several pages excerpt the same lab file
def _python_items(source: str) -> list[tuple[Part, str]]:
    tree = ast.parse(source)
    lines = source.splitlines()
    items = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        while first > 1 and lines[first - 2].lstrip().startswith("#"):
            first -= 1
        items.append((Part(first, node.end_lineno), _segment(lines, node), node))
    out = []
    for part, text, node in items:
        wanted = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            any("jit" in ast.unparse(d) for d in node.decorator_list)
            or re.search(r"\w\[[^\]]*\]\(", text) is not None  # kernel[grid](...): the launch
            or "TODO" in "\n".join(lines[part.first - 1:part.last]))
        out.append((part, text if wanted else ""))
    return out


def _items(path: Path) -> list[tuple[Part, bool]]:
    """Every top-level item of a lab file, and whether a learner needs to read it."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    if path.suffix == ".py":
        return [(p, bool(text)) for p, text in _python_items(source)]
    return [(p, bool(C_WANTED.search("\n".join(lines[p.first - 1:p.last])) or C_CONTEXT.match(text)))
            for p, text in _c_items(lines)]


def excerpt_parts(path: Path) -> list[Part]:
    """The line ranges worth reading, merged where they touch."""
    return _merge(path, [p for p, wanted in _items(path) if wanted])


def _merge(path: Path, chosen: list[Part]) -> list[Part]:
    lines = path.read_text(encoding="utf-8").splitlines()
    merged: list[Part] = []
    for p in sorted(chosen, key=lambda p: p.first):
        gap = "\n".join(lines[merged[-1].last:p.first - 1]).strip() if merged else "x"
        if merged and not gap:
            merged[-1] = Part(merged[-1].first, p.last)
        else:
            merged.append(p)
    return merged


def _exercise_twin(root: Path, rel: str) -> Path | None:
    p = root / rel
    twin = p.with_name(p.stem + "_exercise" + p.suffix)
    return twin if "_exercise" not in p.stem and twin.is_file() else None


_C_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _name(text: str) -> str:
    """The name a C/C++ item defines: the word before the first `(` outside comments."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("//", "/*", "*")))
    m = _C_NAME.search(code)
    return m.group(1) if m else ""


def _named_items(path: Path) -> list[tuple[Part, str, str]]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    if path.suffix == ".py":  # the names Python itself gives: functions, classes, assigned names
        out = []
        for node in ast.parse(source).body:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            while first > 1 and lines[first - 2].lstrip().startswith("#"):
                first -= 1
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            name = getattr(node, "name", "") or next((x.id for x in targets if isinstance(x, ast.Name)), "")
            out.append((Part(first, node.end_lineno), name, "\n".join(lines[first - 1:node.end_lineno])))
        return out
    return [(p, _name("\n".join(lines[p.first - 1:p.last])), "\n".join(lines[p.first - 1:p.last]))
            for p, _ in _c_items(lines)]


def answer_parts(root: Path, rel: str) -> list[Part]:
    """For a solution: the items that answer a TODO, i.e. whose exercise counterpart (same name) holds a
    `TODO` and whose text differs from it. Code the solution has and the exercise lacks (extra variants,
    their checks and benchmarks) is not an answer: the whole file, one link away, shows it."""
    path = root / rel
    twin = _exercise_twin(root, rel)
    if twin is None:
        return excerpt_parts(path)
    asked = {name: text for _, name, text in _named_items(twin) if name and "TODO" in text}
    answers = [p for p, name, text in _named_items(path) if name in asked and text.strip() != asked[name].strip()]
    return _merge(path, answers) or excerpt_parts(path)


def code_page_path(rel: str) -> str:
    return f"code/{rel}.md"


def rewrite_includes(text: str, root: Path, links=None) -> tuple[str, dict[str, str]]:
    """Replace whole-file lab includes by excerpts and a link to the whole file. Returns the new text and the
    lab files it linked, with their language (each gets its own page)."""
    linked: dict[str, str] = {}

    def one(m: re.Match) -> str:
        rel, indent, fence, lang = m.group("path"), m.group("indent"), m.group("fence"), m.group("lang")
        path = root / rel
        if not path.is_file():
            return m.group(0)  # the checks report the missing file
        lines = path.read_text(encoding="utf-8").splitlines()
        parts = answer_parts(root, rel) if _exercise_twin(root, rel) else excerpt_parts(path)
        if not parts:
            return m.group(0)
        linked[rel] = lang
        out = []
        for p in parts:
            out.append(f'{indent}{fence}{lang} title="{rel}, lines {p.first}-{p.last}"')
            out += [f"{indent}{line}" if line.strip() else "" for line in lines[p.first - 1:p.last]]
            out.append(f"{indent}{fence}")
            out.append("")
        shown = sum(p.last - p.first + 1 for p in parts)
        link = "../" + code_page_path(rel)  # module pages sit in modules/
        more = links(rel, "../") if links else ""  # a Triton or PyTorch lab: its notebook (tutor_build.notebooks)
        out.append(f"{indent}{shown} of its {len(lines)} lines are shown; the whole file: [{rel}]({link})."
                   + (f" {more}" if more else ""))
        return "\n".join(out)

    return INCLUDE.sub(one, text), linked


def download_path(rel: str) -> str:
    return f"downloads/{rel}"


def code_page(root: Path, rel: str, lang: str, links: str = "") -> str:
    """A page with the whole file, left out of the search index (the module page indexes its identifiers)."""
    text = (root / rel).read_text(encoding="utf-8")
    name = rel.rsplit("/", 1)[-1]
    up = "../" * (rel.count("/") + 1)  # from code/<rel>.md back to the site root
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return "\n".join([
        "---", f'title: "{rel}"', "search:", "  exclude: true", "---", "",
        f"# {rel}", "",
        f"The whole file, {len(text.splitlines())} lines, as it is in the course repository: "
        f"[download {name}]({up}{download_path(rel)}). Set-up for running it: [Setup]({up}SETUP.md).", "",
        *([links, ""] if links else []),
        f'{fence}{lang} title="{rel}" linenums="1"', text.rstrip("\n"), fence, ""])
