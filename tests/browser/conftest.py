"""Browser-test fixtures: build the site once, serve it on 127.0.0.1, drive Chromium.

Skips with a printed reason when /usr/bin/chromium, Playwright or the site engine is
missing, unless TUTOR_REQUIRE_ALL=1 (then those are failures). TUTOR_SITE_DIR=<dir>
serves an already-built site instead of building one.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Found the way .ci/run finds it (`command -v chromium`), or named by $CHROMIUM.
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REQUIRE_ALL = os.environ.get("TUTOR_REQUIRE_ALL") == "1"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def _unavailable(reason: str):
    if REQUIRE_ALL:
        pytest.fail(f"{reason} (TUTOR_REQUIRE_ALL=1)")
    print(f"SKIP browser tests: {reason}", file=sys.stderr)
    pytest.skip(reason)


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives the built site in headless Chromium")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def site_dir(request) -> Path:
    given = os.environ.get("TUTOR_SITE_DIR")
    if given:
        return Path(given)
    if not (ROOT / "mkdocs.yml").exists() or not (ROOT / "tutor_build" / "plugin.py").exists():
        _unavailable("the site engine (mkdocs.yml, tutor_build/plugin.py) is not present")
    if importlib.util.find_spec("mkdocs") is None:
        _unavailable("mkdocs is not installed")
    # tests/conftest.py builds it once per run (strictly), for every pytest-xdist worker and tests/test_repo.py
    return request.getfixturevalue("real_site")


@pytest.fixture(scope="session")
def base_url(site_dir: Path) -> str:
    handler = functools.partial(_Quiet, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


@pytest.fixture
def page(browser, base_url):
    """A fresh page that records page errors and blocks every request off this machine.

    The test fails afterwards if any page error happened or any outside request was tried.
    """
    context = browser.new_context()
    pg = context.new_page()
    errors: list[str] = []
    outside: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))

    def route(r):
        host = urlparse(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    pg.base = base_url
    pg.page_errors = errors
    yield pg
    context.close()
    assert not errors, f"page errors: {errors}"
    assert not outside, f"requests left the machine: {outside}"


def axe_check(page, context: str | None = None) -> list[dict]:
    """Run axe-core in the page; return the serious and critical violations."""
    if not AXE.exists():
        _unavailable("node_modules/axe-core is missing (run npm install)")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async (sel) => await axe.run(sel ? document.querySelector(sel) : document)", context)
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in ("serious", "critical")]
