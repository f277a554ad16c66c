"""Measurement records: the runner's records, staleness, placeholders and plots."""

from __future__ import annotations

import json

from tutor_build.labs.runner import LabTarget, Outcome, records_from, write_records
from tutor_build.labs.toolchains import Toolchains
from tutor_build.load import load_course
from tutor_build.measurements import records, source_digest
from tutor_build.render.measured import Filler

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TOOLS = Toolchains(nvcc="CUDA 13.0", hipcc="", nvidia_gpu="NVIDIA H200", amd_gpu="", torch="", triton="")


def test_bench_lines_become_records_with_the_source_hash(course_dir):
    target = LabTarget("A01", "vec", "cuda")
    outcome = Outcome(target, True, events=[
        {"event": "check", "ok": True},
        {"event": "measure", "lab": "vec", "variant": "wide", "metric": "bandwidth", "value": 3900.0, "unit": "GB/s",
         "ceiling": {"name": "device-to-device copy", "value": 4100.0, "unit": "GB/s"}, "bytes": 1e9}])
    recs = records_from(course_dir, target, outcome, TOOLS, date="2026-11-29")
    assert len(recs) == 1
    rec = recs[0]
    assert rec["gpu"] == "NVIDIA H200" and rec["toolkit"] == "CUDA 13.0" and rec["bytes"] == 1e9
    assert rec["source"] == ["labs/A01/cuda/vec.cu", "labs/common/cuda/tutor_lab.cuh"]
    assert rec["source_sha256"] == source_digest(course_dir, rec["source"])
    out = course_dir / "measurements" / "h200.jsonl"
    write_records(out, recs)
    write_records(out, recs)  # re-running replaces, never duplicates
    assert sum("A01" in line and '"wide"' in line for line in out.read_text().splitlines()) == 1
    assert records(course_dir)["A01/vec/wide/cuda"]["value"] == 3900.0


def test_placeholders_quote_records_and_local_results(course_dir):
    local = course_dir / "measurements" / "local" / "mine.jsonl"
    local.parent.mkdir()
    rec = json.loads((course_dir / "measurements" / "h200.jsonl").read_text().splitlines()[0])
    rec.update(gpu="NVIDIA RTX 4090", value=800.0)
    local.write_text(json.dumps(rec) + "\n")
    course, _ = load_course(course_dir)
    filler = Filler(course)
    text = filler.fill('{{ value("A01/vec/kernel/cuda") }} and {{ ratio("A01/vec/kernel/cuda", "A02/vec/kernel/cuda") }} '
                       'and {{ share("A01/vec/kernel/cuda", "A02/vec/kernel/cuda") }}; {{ measured("A01/vec/kernel/cuda") }}', "")
    assert text.startswith("3,000 GB/s and 1.0× and 100.0%;")
    assert "your GPU: 800 GB/s on NVIDIA RTX 4090" in text
    fenced = filler.fill('```text\n{{ value("A01/vec/kernel/cuda") }}\n```\n', "")
    assert '{{ value("A01/vec/kernel/cuda") }}' in fenced  # code blocks are left as written


def test_plot_is_svg_drawn_from_the_records(pristine_course):
    course, _ = load_course(pristine_course)
    filler = Filler(course)
    md = filler.fill('{{ plot("A0") }}', "../")
    assert md.startswith("@@TUTOR-SVG:plot-a0@@ **Measured: A01 vec") and md.endswith("@@END-SVG@@")
    assert "device-to-device copy measured in the same run (4,000 GB/s" in md
    svg = filler.inline["plot-a0"]
    assert filler.plots["assets/generated/plots/a0.svg"]  # the downloadable copy
    assert svg.count(">3,000 GB/s, 75.0% of copy</text>") == 2 and "the 4,000 GB/s device-to-device copy" in svg
    again = Filler(course)
    again.fill('{{ plot("A0") }}', "../")
    assert again.inline["plot-a0"] == svg  # deterministic output


def test_tiny_shares_and_huge_ratios_stay_readable():
    from tutor_build.render.measured import fmt_percent, fmt_ratio

    assert fmt_percent(0.0028) == "0.0028%" and fmt_percent(0.06) == "0.06%" and fmt_percent(12.34) == "12.3%"
    assert fmt_ratio(35088.9) == "35,089×" and fmt_ratio(4.83) == "4.8×"


def test_roofline_places_measured_points_under_cited_roofs(course_dir):
    path = course_dir / "measurements" / "h200.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[0].update(flops=2.0e9, bytes=1.2e10, ms=4.0)  # 1/6 FLOP/byte, 0.5 TFLOP/s
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    course, _ = load_course(course_dir)
    filler = Filler(course)
    md = filler.fill('{{ roofline("A01/vec") }}', "../")
    assert md.startswith("@@TUTOR-SVG:roofline-a01-vec@@ **Roofline: A01 vec")
    svg = filler.inline["roofline-a01-vec"]
    assert "4.8 TB/s, bf16 990 TFLOP/s (ridge 206)" in svg  # the datasheet roof, from the cited hardware table
    assert "measured device-to-device copy: 4.00 TB/s" in svg
    from tutor_build.measurements import roofline_points

    (label, x, y, _), = roofline_points(course, "A01/vec")
    assert label == "kernel/cuda" and abs(x - 1 / 6) < 1e-12 and abs(y - 5e11) < 1


def test_roofline_without_counted_flops_is_an_error(course_dir):
    from tutor_build.checks import run_all

    perf = course_dir / "modules/A01-fake-basics/5-performance.md"
    perf.write_text(perf.read_text().replace('{{ plot("A01/vec") }}', '{{ roofline("A01/vec") }}'))
    course, diags = load_course(course_dir)
    found = [(d.path, d.line, d.code) for d in run_all(course, diags)]
    assert found == [("modules/A01-fake-basics/5-performance.md", 6, "E707")]


def test_a_record_measured_with_a_kept_earlier_kit_is_current_only_while_its_lab_is_unchanged(tmp_path):
    from tutor_build.measurements import PREVIOUS_KITS, measured_with, source_digest

    files = ("labs/X/python/lab.py", "labs/common/python/kit.py")
    (tmp_path / "labs/X/python").mkdir(parents=True)
    (tmp_path / "labs/common/python").mkdir(parents=True)
    (tmp_path / files[0]).write_text("lab v1\n")
    (tmp_path / files[1]).write_text("kit v1\n")
    sha = source_digest(tmp_path, files)
    assert measured_with(tmp_path, files, sha) == ""
    (tmp_path / files[1]).write_text("kit v2\n")  # the kit changes: stale
    assert measured_with(tmp_path, files, sha) is None
    kept = tmp_path / PREVIOUS_KITS / "abc1234" / files[1]
    kept.parent.mkdir(parents=True)
    kept.write_text("kit v1\n")  # the earlier kit is kept, but vouches for no current kit yet: stale
    assert measured_with(tmp_path, files, sha) is None
    import hashlib
    (kept.parents[3] / "valid-for.txt").write_text(hashlib.sha256(b"kit v2\n").hexdigest() + "  " + files[1] + "\n")
    assert measured_with(tmp_path, files, sha) == "abc1234"  # reviewed for kit v2: current, and named
    (tmp_path / files[1]).write_text("kit v3\n")  # a later kit change nobody reviewed: stale again
    assert measured_with(tmp_path, files, sha) is None
    (tmp_path / files[1]).write_text("kit v2\n")
    (tmp_path / files[0]).write_text("lab v2\n")  # the lab itself changes: stale whatever is kept
    assert measured_with(tmp_path, files, sha) is None


def test_a_number_measured_with_an_earlier_kit_says_so_on_the_page():
    from tutor_build.load import load_course
    from tutor_build.measurements import measured_with
    from tutor_build.render.measured import Filler

    course, _ = load_course(ROOT)
    carried = [m for m in course.measurements if not m.local and measured_with(ROOT, m.source, m.source_sha256)]
    current = [m for m in course.measurements if not m.local and measured_with(ROOT, m.source, m.source_sha256) == ""]
    filler = Filler(course)
    for m in carried:
        kit = measured_with(ROOT, m.source, m.source_sha256)
        assert f"with the lab kit of {kit})" in filler.call("measured", (m.key,), "")
    for m in current[:5]:
        assert "with the lab kit of" not in filler.call("measured", (m.key,), "")


def _python_function(text: str, name: str) -> str:
    """The code of a top-level function, its docstring left out (a comment may change, the code may not)."""
    import ast

    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = node.body[1:] if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) else node.body
            return ast.dump(ast.Module(body=body, type_ignores=[])) + ast.dump(node.args)
    raise AssertionError(f"no function {name}")


def _cpp_function(text: str, signature: str) -> str:
    """A C++ function from its signature line to the closing brace at the start of a line."""
    start = text.index(signature)
    return text[start:text.index("\n}\n", start)]


KEPT_TIMERS = {
    "labs/common/python/tutor_lab.py": ("python", ["median_ms", "copy_ceiling", "measure", "gbps", "sync"]),
    "labs/common/cuda/tutor_lab.cuh": ("cuda", ["float median_ms(F&& launch, int warmup = 3, int reps = 20)",
                                                "inline Ceiling copy_ceiling(", "inline double gbps("]),
}


def test_a_kept_kit_vouches_only_for_kits_whose_timer_is_the_one_it_measured_with():
    """measurements/previous-kits/<commit>/valid-for.txt lists the current kit files that leave an earlier
    record's measurement alone; for that to be true, the code a record's number came from (the timer, the
    ceiling, the record writer) must be the same in the kept kit and the current one."""
    import hashlib

    from tutor_build.measurements import PREVIOUS_KITS

    folders = sorted(p for p in (ROOT / PREVIOUS_KITS).iterdir() if p.is_dir())
    compared = 0
    for folder in folders:
        vouched = set((folder / "valid-for.txt").read_text(encoding="utf-8").split())
        for rel, (language, names) in KEPT_TIMERS.items():
            kept, current = folder / rel, ROOT / rel
            if not kept.is_file() or hashlib.sha256(current.read_bytes()).hexdigest() not in vouched:
                continue
            old, new = kept.read_text(encoding="utf-8"), current.read_text(encoding="utf-8")
            for name in names:
                pick = _python_function if language == "python" else _cpp_function
                assert pick(old, name) == pick(new, name), f"{folder.name} vouches for {rel}, whose {name} changed"
                compared += 1
    assert compared >= 3 * (len(KEPT_TIMERS["labs/common/python/tutor_lab.py"][1]) + 3)  # three folders, both kits
