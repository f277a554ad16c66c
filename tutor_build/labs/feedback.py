"""Turns what a lab run printed into words that point at the bug: the failing checks, the cause the
kit observed (guard written, poison left, value read from outside an input, wrong value), a crash by
signal, and the learner's own lines in a traceback."""

from __future__ import annotations

import re
import signal

# One hint per cause the lab kits report (labs/common/*: the `cause` field of a failing check).
HINTS = {
    "out_of_bounds": "a load or store reached outside its tensor. Every lane whose index is at or past the "
                     "end (or before the start) must be masked off: check the mask of every load and store, "
                     "the comparison (< or <=), and which size (rows or columns) each index is tested against.",
    "guard_written": "the kernel wrote outside its output. Check the bound that guards the store (< or <=, "
                     "rows or columns), the grid, and that each index uses the right stride.",
    "never_written": "some elements were never written: they still hold the NaN poison. Does the grid cover "
                     "every element (round the number of programs or blocks up, not down)? Does each "
                     "program or block add its own offset? Does the bound let the last element through?",
    "from_guard": "some elements hold the guard pattern that sits just outside an input: the kernel read "
                  "past the end (or before the start) of an input. Check the bounds on the loads.",
    "nan_or_inf": "some elements are NaN or Inf where the reference is finite: a value read from outside "
                  "an input, a division by zero, or an overflow.",
    "wrong_value": "every element was written, but some hold the wrong value. Check the arithmetic first: a "
                   "TODO still as it came (its placeholder returns a plausible value), the order of the "
                   "operations, a rounding, a mask that lets padding into a sum; then the index arithmetic "
                   "(rows or columns, strides, the program's offset).",
    "shape": "the output has the wrong shape: check how it is allocated.",
}

# A framework-level lab (python/, the "PyTorch" tab) has no lanes, masks or grid: its checks hold a count,
# a formula or a model's output against a reference, so its hints name those instead.
FRAMEWORK_HINTS = {
    "wrong_value": "the value differs from its reference. The check's name says what it compares: find the "
                   "TODO that computes it and hold it against the derivation on the module page (section 2): "
                   "every term of the formula, the units (bytes or elements, per rank or in total, bytes or "
                   "MiB), the size of the dtype. A TODO as it came returns a placeholder.",
    "never_written": "the output still holds the poison: the TODO that fills it has not written it (it may "
                     "still return early, or write a copy instead of the tensor it was given).",
    "nan_or_inf": "some elements are NaN or Inf where the reference is finite: a division by zero, an "
                  "overflow in a low-precision dtype, or a tensor from torch.empty read before it is written.",
}

SIGNALS = {
    "SIGSEGV": "the process touched memory it does not own. In a kernel lab that is almost always a load or "
               "store past the end of a buffer: check the masks (Triton) or the `if (i < n)` bound "
               "(CUDA/HIP), and the grid size.",
    "SIGABRT": "the process aborted itself. After a stray store, the memory allocator often finds its own "
               "bookkeeping overwritten ('double free or corruption', 'corrupted size'): a store past the "
               "end of a buffer, usually a missing or wrong mask.",
    "SIGBUS": "a misaligned or out-of-range memory access: check pointer arithmetic and element sizes.",
    "SIGFPE": "an arithmetic fault, usually an integer division or modulo by zero.",
    "SIGKILL": "the process was killed from outside, usually for running out of memory.",
    "SIGILL": "an illegal instruction: the program was built for another processor.",
}

GPU_FAULTS = re.compile(r"illegal memory access|cudaErrorIllegalAddress|hipErrorIllegalAddress|"
                        r"misaligned address|unspecified launch failure|memory access fault", re.IGNORECASE)

FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\n(?P<src>[^\n]*)', re.MULTILINE)


def explain_exit(returncode: int, stderr: str) -> str:
    """Plain words for a run that ended badly, or "" for an ordinary failing exit."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        meaning = SIGNALS.get(name, "the process was stopped by a signal.")
        return f"the lab crashed: killed by {name} (exit status {returncode}). This usually means {meaning}"
    if GPU_FAULTS.search(stderr):
        return ("the GPU reported a memory fault: a thread or program read or wrote outside a buffer. "
                "Check the bounds of every load and store; `tutor labs sanitize` names the exact line (NVIDIA).")
    return ""


def learner_frames(stderr: str, lab_dir: str) -> list[str]:
    """`path:line in function: source` for every traceback frame in the lab's own files, not the kit's."""
    frames, seen = [], set()
    lab_dir = lab_dir.strip("/") + "/"
    for m in FRAME.finditer(stderr):
        path = m.group("file").replace("\\", "/")
        if lab_dir not in path or "/labs/common/" in path:
            continue
        rel = path[path.index(lab_dir):]
        text = f"{rel}:{m.group('line')} in {m.group('fn')}: {m.group('src').strip()}"
        if text not in seen:
            seen.add(text)
            frames.append(text)
    return frames


def last_error(stderr: str) -> str:
    """The exception line a Python traceback ends with (the innermost one of a chain)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b", ln):
            return ln.strip()
    return lines[-1].strip() if lines else ""


def _value(x) -> str:
    return str(x) if not isinstance(x, float) else f"{x:.9g}"


def describe_check(e: dict) -> list[str]:
    """A failing check line of a lab, as a few lines a learner can act on."""
    head = f"{e.get('variant', '?')}"
    if e.get("size"):
        head += f", size {e['size']}"
    if "seed" in e:
        head += f", seed {e['seed']}"
    lines = [head + ":"]
    for report in e.get("out_of_bounds", []):
        lines.append(f"  out of bounds: {report}")
    for report in e.get("guard_written", []):
        lines.append(f"  guard zone: {report}")
    for launch in e.get("launches", []):
        lines.append(f"  launched {launch}")
    if e.get("error"):
        lines.append(f"  {e['error']}")
    bad = e.get("mismatches")
    if bad:
        numel = e.get("numel")
        kinds = [f"{e[k]} {label}" for k, label in (("never_written", "never written (still the poison)"),
                                                   ("from_guard", "read from outside an input"),
                                                   ("nan_or_inf", "NaN or Inf"),
                                                   ("wrong_value", "wrong finite value")) if e.get(k)]
        noun = "element" if (numel or bad) == 1 else "elements"
        lines.append(f"  {bad}{f' of {numel}' if numel else ''} {noun} wrong"
                     + (f": {', '.join(kinds)}" if kinds else ""))
        if "first_bad" in e:
            pos = e["first_bad"]
            where = f"[{', '.join(map(str, pos))}]" if isinstance(pos, list) else f"index {pos}"
            lines.append(f"  first wrong element {where}: got {_value(e.get('got'))}, want {_value(e.get('want'))}")
        if e.get("max_abs_err") not in (None, 0, 0.0):
            lines.append(f"  largest error over the finite elements: {_value(e['max_abs_err'])}")
    return lines


# Failing checks that carry the most precise evidence come first.
PRIORITY = {"out_of_bounds": 0, "guard_written": 1, "from_guard": 2, "never_written": 3}


def most_telling_first(failed: list[dict]) -> list[dict]:
    return sorted(failed, key=lambda e: PRIORITY.get(e.get("cause"), 9))  # stable: file order within a cause


def advice(failed: list[dict], framework: bool = False) -> list[str]:
    """One hint per distinct cause among the failing checks, then how to replay the first of them.
    `framework`: the lab is a PyTorch-level one, whose causes get the hints of FRAMEWORK_HINTS."""
    hints = {**HINTS, **FRAMEWORK_HINTS} if framework else HINTS
    lines, seen = [], []
    if any(e.get("cause") == "never_written" and any(l.endswith("= 0 programs") for l in e.get("launches", []))
           for e in failed):
        lines.append("hint: a launch ran 0 programs, so nothing was written: the grid is rounded down. "
                     "The number of programs must be the size divided by the block, rounded up.")
    for e in failed:
        cause = e.get("cause")
        if cause in hints and cause not in seen:
            seen.append(cause)
            lines.append(f"hint: {hints[cause]}")
    replay = next((e["replay"] for e in failed if e.get("replay")), "")
    if replay:
        lines.append(f"replay with the same inputs: {replay}")
    return lines
