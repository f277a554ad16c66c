"""Every number a placeholder puts on a real module page, recomputed here from the raw records (the JSON
lines, not the loaded model) and found on the rendered page: a swapped ratio, a share of the wrong record or
a percentage of the wrong ceiling fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tutor_build.load import load_course
from tutor_build.mdscan import scan
from tutor_build.render.pages import render_site

ROOT = Path(__file__).resolve().parents[1]
COURSE, _ = load_course(ROOT)
SITE = render_site(COURSE)


def raw_records() -> dict[str, dict]:
    """Newest course record per key, read straight from measurements/*.jsonl."""
    newest: dict[str, dict] = {}
    for path in sorted((ROOT / "measurements").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                key = "/".join((r["module"], r["lab"], r["variant"], r["vendor"]))
                if key not in newest or r["date"] >= newest[key]["date"]:
                    newest[key] = r
    return newest


RECORDS = raw_records()


def number(value: float) -> str:
    """The course's rounding, written out again: 0 decimals from 100, 1 from 10, 2 from 1, else 3 figures."""
    a = abs(value)
    return f"{value:,.0f}" if a >= 100 else f"{value:.1f}" if a >= 10 else f"{value:.2f}" if a >= 1 else f"{value:.3g}"


def expected(func: str, args: tuple[str, ...]) -> list[str]:
    if func in ("measured", "value"):
        r = RECORDS[args[0]]
        unit = r["unit"]
        whole = r.get("kind") == "counter" and float(r["value"]).is_integer()
        if r.get("kind") == "counter":  # 268,435,456 requests; 18 registers/thread; a bare "count" has no word
            words = {"request": "requests", "sector": "sectors", "inst": "instructions", "count": "", "hz": "Hz"}
            if unit in ("%", "hz"):
                unit = words.get(unit, unit)
            elif r["value"] != 1:
                head, slash, rest = unit.partition("/")
                unit = words.get(unit, (head if head.endswith("s") else head + "s") + slash + rest)
        out = [f"{int(r['value']):,} {unit}".strip() if whole else f"{number(r['value'])} {unit}".strip()]
        c = r["ceiling"]
        if func == "measured" and c["unit"] == r["unit"] and c["value"]:
            out.append(f"{100 * r['value'] / c['value']:.0f}% of the {number(c['value'])} {c['unit']} {c['name']}")
        return out
    a, b = RECORDS[args[0]]["value"], RECORDS[args[1]]["value"]
    if func == "ratio":
        q = a / b
        return [f"{q:,.0f}×" if q >= 100 else f"{q:.1f}×"]
    if func == "share":
        pct = 100 * a / b
        return [f"{pct:.1f}%" if pct >= 1 else f"{pct:.2g}%"]
    return []


CASES = [(m.id, section.path, ph.line, ph.func, ph.args) for m in COURSE.modules for section in m.sections
         for ph in scan(section.text).placeholders if ph.func in ("measured", "value", "ratio", "share")]


def test_every_module_quotes_numbers():
    assert {mid for mid, *_ in CASES} == {m.id for m in COURSE.modules}


@pytest.mark.parametrize("mid,path,line,func,args", CASES, ids=[f"{c[1]}:{c[2]}:{c[3]}" for c in CASES])
def test_the_number_on_the_page_is_the_records(mid, path, line, func, args):
    page = SITE.pages[COURSE.module(mid).page_path]
    for text in expected(func, args):
        assert text in page, f"{path}:{line}: {func}{args} should show {text!r}"

