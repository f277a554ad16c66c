"""Every command a module's labs page shows runs as printed, after the README's set-up and the page's own
`source .venv/bin/activate`: no `command not found`, no missing module, no usage error, no traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^(?P<indent>[ \t]*)```(?:bash|sh)\s*\n(?P<body>.*?)^(?P=indent)```", re.MULTILINE | re.DOTALL)
ACTIVATE = "source .venv/bin/activate"


def page_commands() -> list[tuple[str, str]]:
    """(page, command) for every line of every bash block of the labs pages, comments dropped, in order."""
    found, seen = [], set()
    for page in sorted(ROOT.glob("modules/*/4-labs.md")):
        for block in BLOCK.finditer(page.read_text(encoding="utf-8")):
            for line in block.group("body").splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command and not command.startswith("#") and command not in seen:
                    seen.add(command)
                    found.append((page.parent.name[:3], command))
    return found


COMMANDS = page_commands()


def test_every_labs_page_tells_the_learner_to_activate_the_environment_first():
    for page in sorted(ROOT.glob("modules/*/4-labs.md")):
        blocks = [b.group("body") for b in BLOCK.finditer(page.read_text(encoding="utf-8"))]
        assert blocks and ACTIVATE in blocks[0], f"{page}: the first command block must start with `{ACTIVATE}`"


def activated_env() -> dict[str, str]:
    """What `source .venv/bin/activate` does: the environment's bin folder first on PATH."""
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(bin_dir.parent),
               CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", ""))
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.slow
@pytest.mark.parametrize("page, command", COMMANDS, ids=[f"{p}: {c}" for p, c in COMMANDS])
def test_a_command_on_a_labs_page_runs_as_printed(page, command):
    if command == ACTIVATE:
        assert (ROOT / ".venv/bin/activate").is_file() or sys.prefix != sys.base_prefix
        return
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, env=activated_env(),
                          timeout=900)
    out = done.stdout + done.stderr
    for broken in ("command not found", "No module named", "Traceback (most recent call last)", "usage: tutor",
                   "No such file or directory"):
        assert broken not in out, f"{page}: `{command}` printed {broken!r}:\n{out[-3000:]}"
    assert done.returncode in (0, 1), f"{page}: `{command}` exited {done.returncode}:\n{out[-3000:]}"
    if done.returncode == 1:  # only an honest failure: an untouched exercise, or no GPU for this command
        assert re.search(r"FAIL|no GPU|needs? (an? )?(NVIDIA |AMD )?GPU", out), f"{page}: `{command}`:\n{out[-3000:]}"
