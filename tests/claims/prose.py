"""Read a number from a module's own text, exactly as a reader sees it.

A claims test derives a number (from first principles, the one hardware table or a record), formats it the
way the page prints it, and asks `states` to find that exact text in the module's prose, in the paragraph
that carries a given phrase. A whole-token match: "18" does not match "≈19 KB" or "180", and "1.19 ms" does
not match "1.195 ms". So the test fails if the prose or the derivation changes without the other.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_dir(module: str) -> Path:
    found = sorted(ROOT.glob(f"modules/{module}-*"))
    assert found, f"no module folder for {module}"
    return found[0]


@lru_cache(maxsize=None)
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def sources(module: str, files: str = "*.md") -> dict[str, str]:
    """Relative path -> text of the module's files matching `files` (a glob inside its folder), or of the
    module's recall cards with files="cards"."""
    if files == "cards":
        path = ROOT / "cards" / f"{module}.yml"
        return {str(path.relative_to(ROOT)): _read(path)}
    # errata.yml quotes what the page used to say, on purpose: it is never the module's text
    found = {str(p.relative_to(ROOT)): _read(p) for p in sorted(module_dir(module).glob(files))
             if p.name != "errata.yml"}
    assert found, f"no files {files!r} in {module_dir(module)}"
    return found


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, each with its line breaks and indentation folded to single spaces."""
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


def _token(number: str) -> re.Pattern:
    # no digit, decimal point or thousands comma glued on either side
    return re.compile(r"(?<![\d.,])(?<![\d][.,])" + re.escape(number) + r"(?![\d])(?![.,]\d)")


def states(module: str, number: str, near: str, files: str = "*.md") -> str:
    """Assert that `number`, as printed (e.g. "1.19 ms", "4.9×", "2,058"), stands as a whole token in a
    paragraph of the module that also contains `near`; return that paragraph. The failure message shows what
    those paragraphs say instead."""
    pattern = _token(number)
    candidates = []
    for name, text in sources(module, files).items():
        for para in paragraphs(text):
            if near in para:
                candidates.append((name, para))
                if pattern.search(para):
                    return para
    assert candidates, f"{module}: no paragraph of {files} contains {near!r}"
    shown = "\n".join(f"  {name}: {para[:400]}" for name, para in candidates[:4])
    raise AssertionError(f"{module}: {number!r} is not stated next to {near!r}; those paragraphs say:\n{shown}")


def never_states(module: str, number: str, files: str = "*.md") -> None:
    """Assert that `number` appears nowhere in the module's files (a figure that was corrected)."""
    pattern = _token(number)
    for name, text in sources(module, files).items():
        for para in paragraphs(text):
            assert not pattern.search(para), f"{name} still says {number!r}: {para[:400]}"
