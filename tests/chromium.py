"""Chromium for tests outside tests/browser/ (the book, the offline bundle).

The browser tests hold one Playwright session open for the whole run, and Playwright's sync API refuses to
start a second one on a thread that already runs its event loop. So these tests drive Chromium from a
worker thread of their own, as tests/browser/test_sheets.py does with the sheet printer.
"""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"


def unavailable(reason: str, what: str) -> None:
    """As tests/browser/conftest.py: a skip with its reason, a failure in CI."""
    if REQUIRE_ALL:
        pytest.fail(f"{reason} (TUTOR_REQUIRE_ALL=1)")
    print(f"SKIP {what} tests: {reason}", file=sys.stderr)
    pytest.skip(reason)


def need_chromium(what: str) -> None:
    if not Path(CHROMIUM).exists():
        unavailable(f"{CHROMIUM} is not installed", what)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("playwright is not installed (pip install playwright)", what)


def in_thread(fn, *args, **kwargs):
    """fn(*args, **kwargs) on a worker thread, away from any Playwright loop of the test session."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn, *args, **kwargs).result(timeout=900)
