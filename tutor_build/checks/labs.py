"""Labs: every lab of module.yml has a solution and an exercise in each path; HIP mirrors CUDA line for line."""

from __future__ import annotations

from ..diagnostics import Diagnostic, error
from ..labs.counterparts import check_pairs
from ..labs.hints import hints_file, load_hints, todo_numbers
from ..model import LAB_PATHS, Course


def check(course: Course) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for m in course.modules:
        for lab in m.labs:
            for p in lab.paths:
                if p not in LAB_PATHS:
                    continue
                base = f"labs/{m.id}/{p}/{lab.name}"
                solution, exercise = base + LAB_PATHS[p], base + "_exercise" + LAB_PATHS[p]
                if not (course.root / solution).is_file():
                    out.append(error(lab.ref.path, lab.ref.line, "E401", f"lab '{lab.name}' has no {p} solution {solution}"))
                if not (course.root / exercise).is_file():
                    out.append(error(lab.ref.path, lab.ref.line, "E403", f"lab '{lab.name}' has no {p} exercise {exercise}"))
                elif "TODO" not in (course.root / exercise).read_text(encoding="utf-8", errors="replace"):
                    out.append(error(exercise, 1, "E405", "the exercise has no TODO for the learner"))
            out += _hints(course, m.id, lab)
    if (course.root / "labs").is_dir():
        for mismatch in check_pairs(course.root):
            if mismatch.reason == "has no HIP counterpart":
                out.append(error(mismatch.cuda_path, 1, "E402", f"has no HIP counterpart {mismatch.hip_path}"))
            else:
                out.append(error(
                    mismatch.hip_path, mismatch.line, "E402",
                    f"{mismatch.reason}: {mismatch.cuda_path}:{mismatch.line} `{mismatch.cuda_line.strip()}` "
                    f"vs `{mismatch.hip_line.strip()}`",
                ))
    return out


def _hints(course: Course, module: str, lab) -> list[Diagnostic]:
    """Every lab has graded hints (E406, E407), one for each TODO number of its exercises (E408)."""
    vendors = tuple(p for p in lab.paths if p in LAB_PATHS)
    if not vendors:
        return []
    hints, out = load_hints(course.root, module, lab.name, vendors)
    if out:  # missing or malformed: E408 would only repeat the problem
        return out
    covered = {h.todo for h in hints}
    for p in vendors:
        exercise = course.root / f"labs/{module}/{p}/{lab.name}_exercise{LAB_PATHS[p]}"
        if exercise.is_file():
            for n in sorted(todo_numbers(exercise.read_text(encoding="utf-8", errors="replace")) - covered):
                out.append(error(hints_file(module, lab.name), 1, "E408",
                                 f"no hint for TODO {n} of {exercise.relative_to(course.root)}"))
    return out
