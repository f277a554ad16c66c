"""The lab loop a learner relies on: mistakes are caught and explained, crashes are named, bad
arguments are refused, hints and progress work. Each test would fail if its behaviour came back broken."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from requirements_gate import need

sys.path.insert(0, str(Path(__file__).parent / "mutants"))
from labs import MUTANTS  # noqa: E402

from tutor_build.labs import feedback, runner  # noqa: E402
from tutor_build.labs.feedback import learner_frames  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "labs/common/python"


def tutor(*args: str, cwd: Path = ROOT, root: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root or ROOT), CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-m", "tutor_build.cli", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=900)


def need_triton() -> None:
    need(importlib.util.find_spec("torch") is not None and importlib.util.find_spec("triton") is not None,
         "PyTorch and Triton are needed to run the Triton labs")


@pytest.fixture(scope="module")
def scratch_course(tmp_path_factory) -> Path:
    """A copy of the course whose lab files a test may change."""
    dest = tmp_path_factory.mktemp("course") / "c"
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", ".venv", "site", "build", "node_modules",
                                                              "__pycache__", ".cache", "local"))
    return dest


# ---------------------------------------------------------------- held-out mutants
@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_mistaken_solution_is_caught_and_named(mutant, scratch_course):
    need_triton()
    _, path, old, new, phrase = mutant
    lab_file = scratch_course / path
    original = lab_file.read_text(encoding="utf-8")
    assert old in original, f"the mutant no longer applies to {path}: update tests/mutants/labs.py"
    lab_file.write_text(original.replace(old, new, 1), encoding="utf-8")
    try:
        module, lab = path.split("/")[1], Path(path).stem
        done = tutor("labs", "verify", module, lab, "--vendor", "triton", "--root", str(scratch_course),
                     root=scratch_course)
    finally:
        lab_file.write_text(original, encoding="utf-8")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert phrase in out, out
    assert "hint:" in out and "replay with the same inputs:" in out, out
    assert "Traceback" not in out, out
    assert not any(line.startswith("ok ") for line in out.splitlines()), out


@pytest.mark.slow
def test_the_untouched_mutant_targets_pass(scratch_course):
    """The mutants start from solutions that pass: a caught mutant is the mutation's doing."""
    need_triton()
    for module in sorted({m[1].split("/")[1] for m in MUTANTS}):
        done = tutor("labs", "verify", module, "--vendor", "triton", "--root", str(scratch_course),
                     root=scratch_course)
        assert done.returncode == 0, done.stdout[-3000:]


# ---------------------------------------------------------------- the kit's guards and poison
def run_kit(code: str, interpret: bool = False) -> tuple[int, list[dict]]:
    env = dict(os.environ, PYTHONPATH=str(KIT), CUDA_VISIBLE_DEVICES="")
    env.pop("TRITON_INTERPRET", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "lab_under_test.py"  # a file, so tracebacks and kernel lines have their source
        script.write_text("import tutor_lab as lab, torch\n" + code, encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    events = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    return done.returncode, events


def test_a_write_past_an_output_fails_the_check_with_the_index():
    need(importlib.util.find_spec("torch") is not None, "PyTorch is needed for the Python lab kit")
    rc, events = run_kit(
        "c = lab.output(5, name='c')\n"
        "c.copy_(torch.arange(5.0))\n"
        "c._base[c.storage_offset() + 5] = 1.0  # one element past the end\n"
        "lab.check('t', 'v', '5', c, torch.arange(5.0), 1)\n"
        "raise SystemExit(lab.finish('t'))")
    check = events[0]
    assert rc == 1 and check["ok"] is False and check["cause"] == "guard_written"
    assert check["guard_written"] == ["wrote 1 element past the end of c (index 5; c has 5 elements, 0..4)"]


def test_outputs_start_poisoned_and_unwritten_elements_are_named():
    need(importlib.util.find_spec("torch") is not None, "PyTorch is needed for the Python lab kit")
    rc, events = run_kit(
        "c = lab.output(2, 3, name='c')\n"
        "assert bool((c.view(torch.uint8) == 0xFF).all())\n"
        "c[0].copy_(torch.ones(3))\n"
        "lab.check('t', 'v', '2x3', c, torch.ones(2, 3), 1)\n"
        "raise SystemExit(lab.finish('t'))")
    check = events[0]
    assert rc == 1 and check["cause"] == "never_written" and check["never_written"] == 3
    assert check["first_bad"] == [1, 0] and check["nan"] == 3 and check["max_abs_err"] == 0.0


def test_poison_fills_a_buffer_a_lab_made_itself():
    """lab.poison on a tensor the lab allocated (the timeline and calibration labs do): every byte 0xFF."""
    need(importlib.util.find_spec("torch") is not None, "PyTorch is needed for the Python lab kit")
    rc, events = run_kit(
        "t = lab.poison(torch.zeros(5))\n"
        "h = lab.poison(torch.zeros(3, dtype=torch.float16))\n"
        "print('{\"poisoned\": %s}' % str(bool((t.view(torch.uint8) == 0xFF).all()"
        " and (h.view(torch.uint8) == 0xFF).all() and t.isnan().all())).lower())\n")
    assert rc == 0 and events == [{"poisoned": True}]


def test_a_value_read_past_an_input_is_named():
    need(importlib.util.find_spec("torch") is not None, "PyTorch is needed for the Python lab kit")
    rc, events = run_kit(
        "x = lab.rand(4)\n"
        "y = lab.output(4, name='y')\n"
        "y.copy_(x)\n"
        "y[3] = x._base[x.storage_offset() + 4]  # the element after x: the guard pattern\n"
        "lab.check('t', 'v', '4', y, x, 1)\n"
        "raise SystemExit(lab.finish('t'))")
    assert rc == 1 and events[0]["cause"] == "from_guard" and events[0]["from_guard"] == 1


def test_a_half_precision_value_read_past_an_input_is_named():
    need(importlib.util.find_spec("torch") is not None, "PyTorch is needed for the Python lab kit")
    rc, events = run_kit(
        "x = lab.guarded(torch.ones(4, dtype=torch.float16))\n"
        "y = lab.output(4, dtype=torch.float16, name='y')\n"
        "y.copy_(x)\n"
        "y[2] = x._base[x.storage_offset() + 4]  # the two guard halves a 2-byte read can return\n"
        "y[3] = x._base[x.storage_offset() + 5]\n"
        "lab.check('t', 'v', '4', y, x, 1)\n"
        "raise SystemExit(lab.finish('t'))")
    assert rc == 1 and events[0]["from_guard"] == 2


@pytest.mark.slow
def test_the_interpreter_names_the_kernel_line_of_a_stray_store():
    need_triton()
    rc, events = run_kit(
        "import triton, triton.language as tl\n"
        "@triton.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.zeros((BLOCK,), tl.float32))\n"
        "x = torch.zeros(3)\n"
        "k[(1,)](x, 3, BLOCK=8)\n"
        "lab.check('t', 'v', '3', x, torch.zeros(3), 1)\n"
        "raise SystemExit(lab.finish('t'))", interpret=True)
    check = events[0]
    assert rc == 1 and check["cause"] == "out_of_bounds"
    assert check["out_of_bounds"][0].startswith("k stored 5 lanes past the end of x_ptr (indices 3..7")
    assert "tl.store(x_ptr + offs" in check["out_of_bounds"][0]


# ---------------------------------------------------------------- the runner's verdict
GOOD = '{"event": "check", "lab": "l", "variant": "v", "size": "1", "ok": true, "mismatches": 0, "seed": 1}\n'
TARGET = runner.LabTarget("A01", "vector_add", "triton")


@pytest.mark.parametrize("code, words", [(-11, "SIGSEGV"), (-6, "double free"), (-7, "SIGBUS")])
def test_a_crash_by_signal_is_a_failure_in_plain_words(code, words):
    outcome = runner.judge(TARGET, False, code, GOOD, "double free or corruption (out)\n")
    assert not outcome.ok
    assert words in outcome.detail and "killed by" in outcome.detail


def test_a_gpu_memory_fault_is_explained():
    outcome = runner.judge(TARGET, False, 2, GOOD, "error: cudaDeviceSynchronize() returned cudaErrorIllegalAddress")
    assert not outcome.ok and "memory fault" in outcome.detail


def test_a_run_that_exits_zero_without_checks_does_not_pass():
    assert not runner.judge(TARGET, False, 0, "", "").ok
    assert runner.judge(TARGET, False, 0, GOOD, "").ok


def test_the_learners_own_lines_survive_a_long_traceback():
    trace = ("Traceback (most recent call last):\n"
             '  File "/home/me/course/labs/A01/triton/vector_add_exercise.py", line 27, in add_kernel\n'
             "    a = tl.load(a_ptr + offs, mask=mask)\n" + "".join(
                 f'  File "/venv/lib/triton/runtime/interpreter.py", line {i}, in f\n    x()\n' for i in range(40))
             + "NameError: name 'offs' is not defined\n")
    frames = learner_frames(trace, "labs/A01/")
    assert frames == ["labs/A01/triton/vector_add_exercise.py:27 in add_kernel: a = tl.load(a_ptr + offs, mask=mask)"]
    outcome = runner.judge(TARGET, True, 1, "", trace)
    assert "vector_add_exercise.py:27" in outcome.detail and "NameError" in outcome.detail


# ---------------------------------------------------------------- bad input is refused
@pytest.mark.parametrize("args, words", [
    (("verify", "A99"), "the modules are A01"),
    (("verify", "A01", "--lab", "vectoradd"), "its labs are timeline, vector_add"),
    (("verify", "A01", "vectoradd"), "its labs are timeline, vector_add"),
    (("verify", "A01", "--vendor", "rocm"), "choose from"),
    (("verify", "B07", "--vendor", "triton"), "it has: cuda, hip, python"),
    (("hint", "A01"), "name one of timeline, vector_add"),
    (("hint",), "name a module"),
    (("hint", "A01", "vector_add", "--level", "4"), "choose from"),
    (("status", "Z01"), "no module 'Z01'"),
])
def test_bad_arguments_exit_2_and_list_the_choices(args, words):
    done = tutor("labs", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_module_ids_are_case_insensitive_and_any_folder_of_the_checkout_works():
    done = tutor("labs", "list", "a01", cwd=ROOT / "labs/A01/triton")
    assert done.returncode == 0, done.stderr
    assert "A01/vector_add/triton" in done.stdout


def test_outside_the_checkout_the_command_says_so(tmp_path):
    done = tutor("labs", "status", cwd=tmp_path)
    assert done.returncode == 2 and "not inside the course" in done.stderr


# ---------------------------------------------------------------- hints and progress
def test_hints_reveal_one_level_at_a_time():
    one = tutor("labs", "hint", "A01", "vector_add").stdout
    three = tutor("labs", "hint", "A01", "vector_add", "--level", "3", "--vendor", "triton").stdout
    assert "question:" in one and "idea:" not in one and "line (" not in one
    assert "idea:" in three and "line (triton):" in three and "line (cuda)" not in three
    assert "tl.program_id(0)" in three and "tl.program_id(0)" not in one


@pytest.mark.slow
def test_a_passing_exercise_is_recorded_and_listed(scratch_course):
    need_triton()
    exercise = scratch_course / "labs/A01/triton/vector_add_exercise.py"
    saved = exercise.read_text(encoding="utf-8")
    before = tutor("labs", "status", "A01", "--root", str(scratch_course), root=scratch_course).stdout
    assert "A01/vector_add/triton" in before and "0 of 6" in before
    failing = tutor("labs", "verify", "A01", "vector_add", "--vendor", "triton", "--exercise",
                    "--root", str(scratch_course), root=scratch_course)
    assert failing.returncode == 1
    shutil.copy(scratch_course / "labs/A01/triton/vector_add.py", exercise)  # the learner's finished work
    try:
        done = tutor("labs", "verify", "A01", "vector_add", "--vendor", "triton", "--exercise",
                     "--root", str(scratch_course), root=scratch_course)
        assert done.returncode == 0, done.stdout
        after = tutor("labs", "status", "A01", "--root", str(scratch_course), root=scratch_course).stdout
    finally:
        exercise.write_text(saved, encoding="utf-8")
        (scratch_course / "measurements/local/progress.json").unlink(missing_ok=True)
    line = next(ln for ln in after.splitlines() if ln.startswith("A01/vector_add/triton"))
    assert "done" in line and "not done" not in line and "1 of 6" in after


def test_the_planner_data_carries_passed_labs_only_in_a_learners_checkout(scratch_course):
    from tutor_build.labs import progress
    from tutor_build.load import load_course
    from tutor_build.render.pages import course_data

    course, _ = load_course(scratch_course)
    assert "labs_passed" not in course_data(course)
    progress.record(scratch_course, "A01/vector_add/triton", "labs/A01/triton/vector_add_exercise.py")
    try:
        text = course_data(course)
    finally:
        (scratch_course / progress.PROGRESS).unlink()
    data = json.loads(text[text.index("=") + 1:].rstrip().rstrip(";"))
    assert data["labs_passed"]["A01"] == {"done": 1, "total": 2}
    assert data["labs_passed"]["A02"] == {"done": 0, "total": 1}


def test_hints_for_one_vendor_show_only_its_todos_and_one_todo_on_request():
    triton = tutor("labs", "hint", "A02", "transpose", "--vendor", "triton").stdout
    assert "TODO 3:" in triton and "TODO 1:" not in triton and "TODO 7:" not in triton
    one = tutor("labs", "hint", "A01", "vector_add", "--todo", "2", "--level", "2").stdout
    assert "TODO 2:" in one and "TODO 1:" not in one and "--level 3 --todo 2" in one
    missing = tutor("labs", "hint", "A01", "vector_add", "--todo", "9")
    assert missing.returncode == 2 and "its TODOs are 1, 2" in missing.stderr


def test_the_most_telling_failure_is_shown_first():
    wrong = [{"event": "check", "variant": f"v{i}", "ok": False, "mismatches": 1, "cause": "wrong_value"} for i in range(3)]
    stray = {"event": "check", "variant": "late", "ok": False, "mismatches": 0, "cause": "out_of_bounds",
             "out_of_bounds": ["k loaded 3 lanes past the end of x_ptr"]}
    stdout = "".join(json.dumps(e) + "\n" for e in wrong + [stray])
    detail = runner.judge(TARGET, True, 1, stdout, "").detail
    assert detail.index("late") < detail.index("v0")
    assert "k loaded 3 lanes past the end of x_ptr" in detail


@pytest.mark.parametrize("cause", sorted(feedback.FRAMEWORK_HINTS))
def test_a_pytorch_lab_gets_hints_of_its_own_kind(cause):
    """A framework-level lab has no lanes, masks or programs: its failing check names the formula and the units;
    a kernel lab with the same failure keeps the kernel hint."""
    failing = json.dumps({"event": "check", "variant": "zero1_rank0", "ok": False, "mismatches": 1, "cause": cause}) + "\n"
    pytorch = runner.judge(runner.LabTarget("B06", "zero_memory", "python"), True, 1, failing, "").detail
    kernel = runner.judge(TARGET, True, 1, failing, "").detail
    assert feedback.FRAMEWORK_HINTS[cause] in pytorch and feedback.HINTS[cause] not in pytorch
    assert feedback.HINTS[cause] in kernel and feedback.FRAMEWORK_HINTS[cause] not in kernel
    for kernel_word in ("mask", "program's offset", "grid", "lane"):
        assert kernel_word not in feedback.FRAMEWORK_HINTS[cause]


def test_a_triton_lab_runs_on_a_cpu_without_setting_the_interpreter_by_hand():
    need_triton()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, "labs/A01/triton/vector_add.py", "--quick"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "through the interpreter" in done.stderr


@pytest.mark.slow
def test_an_exercise_that_fails_again_is_no_longer_done(scratch_course):
    need_triton()
    from tutor_build.labs import progress

    progress.record(scratch_course, "A01/vector_add/triton", "labs/A01/triton/vector_add_exercise.py")
    try:
        done = tutor("labs", "verify", "A01", "vector_add", "--vendor", "triton", "--exercise",
                     "--root", str(scratch_course), root=scratch_course)
        assert done.returncode == 1
        assert "A01/vector_add/triton" not in progress.load(scratch_course)
    finally:
        (scratch_course / progress.PROGRESS).unlink(missing_ok=True)


@pytest.mark.slow
def test_an_untouched_exercise_says_its_todos_are_the_cause(scratch_course, tmp_path):
    """The hints of an untouched exercise describe the placeholder code; the report says so first, and stops
    saying it once the learner has edited the file."""
    need_triton()
    repo = tmp_path / "checkout"
    shutil.copytree(scratch_course, repo)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "course"]):
        subprocess.run(git + cmd, cwd=repo, check=True, capture_output=True)
    rel = "labs/A01/triton/vector_add_exercise.py"
    done = tutor("labs", "verify", "A01", "vector_add", "--vendor", "triton", "--exercise", "--root", str(repo), root=repo)
    assert done.returncode == 1 and f"{rel} is as the course ships it" in done.stdout + done.stderr
    (repo / rel).write_text((repo / rel).read_text() + "\n# my edit\n")
    done = tutor("labs", "verify", "A01", "vector_add", "--vendor", "triton", "--exercise", "--root", str(repo), root=repo)
    assert done.returncode == 1 and "as the course ships it" not in done.stdout + done.stderr
