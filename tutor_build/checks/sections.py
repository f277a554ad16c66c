"""The nine sections: each file exists and carries what the contract says it must."""

from __future__ import annotations

import re
from pathlib import Path

from ..diagnostics import Diagnostic, error, warning
from ..mdscan import CITATION, PLACEHOLDER, Doc, scan
from ..model import LAB_PATHS, SECTION_SPECS, TAB_LABELS, Course, Module
from ..render.modlinks import mentions

ALLOWED_FILES = {"module.yml", "figures.yml", "errata.yml"} | {s.filename for s in SECTION_SPECS}
HW_NUMBER = re.compile(
    r"\b\d[\d,.]*\s*(?:TB/s|GB/s|TiB|GiB|MiB|KiB|TB|GB|MB|KB|TFLOP/?s|PFLOP/?s|TFLOPS|PFLOPS|TOPS|GHz|MHz|SMs|CUs|XCDs)(?![\w/])"
)
TAB = re.compile(r'^\s*===\+?\s+"(?P<label>[^"]+)"')
ORDERED_ITEM = re.compile(r"^\s*\d+[.)]\s+\S")
LIST_ITEM = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
SOLUTION = re.compile(r'^\s*\?\?\?(?P<open>\+?)\s+\w+\s+"(?P<title>[^"]*)"')
PRODUCTION_SYSTEMS = (
    "PyTorch", "vLLM", "SGLang", "cuBLAS", "cuBLASLt", "rocBLAS", "hipBLASLt", "FlashAttention", "Megatron",
    "DeepSpeed", "TensorRT", "Transformer Engine", "CUTLASS", "composable_kernel", "Composable Kernel", "NCCL",
    "RCCL", "JAX", "XLA", "Triton", "cuDNN", "MIOpen", "FSDP", "torch.compile", "Inductor", "llama.cpp",
    "Text Generation Inference", "TGI", "ThunderKittens", "DeepEP", "FlashInfer", "NeMo", "Hugging Face",
    "Accelerate", "torchao", "bitsandbytes", "Marlin", "AITER", "hipify", "CuPy", "Apex", "ZeRO",
)
PERFORMANCE_TERMS = (("bytes", r"\bbytes?\b"), ("FLOP", r"FLOP"), ("arithmetic intensity", r"arithmetic intensity"),
                     ("ridge point", r"ridge point"), ("H200", r"H200"), ("MI300X", r"MI300X"))


def blocks(doc: Doc) -> list[tuple[int, str]]:
    """Group prose lines into blocks: each table row and list item alone, paragraphs joined."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for lineno, text in doc.prose:
        stripped = text.strip()
        if not stripped or stripped.startswith("|") or LIST_ITEM.match(text) or stripped.startswith("#"):
            if current:
                out.append((start, " ".join(current)))
                current = []
            if stripped:
                if stripped.startswith("|") or stripped.startswith("#"):
                    out.append((lineno, stripped))
                else:
                    current, start = [stripped], lineno
            continue
        if not current:
            start = lineno
        current.append(stripped)
    if current:
        out.append((start, " ".join(current)))
    return out


def _analogy(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = [error(path, f.line, "E311", "the analogy has a code block; keep it in plain language") for f in doc.fences]
    for lineno, line in doc.prose:
        if re.search(r"`[^`]+`", line):
            out.append(error(path, lineno, "E311", "the analogy has inline code; keep it in plain language"))
    if doc.words() < 150:
        out.append(error(path, 1, "E312", f"the analogy has {doc.words()} words; at least 150 are required"))
    if not doc.has_heading(r"where the analogy breaks"):
        out.append(error(path, 1, "E313", 'no "Where the analogy breaks" subsection'))
    return out


def _first_principles(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    if not any(re.match(r"^\s*(\$\$|\\\[)", line) for _, line in doc.prose):
        out.append(error(path, 1, "E321", "no display equation ($$ ... $$ on its own lines)"))
    lines = [line for _, line in doc.prose]
    has_steps = any(ORDERED_ITEM.match(a) for a in lines) and sum(bool(ORDERED_ITEM.match(a)) for a in lines) >= 2
    if not has_steps and not doc.has_heading(r"deriv"):
        out.append(error(path, 1, "E322", "no derivation in steps (a numbered list, or a subsection titled 'Derivation ...')"))
    if doc.words() < 400:
        out.append(error(path, 1, "E323", f"first principles has {doc.words()} words; at least 400 are required"))
    return out


def _cited(block: str) -> bool:
    return bool(CITATION.search(block)) or bool(re.search(r"\{\{\s*(measured|value|ratio|share|ceiling)\(", block))


def _silicon(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    prose = "\n".join(line for _, line in doc.prose)
    if not re.search(r"CDNA\s*3|MI300", prose):
        out.append(error(path, 1, "E331", "AMD CDNA 3 (MI300X) is not covered"))
    if not re.search(r"Hopper|H100|H200", prose):
        out.append(error(path, 1, "E332", "NVIDIA Hopper (H100/H200) is not covered"))
    table_rows = sum(1 for _, line in doc.prose if line.strip().startswith("|"))
    tabs = sum(1 for _, line in doc.prose if TAB.match(line))
    if table_rows < 3 and tabs < 2:
        out.append(error(path, 1, "E333", "the vendors are not side by side (no table, no content tabs)"))
    for lineno, block in blocks(doc):
        # a table row is checked cell by cell: each number carries its own citation
        pieces = block.strip("|").split("|") if block.startswith("|") else [block]
        for piece in pieces:
            number = HW_NUMBER.search(piece)
            if number and not _cited(piece) and not block.startswith("#"):
                out.append(error(path, lineno, "E334", f"hardware number '{number.group(0)}' has no citation in its cell, line or paragraph"))
    return out


def _labs_page(course: Course, m: Module, path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    included = {p for _, p in doc.snippets}
    labels = [(lineno, TAB.match(line).group("label")) for lineno, line in doc.prose if TAB.match(line)]
    exact = {label for _, label in labels}
    for lineno, label in labels:
        for wanted in TAB_LABELS.values():
            if label != wanted and label.lower() == wanted.lower():
                out.append(error(path, lineno, "E344", f'tab label "{label}" must be exactly "{wanted}"'))
    for lab in m.labs:
        for p in lab.paths:
            if p not in LAB_PATHS:
                continue
            base = f"labs/{m.id}/{p}/{lab.name}"
            ext = LAB_PATHS[p]
            for kind, file in (("solution", base + ext), ("exercise", base + "_exercise" + ext)):
                if file not in included:
                    out.append(error(path, 1, "E341", f"lab '{lab.name}' {kind} {file} is not included by snippet"))
            if TAB_LABELS[p] not in exact:
                out.append(error(path, 1, "E343", f'lab \'{lab.name}\' needs a tab labelled exactly "{TAB_LABELS[p]}"'))
    for lineno, snippet in doc.snippets:
        if not (course.root / snippet).is_file():
            out.append(error(path, lineno, "E342", f"snippet {snippet} does not exist"))
    for fence in doc.fences:
        body = [b for b in fence.body_lines if b.strip()]
        if len(body) > 12 and not fence.is_snippet_only:
            out.append(error(path, fence.line, "E345", f"a {len(body)}-line code block is pasted; include lab code by snippet"))
    if not re.search(rf"tutor labs verify {m.id}\b", text):
        out.append(error(path, 1, "E346", f"no run instruction (`tutor labs verify {m.id} ...`)"))
    if m.vendor_scope != "both" and not re.search(r"optional", text, re.IGNORECASE):
        out.append(error(path, 1, "E348", f"a {m.vendor_scope} lab must be marked optional on the page"))
    return out


def _performance(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    prose = "\n".join(line for _, line in doc.prose)
    for name, pattern in PERFORMANCE_TERMS:
        if not re.search(pattern, prose, re.IGNORECASE if name in ("bytes", "arithmetic intensity", "ridge point") else 0):
            out.append(error(path, 1, "E351", f"the performance analysis never mentions {name}"))
    funcs = {p.func for p in doc.placeholders}
    if not funcs & {"measured", "value", "ratio", "share"}:
        out.append(error(path, 1, "E352", 'no measured number ({{ measured("KEY") }}); numbers must come from the measurements'))
    if not funcs & {"plot", "roofline"}:
        out.append(error(path, 1, "E353", 'no plot generated from the measurements ({{ plot("PREFIX") }})'))
    return out


def _tradeoffs(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    when_not = doc.has_heading(r"when not to do this")
    if not when_not:
        out.append(error(path, 1, "E362", 'no "When not to do this" subsection'))
    items = [1 for _, line in doc.prose if (m := LIST_ITEM.match(line)) and not m.group("indent")]
    subsections = [h for h in doc.headings if h is not when_not]
    if max(len(items), len(subsections)) < 3:
        out.append(error(path, 1, "E361", "fewer than 3 drawbacks or costs (list items or subsections)"))
    return out


def _production(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    cited_systems = set()
    for _, block in blocks(doc):
        if CITATION.search(block):
            for system in PRODUCTION_SYSTEMS:
                if re.search(r"(?<![\w.])" + re.escape(system) + r"(?![\w])", block):
                    cited_systems.add(system)
    if len(cited_systems) < 2:
        return [error(path, 1, "E371", f"fewer than 2 production systems named with a citation (found: {', '.join(sorted(cited_systems)) or 'none'})")]
    return []


def _sources(m: Module, path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    cited_elsewhere = set()
    for section in m.sections:
        if section.spec.key != "sources":
            for c in scan(section.text).citations:
                cited_elsewhere.update(c.keys)
    count = 0
    for lineno, line in doc.prose:
        item = LIST_ITEM.match(line)
        if not item or item.group("indent"):
            continue
        lead = re.match(r"^\[@([\w:.\-/]+)\]\s*[:\-–—]?\s*(?P<rest>.*)$", item.group("text"))
        if not lead:
            out.append(error(path, lineno, "E382", "a source item must start with its citation [@key]"))
            continue
        count += 1
        key = lead.group(1)
        if len(lead.group("rest").split()) < 3:
            out.append(error(path, lineno, "E382", f"source [@{key}] must say what it supports"))
        if key not in cited_elsewhere:
            out.append(error(path, lineno, "E383", f"source [@{key}] is not cited anywhere else in the module"))
    if count < 4:
        out.append(error(path, 1, "E381", f"{count} sources listed; at least 4 are required"))
    return out


def _self_assessment(path: str, doc: Doc, text: str) -> list[Diagnostic]:
    out = []
    drills = doc.has_heading(r"interview drills")
    solutions = model_answers = 0
    for lineno, line in doc.prose:
        m = SOLUTION.match(line)
        if not m:
            continue
        if m.group("open"):
            out.append(error(path, lineno, "E394", "solutions are collapsed by default: use ??? not ???+"))
        if "model answer" in m.group("title").lower():
            if drills and lineno > drills.line:
                model_answers += 1
        elif "solution" in m.group("title").lower():
            solutions += 1
    if solutions < 6:
        out.append(error(path, 1, "E391", f'{solutions} questions with a worked solution (??? success "Solution"); at least 6 are required'))
    quantitative = sum(1 for h in doc.headings if "(quantitative)" in h.text.lower())
    if quantitative < 2:
        out.append(error(path, 1, "E392", f"{quantitative} questions marked (quantitative); at least 2 are required"))
    if not drills:
        out.append(error(path, 1, "E393", 'no "Interview drills" subsection'))
    elif model_answers < 3:
        out.append(error(path, drills.line, "E393", f'{model_answers} interview drills with a model answer (??? success "Model answer"); at least 3 are required'))
    return out


def check_module(course: Course, m: Module) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    folder = course.root / m.folder
    for entry in sorted(Path(folder).iterdir()):
        if entry.name not in ALLOWED_FILES:
            out.append(error(f"{m.folder}/{entry.name}", 1, "E202", f"unexpected file in a module folder (expected {', '.join(sorted(ALLOWED_FILES))})"))
    present = {s.spec.key for s in m.sections}
    for spec in SECTION_SPECS:
        if spec.key not in present:
            out.append(error(f"{m.folder}/{spec.filename}", 1, "E201", f"missing section {spec.number} ({spec.title})"))
    for section in m.sections:
        doc = scan(section.text)
        path, text = section.path, section.text
        h1 = next((h for h in doc.headings if h.level == 1), None)
        if h1:
            out.append(error(path, h1.line, "E203", "section files take no # title: the page adds the section heading"))
        for line, mid in mentions(text):
            if course.module(mid) is None and mid in course.planned:
                out.append(warning(path, line, "W110", f"mentions {mid} ({course.planned[mid]}), a module not written yet: the page shows it as planned"))
            elif course.module(mid) is None:
                out.append(error(path, line, "E111", f"mentions module {mid}, which is neither written nor planned in curriculum.yml"))
        for p in doc.placeholders:
            if p.func not in ("measured", "value", "ratio", "share", "ceiling", "plot", "roofline", "figure"):
                out.append(error(path, p.line, "E702", f"unknown placeholder {p.raw}"))
        key = section.spec.key
        if key == "analogy":
            out += _analogy(path, doc, text)
        elif key == "first-principles":
            out += _first_principles(path, doc, text)
        elif key == "silicon":
            out += _silicon(path, doc, text)
        elif key == "labs":
            out += _labs_page(course, m, path, doc, text)
        elif key == "performance":
            out += _performance(path, doc, text)
        elif key == "tradeoffs":
            out += _tradeoffs(path, doc, text)
        elif key == "production":
            out += _production(path, doc, text)
        elif key == "sources":
            out += _sources(m, path, doc, text)
        elif key == "self-assessment":
            out += _self_assessment(path, doc, text)
    return out


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for m in course.modules:
        out += check_module(course, m)
    return out
