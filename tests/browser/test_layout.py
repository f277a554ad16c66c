"""The phone layout: no page scrolls sideways at 390x844 in either scheme (wide content scrolls inside its
own focusable box), the header stays on screen, and the curriculum graph is whole and readable."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import AXE, ROOT, _unavailable

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}

# The elements that stick out past the right edge of the window and that no box clips (a box with overflow
# other than visible on the element's containing-block chain), widest first: what makes the page scroll.
OFFENDERS = """() => {
  const w = window.innerWidth, out = [];
  const clipped = (el) => {
    let pos = getComputedStyle(el).position;
    for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      if (pos === 'fixed') return true;  // fixed boxes do not widen the page
      const s = getComputedStyle(p);
      const holds = pos !== 'absolute' || s.position !== 'static' || s.transform !== 'none';
      if (!holds) continue;  // an absolute box escapes the clipping of non-positioned ancestors
      if (s.overflowX !== 'visible') return true;
      pos = s.position;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= w + 0.5 || clipped(el)) continue;
    const text = (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
    out.push({right: Math.round(r.right), what: `<${el.tagName.toLowerCase()} class="${el.getAttribute('class') || ''}">`, text});
  }
  out.sort((a, b) => b.right - a.right);
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth: w, offenders: out.slice(0, 3)};
}"""


# Material's search starts a worker on every page that indexes the whole site; that is most of the time a
# page takes to load here and changes nothing in the layout, so the walk over every page stubs it out.
NO_SEARCH_WORKER = """window.Worker = function () {
  return {postMessage() {}, addEventListener() {}, removeEventListener() {}, terminate() {}};
};"""


def site_pages(site_dir: Path) -> list[str]:
    """Every HTML page of the built site, as a path relative to its root ("" for the home page)."""
    pages = []
    for index in sorted(site_dir.rglob("index.html")):
        rel = index.parent.relative_to(site_dir).as_posix()
        if rel.split("/")[0] in ("search", "assets"):
            continue
        pages.append("" if rel == "." else rel + "/")
    return pages


def test_no_page_scrolls_sideways_on_a_phone(browser, base_url, site_dir):
    """Every page, light and dark, at 390x844. One page per scheme for the whole walk; unlike the `page`
    fixture it routes no request (routing turns Chromium's cache off, and fetching every asset again for
    every page is what makes a walk slow): it records outside requests and page errors, and fails on any."""
    pages = site_pages(site_dir)
    assert len(pages) >= 30, pages
    assert "curriculum/" in pages and "planner/" in pages and "cards/" in pages
    failures, errors, outside = [], [], []
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=PHONE)  # a fresh context: Material keeps the palette it chose
        context.add_init_script(NO_SEARCH_WORKER)
        page = context.new_page()
        page.emulate_media(color_scheme=scheme)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda r: None if r.url.startswith((base_url, "data:", "blob:", "about:"))
                else outside.append(r.url))
        for path in pages:
            page.goto(base_url + path)
            if path == "":
                assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == \
                    ("slate" if scheme == "dark" else "default")
            if page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"):
                continue
            found = page.evaluate(OFFENDERS)  # slow on a long page: only when it fails
            failures.append(f"{path or '/'} ({scheme}): page is {found['scrollWidth']} px wide in a "
                            f"{found['innerWidth']} px window; widest: {found['offenders']}")
        context.close()
    assert not failures, "\n".join(failures)
    assert not errors, f"page errors: {errors}"
    assert not outside, f"requests left the machine: {outside}"


def test_the_header_stays_on_screen_mid_page(page):
    page.set_viewport_size(PHONE)
    page.goto(page.base + "modules/A02-memory-coalescing/")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight / 2)")
    page.wait_for_function("window.scrollY > 1000")
    page.mouse.wheel(0, 400)  # a reader's scroll, not only a jump
    page.wait_for_timeout(200)
    box = page.evaluate("JSON.parse(JSON.stringify(document.querySelector('.md-header').getBoundingClientRect()))")
    assert box["top"] == 0 and box["height"] > 0 and box["width"] == PHONE["width"], box
    assert page.locator(".md-header").is_visible()
    # what a reader sees at the top of the screen is the header, not the page under it
    assert page.evaluate("document.elementFromPoint(195, 10).closest('.md-header') !== null")
    page.evaluate("window.scrollBy(300, 0)")  # nothing to scroll sideways
    assert page.evaluate("window.scrollX") == 0


def test_wide_math_and_code_scroll_inside_their_own_box(page):
    page.set_viewport_size(PHONE)
    page.goto(page.base + "modules/A01-gpu-mental-model/")
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('.math-display'))
        .filter(b => b.scrollWidth > b.clientWidth)
        .map(b => ({tab: b.getAttribute('tabindex'), overflow: getComputedStyle(b).overflowX,
                    right: b.getBoundingClientRect().right}))""")
    assert wide, "expected a display equation wider than a phone on A01"
    for box in wide:
        assert box["tab"] == "0" and box["overflow"] == "auto" and box["right"] <= PHONE["width"], box
    # a long inline formula scrolls inside itself and takes a tab stop; a short one takes none
    inline = page.evaluate("""() => Array.from(document.querySelectorAll('math:not([display="block"])')).map(m =>
        ({wide: m.scrollWidth > m.clientWidth + 1, tab: m.getAttribute('tabindex'), right: m.getBoundingClientRect().right,
          boxed: !!m.parentElement.closest('.md-typeset__scrollwrap, .tutor-table-wrap, .math-display'),
          text: m.textContent.slice(0, 40)}))""")
    assert any(m["wide"] for m in inline)
    for m in inline:
        assert (m["tab"] == "0") == m["wide"], m
        assert m["boxed"] or m["right"] <= PHONE["width"], m  # inside a table it may scroll with the table
    code = page.evaluate("""() => { const pre = document.querySelector('.md-content pre');
        return {fs: parseFloat(getComputedStyle(pre.querySelector('code')).fontSize),
                right: pre.getBoundingClientRect().right}; }""")
    assert code["right"] <= PHONE["width"]
    page.set_viewport_size(DESKTOP)
    desk = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.md-content pre code')).fontSize)")
    assert code["fs"] < desk  # phones get a smaller code font so more of each line fits


# The axe rules a phone layout can break: a box that scrolls must take focus, and the names and roles
# given to those boxes and to the graph's links must be valid. (test_site_pages runs every rule.)
LAYOUT_RULES = ["scrollable-region-focusable", "aria-allowed-attr", "aria-allowed-role", "aria-valid-attr-value",
                "label-content-name-mismatch", "nested-interactive", "link-name", "meta-viewport"]


@pytest.mark.parametrize("path", ["modules/A01-gpu-mental-model/", "modules/A02-memory-coalescing/",
                                  "planner/", "cards/", "curriculum/"])
def test_every_box_that_scrolls_on_a_phone_takes_focus(page, path):
    if not AXE.exists():
        _unavailable("node_modules/axe-core is missing (run npm install)")
    page.set_viewport_size(PHONE)
    page.goto(page.base + path)
    page.wait_for_timeout(100)  # a11y.js marks long formulas once their size is known
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async (rules) => await axe.run(document, {runOnly: {type: 'rule', values: rules}})",
                           LAYOUT_RULES)
    assert [(v["id"], [n["target"] for n in v["nodes"]][:5]) for v in result["violations"]] == []


def module_titles() -> dict[str, str]:
    from tutor_build.load import load_course

    course, _ = load_course(ROOT)
    return {**dict(course.planned), **{m.id: m.title for m in course.modules}}


GRAPH = """() => {
  const svg = document.querySelector('.tutor-graph-wrap .tutor-graph');
  return Array.from(svg.querySelectorAll('[data-module]')).map(g => {
    const r = g.querySelector('rect').getBoundingClientRect();
    const texts = Array.from(g.querySelectorAll('text'));
    return {id: g.getAttribute('data-module'), box: [r.left, r.top, r.right, r.bottom],
            head: g.querySelector('.node-id').textContent, title: g.querySelector('.node-title').textContent,
            name: g.tagName === 'a' ? g.textContent : null,
            widest: Math.max(...texts.map(t => t.getBoundingClientRect().right - r.left)),
            lowest: Math.max(...texts.map(t => t.getBoundingClientRect().bottom - r.top)),
            w: r.width, h: r.height};
  });
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_curriculum_graph_boxes_are_apart_and_titles_whole(page, viewport):
    page.set_viewport_size(viewport)
    page.goto(page.base + "curriculum/")
    nodes = page.evaluate(GRAPH)
    titles = module_titles()
    assert {n["id"] for n in nodes} == set(titles)
    for n in nodes:
        assert n["title"] == titles[n["id"]], n  # every title whole, never cut
        assert n["head"].startswith(n["id"] + " · "), n
        if n["name"] is not None:  # a written module: a link whose text reads id, hours, title
            assert n["name"] == n["head"] + n["title"] and n["head"].endswith(" h "), n
        assert n["widest"] <= n["w"] and n["lowest"] <= n["h"], n  # and inside its box
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["box"], b["box"]
            assert ar <= bl or br <= al or ab <= bt or bb <= at, f"{a['id']} overlaps {b['id']}"


def test_curriculum_graph_scrolls_in_its_own_box_on_a_phone(page):
    page.set_viewport_size(PHONE)
    page.goto(page.base + "curriculum/")
    wrap = page.locator(".tutor-graph-wrap")
    info = wrap.evaluate("""w => ({sw: w.scrollWidth, cw: w.clientWidth, right: w.getBoundingClientRect().right,
        tab: w.getAttribute('tabindex'), name: w.getAttribute('aria-label'), role: w.getAttribute('role'),
        svgW: w.querySelector('svg').getBoundingClientRect().width, svgVB: w.querySelector('svg').viewBox.baseVal.width,
        page: document.documentElement.scrollWidth})""")
    assert info["sw"] > info["cw"] and info["right"] <= PHONE["width"], info
    assert info["page"] <= PHONE["width"], info
    assert abs(info["svgW"] - info["svgVB"]) < 1, info  # drawn at full size, not shrunk to the phone
    assert info["tab"] == "0" and info["role"] == "region" and "graph" in info["name"].lower(), info
    wrap.focus()
    assert page.evaluate("document.activeElement.classList.contains('tutor-graph-wrap')")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('.tutor-graph-wrap').scrollLeft > 0")
    assert page.evaluate("window.scrollX") == 0


def test_planner_table_and_selects_fit_a_phone(page):
    page.set_viewport_size(PHONE)
    page.goto(page.base + "planner/")
    page.wait_for_selector(".tutor-planner-table")
    wraps = page.evaluate("""() => Array.from(document.querySelectorAll('.tutor-table-wrap')).map(w =>
        ({right: w.getBoundingClientRect().right, tab: w.getAttribute('tabindex'), name: w.getAttribute('aria-label')}))""")
    assert wraps
    for w in wraps:
        assert w["right"] <= PHONE["width"] and w["tab"] == "0" and w["name"], w
    for sel in page.locator(".tutor-tool select").all():
        assert sel.bounding_box()["x"] + sel.bounding_box()["width"] <= PHONE["width"]
