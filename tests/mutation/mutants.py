"""Deliberate breaks of the modules every quoted number and every lab verdict rests on. Each must make at
least one of the tests named beside it fail; `tests/mutation/run.py` applies them one at a time to a copy of
the tree and reports which test killed each. A mutant no test kills is a gap in the suite.

Each entry: (id, file, the text replaced (it must occur exactly once), its replacement, the tests to run)."""

RENDERED = ["tests/test_rendered_numbers.py"]
PY_KIT = ["tests/test_lab_feedback.py", "-k", "poison or past or read_past or value_read"]
HOST_KIT = ["tests/test_kit_host.py"]
CHECKS = ["tests/test_checks.py"]

MUTANTS = [
    # ---- placeholders: the numbers a reader sees (tutor_build/render/measured.py, model.py)
    ("ratio-operands-swapped", "tutor_build/render/measured.py",
     "return fmt_ratio(a.value / b.value)", "return fmt_ratio(b.value / a.value)", RENDERED),
    ("share-operands-swapped", "tutor_build/render/measured.py",
     "return fmt_percent(100 * a.value / b.value)", "return fmt_percent(100 * b.value / a.value)", RENDERED),
    ("share-not-a-percent", "tutor_build/render/measured.py",
     "return fmt_percent(100 * a.value / b.value)", "return fmt_percent(a.value / b.value)", RENDERED),
    ("small-percent-rounded-to-zero", "tutor_build/render/measured.py",
     'else f"{pct:.2g}%"', 'else f"{pct:.1f}%"', RENDERED),
    ("value-shown-as-its-ceiling", "tutor_build/render/measured.py",
     "return fmt_value(rec.value, unit_of(rec))", "return fmt_value(rec.ceiling_value, unit_of(rec))", RENDERED),
    ("counter-unit-singular", "tutor_build/render/measured.py",
     "COUNTER_UNITS = {\"request\": \"requests\",", "COUNTER_UNITS = {\"request\": \"request\",", RENDERED),
    ("errata-link-dropped", "tutor_build/render/pages.py",
     "+ (f\" · {module_line(m)}\" if m.errata else \"\")", "", ["tests/test_render_pages.py", "-k", "errata"]),
    ("percent-of-ceiling-inverted", "tutor_build/model.py",
     "return 100.0 * self.value / self.ceiling_value", "return 100.0 * self.ceiling_value / self.value", RENDERED),
    ("thousands-separator-dropped", "tutor_build/render/measured.py",
     'text = f"{value:,.0f}"', 'text = f"{value:.0f}"', RENDERED),
    # ---- the Python lab kit: poison, guards, the check (labs/common/python/tutor_lab.py)
    ("py-poison-no-op", "labs/common/python/tutor_lab.py",
     "t.view(torch.uint8).fill_(0xFF)", "pass", PY_KIT),
    ("py-outputs-not-poisoned", "labs/common/python/tutor_lab.py",
     "name=name, fill=POISON_BYTE, device=device)", "name=name, fill=None, device=device)", PY_KIT),
    ("py-guard-zones-empty", "labs/common/python/tutor_lab.py",
     "return min(max(numel, 4096), 1 << 20)", "return 0", PY_KIT),
    ("py-check-ignores-nan", "labs/common/python/tutor_lab.py",
     "bad = ~(torch.isfinite(g) & (err <= atol + rtol * r.abs()))",
     "bad = ~(torch.isnan(g) | (err <= atol + rtol * r.abs()))", PY_KIT),
    # ---- the CUDA and HIP lab kits (labs/common/{cuda,hip})
    ("cuda-poison-no-op", "labs/common/cuda/tutor_lab.cuh",
     "TUTOR_CHECK(cudaMemset(dev_ptr, 0xFF, bytes));", "(void)dev_ptr; (void)bytes;", HOST_KIT),
    ("hip-poison-no-op", "labs/common/hip/tutor_lab.hip.h",
     "TUTOR_CHECK(hipMemset(dev_ptr, 0xFF, bytes));", "(void)dev_ptr; (void)bytes;", HOST_KIT),
    ("cuda-guard-writes-unreported", "labs/common/cuda/tutor_lab.cuh",
     "    if (!changed) continue;\n", "    continue;\n", HOST_KIT),
    ("hip-guard-writes-unreported", "labs/common/hip/tutor_lab.hip.h",
     "    if (!changed) continue;\n", "    continue;\n", HOST_KIT),
    ("cuda-never-written-uncounted", "labs/common/cuda/tutor_lab.cuh",
     "if (bits == 0xFFFFFFFFu) ++never_written;", "if (bits == 0u) ++never_written;", HOST_KIT),
    ("cuda-tolerance-loosened", "labs/common/cuda/tutor_lab.cuh",
     "bool ok = std::isfinite(g) && err <= atol + rtol * std::fabs(r);",
     "bool ok = std::isfinite(g) && err <= 10 * (atol + rtol * std::fabs(r)) + 1e-2;", HOST_KIT),
    ("hip-verdict-ignores-guards", "labs/common/hip/tutor_lab.hip.h",
     "bool ok = bad == 0 && written.empty();", "bool ok = bad == 0;", HOST_KIT),
    # ---- the lab runner's verdict (tutor_build/labs/runner.py)
    ("runner-verdict-always-ok", "tutor_build/labs/runner.py",
     "ok = returncode == 0 and not failed and (bool(checks) or bench)", "ok = True",
     ["tests/test_lab_feedback.py", "-k", "without_checks or signal or telling"]),
    ("runner-ignores-exit-status", "tutor_build/labs/runner.py",
     "ok = returncode == 0 and not failed and (bool(checks) or bench)", "ok = not failed and (bool(checks) or bench)",
     ["tests/test_lab_feedback.py", "-k", "signal or memory_fault"]),
    ("runner-passes-a-silent-run", "tutor_build/labs/runner.py",
     "ok = returncode == 0 and not failed and (bool(checks) or bench)", "ok = returncode == 0 and not failed",
     ["tests/test_lab_feedback.py", "-k", "without_checks"]),
    # ---- the toolchain gates (tutor_build/labs/toolchains.py)
    ("probe-finds-no-nvcc", "tutor_build/labs/toolchains.py",
     'if shutil.which("nvcc"):', "if False:", ["tests/test_labs.py", "-k", "cuda_labs_compile"]),
    ("probe-finds-no-hipcc", "tutor_build/labs/toolchains.py",
     'if shutil.which("hipcc"):', "if False:", ["tests/test_labs.py", "-k", "hip_labs_compile"]),
    # ---- the checks (tutor_build/checks/, anki)
    ("analogy-threshold-lowered", "tutor_build/checks/sections.py",
     "if doc.words() < 150:", "if doc.words() < 15:", CHECKS),
    ("first-principles-threshold-lowered", "tutor_build/checks/sections.py",
     "if doc.words() < 400:", "if doc.words() < 40:", CHECKS),
    ("figure-minimum-dropped", "tutor_build/checks/figures.py", "MIN_FIGURES = 3", "MIN_FIGURES = 0", CHECKS),
    ("anki-id-per-run-hash", "tutor_build/anki.py",
     'digest = hashlib.sha256(f"tutor-course/anki/{name}".encode("utf-8")).digest()',
     'digest = hash(name).to_bytes(8, "little", signed=True)', ["tests/test_anki.py"]),
    ("stale-records-accepted", "tutor_build/measurements.py",
     "    if source_digest(root, files) == sha256:\n        return \"\"",
     "    if True:\n        return \"\"", ["tests/test_measurements.py"]),
]
