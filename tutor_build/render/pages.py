"""Course -> the pages readers see. Returns {site path: content}; nothing here knows about MkDocs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..labs import progress
from ..mdscan import FENCE_OPEN
from ..model import SECTION_SPECS, Course, Module
from .citations import Numberer, entry, sources_list
from .curriculum import all_paths, fmt_hours, graph_svg, hours
from .errata import errata_page, module_line
from .glossary import glossary_page
from .excerpts import code_page, code_page_path, download_path, rewrite_includes
from .measured import Filler


@dataclass
class Site:
    pages: dict[str, str] = field(default_factory=dict)  # docs-relative path -> Markdown
    assets: dict[str, str] = field(default_factory=dict)  # docs-relative path -> text (SVG, JS)
    inline_svg: dict[str, str] = field(default_factory=dict)  # token key -> SVG the plugin inlines in the HTML
    notebooks: frozenset[str] = frozenset()  # lab files offered as notebooks too (tutor_build.notebooks)
    colab: str = ""  # the "Open in Colab" prefix, where the site's repository is on GitHub

    def notebook_links(self, rel: str, up: str) -> str:
        """"Download notebook" (and "Open in Colab") for a lab file, from a page `up` below the root; else ''."""
        from ..notebooks import links

        return links(rel, up, self.colab, self.notebooks)


def demote_headings(text: str) -> str:
    """Section files start their subsections at ##; on the module page they sit under the ## section."""
    out, fence = [], None
    for line in text.splitlines():
        opened = FENCE_OPEN.match(line)
        if fence is None and opened:
            fence = opened.group("fence")
        elif fence is not None and line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
            fence = None
        elif fence is None and re.match(r"^#{2,5}\s", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def prerequisites_line(course: Course, m: Module) -> str:
    links = []
    for p in m.prerequisites:
        other = course.module(p)
        links.append(f"[{p} {other.title}]({other.name}.md)" if other else p)
    return ", ".join(links) or "none: start here"


def laptop_verify_command(m: Module) -> str:
    """The command that checks a learner's exercises without a GPU: the module's portable paths (Triton runs
    through the interpreter, PyTorch on the CPU); with both, or with neither, no vendor filter (CUDA and HIP
    labs then say they were skipped and why)."""
    portable = sorted({p for lab in m.labs for p in lab.paths} & {"triton", "python"})
    vendor = f" --vendor {portable[0]}" if len(portable) == 1 else ""
    return f"tutor labs verify {m.id}{vendor} --exercise"


def next_steps(course: Course, m: Module, existing: set[str] = frozenset()) -> list[str]:
    """The end of a module page: what to do now, then the previous and next module in course order."""
    order = list(course.modules)
    i = order.index(m)
    cards = sum(1 for c in course.cards if c.module == m.id)
    labs = ", ".join(f"`{lab.name}`" for lab in m.labs)
    lines = ['!!! tip "What to do next"', "",
             f"    - **Do the labs** ({labs}): [the lab section](#labs) says how; "
             f"`{laptop_verify_command(m)}` checks your work on a laptop CPU."]
    if cards and "cards/index.md" in existing:
        lines.append(f"    - **Practise**: the {cards} [recall cards of {m.id}](../cards/index.md?deck=module:{m.id}), "
                     "spaced so that each comes back just before you would forget it.")
    if m.player and f"players/{m.player}.md" in existing:
        lines.append(f"    - **Play**: the [{m.player.replace('-', ' ')} player](../players/{m.player}.md) runs this module's model.")
    later = [o for o in order if m.id in o.prerequisites]
    if later:
        lines.append("    - **Builds on this**: " + ", ".join(f"[{o.id} · {o.title}]({o.name}.md)" for o in later) + ".")
    lines += ["", f'<nav class="tutor-pager" aria-label="Previous and next module" markdown>']
    if i > 0:
        prev = order[i - 1]
        lines.append(f"[← Previous: {prev.id} · {prev.title}]({prev.name}.md){{ .tutor-pager-prev rel=prev }}")
    if i + 1 < len(order):
        nxt = order[i + 1]
        lines.append(f"[Next: {nxt.id} · {nxt.title} →]({nxt.name}.md){{ .tutor-pager-next rel=next }}")
    lines += ["</nav>", ""]
    return lines


def module_page(course: Course, m: Module, site: Site, existing: set[str] = frozenset()) -> str:
    numberer = Numberer(dict(course.references))
    filler = Filler(course, module=m)
    h = m.hours
    track = course.tracks.get(m.track, m.track)
    outline = " · ".join(f"[{s.number} · {s.title}](#{s.key})" for s in SECTION_SPECS)
    parts = [
        "---", f'title: "{m.id} · {m.title}"', f"description: {json.dumps(m.summary)}", "---", "",
        f"# {m.id} · {m.title}", "", f"*{m.summary}*", "",
        '!!! abstract "Headline"', f"    {m.headline}", "",
        f"**Track** [{m.track}: {track}](../tracks/{m.track}.md) · "
        f"**Hours** {fmt_hours(h.read)} reading + {fmt_hours(h.lab)} labs + {fmt_hours(h.drill)} drills = {fmt_hours(h.total)} · "
        f"**Prerequisites** {prerequisites_line(course, m)}"
        + (f" · **Concept player** [{m.player.replace('-', ' ').capitalize()}](../players/{m.player}.md)" if m.player else "")
        + (f" · {module_line(m)}" if m.errata else ""),
        "",
        f'<nav class="tutor-outline" aria-label="Sections of {m.id}" markdown>**In this module:** {outline}</nav>', "",
    ]
    sources_text = ""
    for spec in SECTION_SPECS:
        section = m.section(spec.key)
        body = section.text if section else ""
        body, linked = rewrite_includes(body, course.root, links=site.notebook_links)
        for rel, lang in linked.items():
            site.pages[code_page_path(rel)] = code_page(course.root, rel, lang,
                                                        site.notebook_links(rel, "../" * (rel.count("/") + 1)))
            site.assets[download_path(rel)] = (course.root / rel).read_text(encoding="utf-8")
        body = filler.fill(body, asset_prefix="../")
        if spec.key == "sources":
            sources_text = body
            parts += [f"## {spec.number} · {spec.title} {{ #{spec.key} }}", "", "@@SOURCES@@", ""]
            continue
        body = numberer.replace(demote_headings(body))
        parts += [f"## {spec.number} · {spec.title} {{ #{spec.key} }}", "", body.strip(), ""]
    parts += next_steps(course, m, existing)
    listed = set(re.findall(r"^\s*(?:[-*+]|\d+[.)])\s+\[@([\w:.\-/]+)\]", sources_text, re.MULTILINE))
    sources = numberer.replace(sources_list(demote_headings(sources_text), numberer))
    extra = [k for k in numberer.order if k not in listed and k in course.references]
    if extra:
        sources += "\n\n**Also cited on this page**\n\n" + "\n".join(
            f'- <span id="ref-{k}"></span>**[{numberer.number(k)}]** {entry(course.references[k])}' for k in extra)
    site.assets.update(filler.plots)
    site.inline_svg.update(filler.inline)
    return "\n".join(parts).replace("@@SOURCES@@", sources.strip()) + "\n"


def track_page(course: Course, track: str) -> str:
    mods = [m for m in course.modules if m.track == track]
    lines = ["---", f'title: "Track {track}: {course.tracks[track]}"', "---", "",
             f"# Track {track}: {course.tracks[track]}", "",
             f"{len(mods)} modules, {fmt_hours(hours(mods))} learner-hours.", ""]
    for m in mods:
        lines += [f"## [{m.id} · {m.title}](../modules/{m.name}.md)", "", m.summary, "",
                  f"**Headline:** {m.headline}", "",
                  f"**Hours** {fmt_hours(m.hours.total)} · **Prerequisites** "
                  + (", ".join(m.prerequisites) or "none"), ""]
    if not mods:
        lines.append("No module of this track is written yet.")
    return "\n".join(lines) + "\n"


def home_page(course: Course, existing: set[str]) -> str:
    total = hours(list(course.modules))
    lines = [
        "---", "title: GPU + ML Expert Tutor", "hide: [navigation]", "---", "",
        "# GPU + ML Expert Tutor", "",
        "A course that starts from no GPU experience and ends at the judgement of a principal engineer in GPU "
        "programming and ML systems. Each idea is told twice: first as a picture anyone can hold in their head, then "
        "as the derivation, the silicon and the measurement an expert would demand.", "",
        "## What every module promises", "",
        "1. **An analogy**, in plain language, and the place where it stops being true.",
        "2. **First principles**: the bound derived step by step, not asserted.",
        "3. **Real silicon**: AMD CDNA 3 and NVIDIA Hopper side by side, every number cited.",
        "4. **Labs** in CUDA and HIP, line for line, plus Triton that runs on both vendors and on a laptop CPU.",
        "5. **Performance against the roofline**, with numbers measured on real hardware, never typed by hand.",
        "6. **Costs and tradeoffs**, and when not to use the technique at all.",
        "7. **Where it runs in production**: the libraries and systems that use it, cited.",
        "8. **Sources**, primary first.",
        "9. **Self-assessment and interview drills**, with worked solutions.", "",
        "A technique without a stated downside has not been looked at hard enough; a number without a source or a "
        "measurement is a rumour. The build refuses both.", "",
        f"## The course today: {len(course.modules)} modules, {fmt_hours(total)} learner-hours", "",
    ]
    for track, title in course.tracks.items():
        mods = [m for m in course.modules if m.track == track]
        if not mods:
            continue
        lines += [f"### [Track {track}: {title}](tracks/{track}.md)", ""]
        for m in mods:
            lines.append(f"- [**{m.id} · {m.title}**](modules/{m.name}.md) ({fmt_hours(m.hours.total)} h): {m.headline}")
        lines.append("")
    lines += [
        "## Start here", "",
    ]
    first = course.module("A01") or (course.modules[0] if course.modules else None)
    starts = [
        (f"- **First**: [{first.id} · {first.title}](modules/{first.name}.md), which assumes no GPU experience." if first else ""),
        "- **Plan**: the [study planner](planner/index.md): tick modules off and watch the hours drop.",
        "- **Test**: [recall cards](cards/index.md), spaced retrieval practice, every card cited.",
        "- **Look up**: printable [reference sheets](sheets/index.md).",
        "- **Play**: [concept players](players/index.md), interactive models of the course's formulas.",
        "- **Map**: the [curriculum](curriculum.md): prerequisite graph and learning paths.",
        "- **Set up**: [toolchains](SETUP.md) for nvcc, hipcc and Triton.",
    ]
    for line in starts:
        target = re.search(r"\]\(([^)#]+)", line)
        if line and (not target or target.group(1) in existing):
            lines.append(line)
    lines += [
        "",
        "Reading gives you the shape of an answer. Running the labs on your own GPU, and quoting your own numbers, "
        "is what makes it yours: `tutor labs bench` records them, and the pages show them beside ours.", "",
    ]
    return "\n".join(lines)


def references_page(course: Course) -> str:
    lines = ["---", "title: Bibliography", "---", "", "# Bibliography", "",
             "Every source the course cites, in one list. Citations on the pages link here or to their module's sources.", ""]
    for key in sorted(course.references, key=str.lower):
        ref = course.references[key]
        note = f" — {ref.note}" if ref.note else ""
        lines.append(f'- <span id="ref-{key}"></span>`{key}`: {entry(ref)}{note}')
    return "\n".join(lines) + "\n"


def curriculum_page(course: Course) -> str:
    lines = ["---", "title: Curriculum", "---", "", "# Curriculum", "",
             "Each box is a module (its id and hours); each arrow points from a prerequisite to the module that "
             "needs it. Click a module to open it.", "",
             '<div class="tutor-graph-wrap">', graph_svg(course, link_prefix="../"), "</div>", "", "## Learning paths", ""]
    for path, mods in all_paths(course):
        lines += [f"### {path.title}", "", f"{len(mods)} modules, {fmt_hours(hours(mods))} h, in dependency order:", ""]
        lines += [f"{i}. [{m.id} · {m.title}](modules/{m.name}.md) ({fmt_hours(m.hours.total)} h)" for i, m in enumerate(mods, 1)]
        lines.append("")
    return "\n".join(lines)


def sheet_pages(course: Course, site: Site) -> None:
    index = ["---", "title: Reference sheets", "---", "", "# Reference sheets", "",
             "Each sheet prints on at most two pages, on A4 or Letter.", ""]
    for sheet in course.sheets:
        numberer = Numberer(dict(course.references), target="../references.md#ref-{key}")
        text = sheet.text
        if "{{ hip_map_table() }}" in text:
            from ..hipify_map import markdown_table

            text = text.replace("{{ hip_map_table() }}", markdown_table())
        filler = Filler(course)
        text = numberer.replace(filler.fill(text, asset_prefix="../"))
        site.assets.update(filler.plots)
        site.inline_svg.update(filler.inline)
        site.pages[f"sheets/{sheet.name}.md"] = text
        index.append(f"- [{sheet.title}]({sheet.name}.md)")
    site.pages["sheets/index.md"] = "\n".join(index) + "\n"


def course_data(course: Course) -> str:
    anchors = {s.key for s in SECTION_SPECS}
    data = {
        "tracks": [{"id": t, "title": title} for t, title in course.tracks.items()],
        "modules": [{"id": m.id, "title": m.title, "track": m.track, "summary": m.summary, "headline": m.headline,
                     "hours": {"read": m.hours.read, "lab": m.hours.lab, "drill": m.hours.drill},
                     "prerequisites": list(m.prerequisites), "url": m.url} for m in course.modules],
        "paths": [{"id": p.id, "title": p.title, "modules": [m.id for m in mods], "hours": hours(mods)}
                  for p, mods in all_paths(course)],
        "cards": [],
    }
    if (course.root / progress.PROGRESS).is_file():  # the learner's own checkout: show their passed labs
        data["labs_passed"] = progress.modules_done(course.root, {m.id: [lab.name for lab in m.labs] for m in course.modules})
    modules = {m.id: m for m in course.modules}
    for c in course.cards:
        m = modules.get(c.module)
        if not m:
            continue
        cite = {"key": c.cite, "label": c.cite, "url": ""}
        if c.cite.startswith("@") and c.cite[1:] in course.references:
            ref = course.references[c.cite[1:]]
            cite = {"key": ref.key, "label": f"{ref.title} ({ref.year})", "url": ref.link}
        elif c.cite.startswith("#") and c.cite[1:] in anchors:
            cite = {"key": c.cite, "label": f"{m.id} section {c.cite[1:]}", "url": f"{m.url}{c.cite}"}
        data["cards"].append({"id": c.id, "module": c.module, "q": c.q, "a": c.a, "cite": cite, "section": c.section,
                              "section_url": f"{m.url}#{c.section}"})
    return "window.TUTOR_COURSE = " + json.dumps(data, indent=1, ensure_ascii=False) + ";\n"


def render_site(course: Course, hand_written: set[str] = frozenset(), colab: str = "") -> Site:
    """All generated pages and assets. `hand_written`: the pages under docs/ (links to them are kept only if present);
    `colab`: the Colab prefix of the published notebooks (notebooks.colab_base), '' for no "Open in Colab" link."""
    from .. import notebooks

    site = Site(colab=colab)
    files = notebooks.lab_files(course)
    site.notebooks = frozenset(f.rel for f in files)
    for f in files:
        site.assets[f.site_path] = notebooks.dumps(notebooks.build_notebook(course, f))
    for m in course.modules:
        site.pages[m.page_path] = module_page(course, m, site, set(hand_written))
    for track in course.tracks:
        if any(m.track == track for m in course.modules):
            site.pages[f"tracks/{track}.md"] = track_page(course, track)
    site.pages["references.md"] = references_page(course)
    if course.glossary:
        site.pages["glossary.md"] = glossary_page(course)
    site.pages["errata.md"] = errata_page(course)
    site.pages["curriculum.md"] = curriculum_page(course)
    sheet_pages(course, site)
    site.assets["assets/generated/course-data.js"] = course_data(course)
    site.pages["index.md"] = home_page(course, set(hand_written) | set(site.pages))
    return site

