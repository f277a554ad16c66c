"""One test per contract rule: break exactly one thing in the valid fake course, expect exactly one diagnostic."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tutor_build.checks import run_all
from tutor_build.load import load_course

A01 = "modules/A01-fake-basics"
A02 = "modules/A02-fake-coalescing"


def diagnose(root: Path) -> list[tuple[str, int, str]]:
    course, load_diags = load_course(root)
    return [(d.path, d.line, d.code) for d in run_all(course, load_diags)]


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, f"fixture text not found in {rel}: {old!r}"
    path.write_text(text.replace(old, new, 1))


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def test_the_fake_course_is_clean(pristine_course):
    assert diagnose(pristine_course) == []


# (id, mutation, expected diagnostics (path, line, code))
CASES = [
    ("malformed-yaml", lambda r: edit(r, f"{A01}/module.yml", "title: Fake basics", "title: [unclosed"),
     {(f"{A01}/module.yml", 2, "E001")}),
    ("missing-key", lambda r: edit(r, f"{A01}/module.yml", "concepts: [bytes, bandwidth]\n", ""),
     {(f"{A01}/module.yml", 1, "E101")}),
    ("unknown-key", lambda r: edit(r, f"{A01}/module.yml", "headline:", "headlin: typo\nheadline:"),
     {(f"{A01}/module.yml", 8, "E102")}),
    ("bad-hours", lambda r: edit(r, f"{A01}/module.yml", "drill: 0.5", "drill: 0"),
     {(f"{A01}/module.yml", 5, "E103")}),
    ("unknown-prerequisite", lambda r: edit(r, f"{A02}/module.yml", '["A01"]', '["A01", "Z99"]'),
     {(f"{A02}/module.yml", 6, "E104")}),
    ("cycle", lambda r: edit(r, f"{A01}/module.yml", "prerequisites: []", 'prerequisites: ["A02"]'),
     {(f"{A01}/module.yml", 6, "E801")}),
    ("id-mismatch", lambda r: edit(r, f"{A01}/module.yml", "id: A01", "id: A03"),
     {(f"{A01}/module.yml", 1, "E106")}, "subset"),
    ("nvidia-only-without-counterpart", lambda r: edit(r, f"{A01}/module.yml", "labs: [vec]", "labs: [vec]\nvendor_scope: nvidia-only"),
     {(f"{A01}/module.yml", 10, "E108"), (f"{A01}/4-labs.md", 1, "E348")}),
    ("missing-section", lambda r: (r / f"{A01}/6-tradeoffs.md").unlink(), {(f"{A01}/6-tradeoffs.md", 1, "E201")}),
    ("stray-file", lambda r: write(r, f"{A01}/6-tradeoff.md", "typo\n"), {(f"{A01}/6-tradeoff.md", 1, "E202")}),
    ("section-title", lambda r: edit(r, f"{A01}/7-production.md", "PyTorch uses", "# Production\n\nPyTorch uses"),
     {(f"{A01}/7-production.md", 1, "E203")}),
    ("analogy-code", lambda r: edit(r, f"{A01}/1-analogy.md", "A careful", "A `careful`"),
     {(f"{A01}/1-analogy.md", 1, "E311")}),
    ("analogy-short", lambda r: write(r, f"{A01}/1-analogy.md", 'Too short.\n\n{{ figure("picture") }}\n\n## Where the analogy breaks\n\nHere.\n'),
     {(f"{A01}/1-analogy.md", 1, "E312")}),
    ("analogy-breaks", lambda r: edit(r, f"{A01}/1-analogy.md", "## Where the analogy breaks", "## Limits"),
     {(f"{A01}/1-analogy.md", 1, "E313")}),
    ("no-equation", lambda r: edit(r, f"{A01}/2-first-principles.md", "$$\nt \\ge \\frac{\\text{bytes}}{B}\n$$\n", ""),
     {(f"{A01}/2-first-principles.md", 1, "E321")}),
    ("no-derivation", lambda r: edit(r, f"{A01}/2-first-principles.md", "## Derivation\n\n1. Count the bytes: each element is read once and written once.\n2.", "Also"),
     {(f"{A01}/2-first-principles.md", 1, "E322")}),
    ("silicon-no-amd", lambda r: write(r, f"{A01}/3-silicon.md", "| | Hopper |\n|---|---|\n| lanes | 32 |\n"),
     {(f"{A01}/3-silicon.md", 1, "E331"), (f"{A01}/8-sources.md", 2, "E383"),
      (f"{A01}/5-performance.md", 2, "E112")}),  # the table defined "(H200)" and "(MI300X)" for the page
    ("silicon-uncited", lambda r: edit(r, f"{A01}/3-silicon.md", "4.8 TB/s [@vendor-sheet]", "4.8 TB/s"),
     {(f"{A01}/3-silicon.md", 3, "E334")}),
    ("lab-not-included", lambda r: edit(r, f"{A01}/4-labs.md", '    ```cpp\n    --8<-- "labs/A01/hip/vec.hip"\n    ```\n', ""),
     {(f"{A01}/4-labs.md", 1, "E341")}),
    ("tab-label", lambda r: edit(r, f"{A01}/4-labs.md", '=== "HIP"', '=== "Hip"'),
     {(f"{A01}/4-labs.md", 13, "E344"), (f"{A01}/4-labs.md", 1, "E343")}),
    ("pasted-code", lambda r: edit(r, f"{A01}/4-labs.md", "Run `tutor", "```cuda\n" + "int x;\n" * 13 + "```\n\nRun `tutor"),
     {(f"{A01}/4-labs.md", 1, "E345")}),
    ("no-run-instruction", lambda r: edit(r, f"{A01}/4-labs.md", "tutor labs verify A01", "run it"),
     {(f"{A01}/4-labs.md", 1, "E346")}),
    ("performance-no-ridge", lambda r: edit(r, f"{A01}/5-performance.md", "ridge point", "peak"),
     {(f"{A01}/5-performance.md", 1, "E351")}),
    ("performance-no-measurement", lambda r: edit(r, f"{A01}/5-performance.md", 'Measured: {{ measured("A01/vec/kernel/cuda") }}.', ""),
     {(f"{A01}/5-performance.md", 1, "E352")}),
    ("performance-no-plot", lambda r: edit(r, f"{A01}/5-performance.md", '{{ plot("A01/vec") }}', ""),
     {(f"{A01}/5-performance.md", 1, "E353")}),
    ("tradeoffs-few", lambda r: edit(r, f"{A01}/6-tradeoffs.md", "- It costs time to write.\n", ""),
     {(f"{A01}/6-tradeoffs.md", 1, "E361")}),
    ("tradeoffs-when-not", lambda r: edit(r, f"{A01}/6-tradeoffs.md", "## When not to do this", "## Otherwise"),
     {(f"{A01}/6-tradeoffs.md", 1, "E362")}),
    ("production-one", lambda r: edit(r, f"{A01}/7-production.md", "vLLM uses it too [@vllm-paper].", "vLLM uses it too."),
     {(f"{A01}/7-production.md", 1, "E371"), (f"{A01}/8-sources.md", 4, "E383")}),
    ("sources-few", lambda r: edit(r, f"{A01}/8-sources.md", "- [@vllm-paper] Where a serving system uses it.\n", ""),
     {(f"{A01}/8-sources.md", 1, "E381")}),
    ("source-without-citation", lambda r: edit(r, f"{A01}/8-sources.md", "- [@amd-sheet] The", "- The"),
     {(f"{A01}/8-sources.md", 2, "E382"), (f"{A01}/8-sources.md", 1, "E381")}),
    ("source-not-cited", lambda r: edit(r, f"{A01}/3-silicon.md", "5.3 TB/s [@amd-sheet]", "5.3 TB/s [@vendor-sheet]"),
     {(f"{A01}/8-sources.md", 2, "E383")}),
    ("few-questions", lambda r: edit(r, f"{A01}/9-self-assessment.md", '??? success "Solution"\n    It is 6.', "It is 6."),
     {(f"{A01}/9-self-assessment.md", 1, "E391")}),
    ("solution-open", lambda r: edit(r, f"{A01}/9-self-assessment.md", '??? success "Solution"\n    It is 3.', '???+ success "Solution"\n    It is 3.'),
     {(f"{A01}/9-self-assessment.md", 19, "E394")}),
    ("few-quantitative", lambda r: edit(r, f"{A01}/9-self-assessment.md", "## Q2 (quantitative)", "## Q2"),
     {(f"{A01}/9-self-assessment.md", 1, "E392")}),
    ("few-drills", lambda r: edit(r, f"{A01}/9-self-assessment.md", '??? success "Model answer"\n    Because 3.', "Because 3."),
     {(f"{A01}/9-self-assessment.md", 43, "E393")}),
    ("lab-missing", lambda r: (r / "labs/A01/triton/vec.py").unlink(),
     {(f"{A01}/module.yml", 9, "E401"), (f"{A01}/4-labs.md", 30, "E342")}),
    ("exercise-without-todo", lambda r: write(r, "labs/A01/triton/vec_exercise.py", "print('done')\n"),
     {("labs/A01/triton/vec_exercise.py", 1, "E405")}),
    ("hints-missing", lambda r: (r / "labs/A01/hints/vec.yml").unlink(),
     {("labs/A01/hints/vec.yml", 1, "E406")}),
    ("hint-without-line-for-a-vendor", lambda r: edit(r, "labs/A01/hints/vec.yml", '"triton": "c[i] = a[i] + b[i];"', '"triton": ""'),
     {("labs/A01/hints/vec.yml", 4, "E407")}),
    ("todo-without-hint", lambda r: edit(r, "labs/A01/triton/vec_exercise.py", "# TODO 1:", "# TODO 2:"),
     {("labs/A01/hints/vec.yml", 1, "E408")}),
    ("counterpart-diverges", lambda r: edit(r, "labs/A01/hip/vec.hip", "a[i] + 1.0f", "a[i] + 2.0f"),
     {("labs/A01/hip/vec.hip", 5, "E402")}),
    ("few-cards", lambda r: write(r, "cards/A01.yml", json.dumps([{"id": "x", "q": "Q?", "a": "A.", "cite": "@vendor-sheet", "section": "analogy"}])),
     {("cards/A01.yml", 1, "E501")}),
    ("card-unresolved-cite", lambda r: edit(r, "cards/A01.yml", '"cite": "@vendor-sheet"', '"cite": "@nowhere"'),
     {("cards/A01.yml", 9, "E504")}),
    ("card-duplicate-id", lambda r: edit(r, "cards/A01.yml", '"a01-card-1"', '"a01-card-0"'),
     {("cards/A01.yml", 9, "E503")}),
    ("unknown-citation", lambda r: edit(r, f"{A01}/7-production.md", "[@pytorch-docs]", "[@pytorch-doc]"),
     {(f"{A01}/7-production.md", 1, "E601"), (f"{A01}/8-sources.md", 3, "E383")}),
    ("reference-without-link", lambda r: edit(r, "references.yml", "url: https://example.org/pytorch", "note: no link"),
     {("references.yml", 11, "E602")}),
    ("unknown-measurement", lambda r: edit(r, f"{A01}/5-performance.md", "A01/vec/kernel/cuda", "A01/vec/kernal/cuda"),
     {(f"{A01}/5-performance.md", 4, "E703")}),
    ("malformed-record", lambda r: write(r, "measurements/broken.jsonl", "{not json\n"),
     {("measurements/broken.jsonl", 1, "E701")}),
    ("stale-record", lambda r: edit(r, "labs/A01/cuda/vec.cu", "+ 1.0f", "+ 1.5f"),
     {("measurements/h200.jsonl", 1, "W705"), ("labs/A01/hip/vec.hip", 5, "E402")}),
    ("record-beats-its-ceiling", lambda r: edit(r, "measurements/h200.jsonl", '"value": 3000.0', '"value": 4300.0'),
     {("measurements/h200.jsonl", 1, "W706")}),
    ("figures-not-a-list", lambda r: write(r, f"{A01}/figures.yml", "id: picture\n"),
     {(f"{A01}/figures.yml", 1, "E901"), (f"{A01}/1-analogy.md", 1, "E907"), (f"{A01}/1-analogy.md", 1, "E908"),
      (f"{A01}/1-analogy.md", 1, "E909"), (f"{A01}/1-analogy.md", 3, "E905"), (f"{A01}/2-first-principles.md", 12, "E905"),
      (f"{A01}/2-first-principles.md", 14, "E905")}),
    ("figure-without-alt", lambda r: edit(r, f"{A01}/figures.yml", '"alt": "picture:', '"alt": "", "x": "'),
     {(f"{A01}/figures.yml", 2, "E902")}),
    ("figure-id-twice", lambda r: edit(r, f"{A01}/figures.yml", '"id": "bound"', '"id": "steps"'),
     {(f"{A01}/figures.yml", 27, "E903"), (f"{A01}/2-first-principles.md", 14, "E905"), (f"{A01}/1-analogy.md", 1, "E907")}),
    ("figure-cannot-draw", lambda r: edit(r, f"{A01}/figures.yml", '"draw": "common.flow"', '"draw": "common.flaw"'),
     {(f"{A01}/figures.yml", 2, "E904")}),
    ("figure-bad-args", lambda r: edit(r, f"{A01}/figures.yml", '"steps": [\n    "read"', '"nope": 1, "steps": [\n    "read"'),
     {(f"{A01}/figures.yml", 2, "E904")}),
    ("figure-unknown-id", lambda r: edit(r, f"{A01}/2-first-principles.md", 'figure("bound")', 'figure("bond")'),
     {(f"{A01}/2-first-principles.md", 14, "E905"), (f"{A01}/figures.yml", 27, "W906"), (f"{A01}/1-analogy.md", 1, "E907")}),
    ("figure-unused", lambda r: edit(r, f"{A01}/2-first-principles.md", '{{ figure("bound") }}', ""),
     {(f"{A01}/figures.yml", 27, "W906"), (f"{A01}/1-analogy.md", 1, "E907")}),
    ("no-analogy-figure", lambda r: edit(r, f"{A01}/1-analogy.md", '{{ figure("picture") }}', ""),
     {(f"{A01}/figures.yml", 2, "W906"), (f"{A01}/1-analogy.md", 1, "E907"), (f"{A01}/1-analogy.md", 1, "E908")}),
    ("no-principle-figure", lambda r: edit(r, f"{A01}/2-first-principles.md", '{{ figure("steps") }}\n\n{{ figure("bound") }}',
                                             '') or edit(r, f"{A01}/6-tradeoffs.md", "\n", '\n\n{{ figure("steps") }}\n\n{{ figure("bound") }}\n\n'),
     {(f"{A01}/1-analogy.md", 1, "E909")}),
    ("mentions-unplanned-module", lambda r: edit(r, f"{A01}/7-production.md", "PyTorch uses", "A05 and PyTorch use"),
     {(f"{A01}/7-production.md", 1, "E111")}),
    ("mentions-planned-module", lambda r: edit(r, f"{A01}/7-production.md", "PyTorch uses", "A05 and PyTorch use")
     or edit(r, "curriculum.yml", "tracks:", "planned:\n  A05: Reductions\ntracks:"),
     {(f"{A01}/7-production.md", 1, "W110")}),
    ("abbreviation-not-in-glossary", lambda r: edit(r, "glossary.yml", '"term": "HBM"', '"term": "HBMx"'),
     {(f"{A01}/3-silicon.md", 3, "E112"), (f"{A02}/3-silicon.md", 3, "E112")}),
    ("abbreviation-defined-on-the-page", lambda r: edit(r, "glossary.yml", '"term": "HBM"', '"term": "HBMx"')
     or edit(r, f"{A01}/1-analogy.md", "A careful", "High Bandwidth Memory (HBM) is a careful"),
     {(f"{A02}/3-silicon.md", 3, "E112")}),
    ("erratum-incomplete", lambda r: write(r, f"{A01}/errata.yml", "- date: 1 December\n  section: 2-first-principles\n  wrong: It said 2.\n"),
     {(f"{A01}/errata.yml", 1, "E114")}),
    ("erratum-unknown-place", lambda r: write(r, f"{A01}/errata.yml",
        "- date: 2026-12-01\n  section: appendix\n  wrong: It said 2.\n  right: It is 3.\n"),
     {(f"{A01}/errata.yml", 1, "E114")}),
    ("erratum-unknown-citation", lambda r: write(r, f"{A01}/errata.yml",
        "- date: 2026-12-01\n  section: cards\n  wrong: It said 2.\n  right: It is 3.\n  cite: [nowhere]\n"),
     {(f"{A01}/errata.yml", 1, "E601")}),
    ("profile-unknown-lab", lambda r: write(r, "labs/A01/profile.yml",
        "- lab: vec\n  kernel: add\n  metrics: [lts__t_sectors_op_read.sum]\n"
        "- lab: nope\n  kernel: add kernel\n  metrics: []\n"),
     {("labs/A01/profile.yml", 4, "E513")}),
    ("beyond-ceiling-explained", lambda r: edit(r, "measurements/h200.jsonl", '"value": 3000.0', '"value": 4500.0')
     or write(r, "measurements/beyond-ceiling.yml", "A01/vec/kernel/cuda: a read-only stream set beside a copy that also writes\n"),
     set()),
    ("beyond-ceiling-stale-or-unexplained", lambda r: write(r, "measurements/beyond-ceiling.yml",
        "A01/vec/gone/cuda: a read-only stream set beside a copy that also writes\nA01/vec/kernel/cuda: because\n"),
     {("measurements/beyond-ceiling.yml", 1, "E708"), ("measurements/beyond-ceiling.yml", 2, "E708")}),
    ("glossary-not-a-list", lambda r: write(r, "glossary.yml", "HBM: memory\n"),
     {("glossary.yml", 1, "E113")}, "subset"),
    ("glossary-term-twice", lambda r: edit(r, "glossary.yml", '"term": "TB"', '"term": "HBM"'),
     {("glossary.yml", 30, "E113"), (f"{A01}/3-silicon.md", 3, "E112"), (f"{A02}/3-silicon.md", 3, "E112")}),
    ("duplicate-key", lambda r: edit(r, f"{A01}/module.yml", "track: A\n", "track: A\ntitle: Again\n"),
     {(f"{A01}/module.yml", 4, "E003")}),
    ("not-utf8", lambda r: (r / f"{A01}/6-tradeoffs.md").write_bytes("- It costs memory.\n- caf\xe9\n".encode("latin-1")),
     {(f"{A01}/6-tradeoffs.md", 2, "E002")}, "subset"),
    ("folder-without-module-yml", lambda r: write(r, "modules/A03-empty/1-analogy.md", "Nothing yet.\n"),
     {("modules/A03-empty", 1, "E100")}),
    ("folder-badly-named", lambda r: (r / A02).rename(r / "modules/A02fake"),
     {("modules/A02fake/module.yml", 1, "E105")}, "subset"),
    ("id-used-twice", lambda r: shutil.copytree(r / A02, r / "modules/A03-copy"),
     {("modules/A03-copy/module.yml", 1, "E107")}, "subset"),
    ("player-without-page", lambda r: edit(r, f"{A01}/module.yml", "labs: [vec]", "labs: [vec]\nplayer: nowhere"),
     {(f"{A01}/module.yml", 10, "E109")}),
    ("first-principles-short", lambda r: write(r, f"{A01}/2-first-principles.md",
        '## Derivation\n\n1. Count the bytes.\n2. Divide by the bandwidth.\n\n$$\nt \\ge \\frac{\\text{bytes}}{B}\n$$\n\n'
        '{{ figure("steps") }}\n\n{{ figure("bound") }}\n\nThe peak is quoted from the datasheet [@vendor-sheet].\n'),
     {(f"{A01}/2-first-principles.md", 1, "E323")}),
    ("silicon-no-hopper", lambda r: write(r, f"{A01}/3-silicon.md",
        "| | AMD CDNA 3 (MI300X) | other |\n|---|---|---|\n| HBM bandwidth | 5.3 TB/s [@amd-sheet] | none |\n| lanes | 64 | 32 |\n"),
     {(f"{A01}/3-silicon.md", 1, "E332"), (f"{A01}/5-performance.md", 2, "E112")}),
    ("silicon-not-side-by-side", lambda r: write(r, f"{A01}/3-silicon.md",
        "NVIDIA Hopper (H200) reads 4.8 TB/s [@vendor-sheet]; AMD CDNA 3 (MI300X) reads 5.3 TB/s [@amd-sheet].\n"),
     {(f"{A01}/3-silicon.md", 1, "E333")}),
    ("exercise-missing", lambda r: (r / "labs/A01/cuda/vec_exercise.cu").unlink(),
     {(f"{A01}/module.yml", 9, "E403")}, "subset"),
    ("lab-unknown-path", lambda r: edit(r, f"{A01}/module.yml", "labs: [vec]", "labs: [{name: vec, paths: [cuda, fortran]}]"),
     {(f"{A01}/module.yml", 9, "E404")}, "subset"),
    ("card-without-question", lambda r: edit(r, "cards/A01.yml", '"q": "Question 0?",', ""),
     {("cards/A01.yml", 2, "E502")}),
    ("card-file-not-a-list", lambda r: write(r, "cards/A01.yml", '{"id": "x"}\n'),
     {("cards/A01.yml", 1, "E502")}, "subset"),
    ("card-unknown-section", lambda r: edit(r, "cards/A01.yml", '"section": "first-principles"', '"section": "nowhere"'),
     {("cards/A01.yml", 2, "E505")}),
    ("card-file-for-no-module", lambda r: write(r, "cards/Z09.yml", json.dumps([{"id": "z", "q": "Q?", "a": "A.",
                                                                             "cite": "@vendor-sheet", "section": "analogy"}])),
     {("cards/Z09.yml", 1, "E506")}),
    ("reference-without-year", lambda r: edit(r, "references.yml", "  year: 2025\n", ""),
     {("references.yml", 11, "E603")}),
    ("reference-unknown-field", lambda r: edit(r, "references.yml", "  year: 2025\n", "  year: 2025\n  colour: red\n"),
     {("references.yml", 14, "E604")}),
    ("unknown-placeholder", lambda r: edit(r, f"{A01}/7-production.md", "PyTorch uses", '{{ frobnicate("x") }} PyTorch uses'),
     {(f"{A01}/7-production.md", 1, "E702")}),
    ("record-lacks-a-field", lambda r: edit(r, "measurements/h200.jsonl", '"unit": "GB/s", ', "", ),
     {("measurements/h200.jsonl", 1, "E704")}, "subset"),
    ("ratio-with-one-key", lambda r: edit(r, f"{A01}/5-performance.md", "Measured:", 'Ratio {{ ratio("A01/vec/kernel/cuda") }}. Measured:'),
     {(f"{A01}/5-performance.md", 4, "E706")}),
    ("path-unknown-module", lambda r: edit(r, "curriculum.yml", "goals: [A02]", "goals: [A09]"),
     {("curriculum.yml", 3, "E802")}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_broken_rule_gives_its_diagnostic(course_dir, case):
    name, mutate, expected, *mode = case
    mutate(course_dir)
    found = set(diagnose(course_dir))
    if mode == ["subset"]:  # a changed id also orphans the module's labs and cards: those follow from it
        assert expected <= found
    else:
        assert found == expected


@pytest.mark.parametrize("section,code,limit,rest", [
    ("1-analogy.md", "E312", 150, '\n\n{{ figure("picture") }}\n\n## Where the analogy breaks\n\nHere.\n'),
    ("2-first-principles.md", "E323", 400, '\n\n## Derivation\n\n1. Count.\n2. Divide.\n\n$$\nt \\ge 1\n$$\n\n'
     '{{ figure("steps") }}\n\n{{ figure("bound") }}\n\nThe peak [@vendor-sheet].\n'),
])
def test_word_thresholds_hold_at_their_boundary(course_dir, section, code, limit, rest):
    from tutor_build.mdscan import scan

    path = course_dir / A01 / section
    extra = scan(rest).words()
    for words, fails in ((limit, False), (limit - 1, True)):
        path.write_text(" ".join(["word"] * (words - extra)) + rest)
        assert scan(path.read_text()).words() == words
        assert ((f"{A01}/{section}", 1, code) in diagnose(course_dir)) == fails, (words, code)


def test_all_errors_are_reported_in_one_run(course_dir):
    for _, mutate, *_ in CASES[:5]:
        mutate(course_dir)
    codes = {code for _, _, code in diagnose(course_dir)}
    assert {"E001", "E104"} <= codes  # a broken module.yml does not hide the other module's problem


def test_a_plot_that_cannot_be_drawn_is_named_at_its_placeholder(course_dir, monkeypatch):
    """E512: the drawing refuses (labels that overlap, text too small); the check names the placeholder.
    The refusals themselves are tested in tests/test_plots.py; here the plot code is made to refuse."""
    from tutor_build.render import plots

    def refuse(course, prefix):
        raise plots.PlotError(f"labels of {prefix} overlap: 'a' and 'b'")

    monkeypatch.setattr(plots, "bar_chart", refuse)
    found = diagnose(course_dir)
    assert (f"{A01}/5-performance.md", 6, "E512") in found
    assert {code for _, _, code in found} == {"E512"}
