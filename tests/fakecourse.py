"""A tiny course that satisfies every rule of the contract. Tests break one thing at a time in a copy."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SENTENCE = ("A careful engineer counts the bytes that must move and the operations that must run before timing anything, "
            "because the slower of those two floors decides what the hardware can possibly deliver. ")


def prose(words: int) -> str:
    reps = words // len(SENTENCE.split()) + 1
    return (SENTENCE * reps).strip()


def sections(mid: str, lab: str) -> dict[str, str]:
    return {
        "1-analogy.md": f"{prose(170)}\n\n{{{{ figure(\"picture\") }}}}\n\n## Where the analogy breaks\n\n{prose(40)}\n",
        "2-first-principles.md": textwrap.dedent(f"""\
            {prose(420)}

            ## Derivation

            1. Count the bytes: each element is read once and written once.
            2. Divide by the bandwidth to get the time floor.

            $$
            t \\ge \\frac{{\\text{{bytes}}}}{{B}}
            $$

            {{{{ figure("steps") }}}}

            {{{{ figure("bound") }}}}

            The peak is quoted from the datasheet [@vendor-sheet].
            """),
        "3-silicon.md": textwrap.dedent("""\
            | | NVIDIA Hopper (H200) | AMD CDNA 3 (MI300X) |
            |---|---|---|
            | HBM bandwidth | 4.8 TB/s [@vendor-sheet] | 5.3 TB/s [@amd-sheet] |
            | lanes | 32 | 64 |
            """),
        "4-labs.md": textwrap.dedent(f"""\
            Run `tutor labs verify {mid} --vendor triton` on any machine.

            === "CUDA"

                ```cuda
                --8<-- "labs/{mid}/cuda/{lab}_exercise.cu"
                ```

                ```cuda
                --8<-- "labs/{mid}/cuda/{lab}.cu"
                ```

            === "HIP"

                ```cpp
                --8<-- "labs/{mid}/hip/{lab}_exercise.hip"
                ```

                ```cpp
                --8<-- "labs/{mid}/hip/{lab}.hip"
                ```

            === "Triton"

                ```python
                --8<-- "labs/{mid}/triton/{lab}_exercise.py"
                ```

                ```python
                --8<-- "labs/{mid}/triton/{lab}.py"
                ```
            """),
        "5-performance.md": textwrap.dedent(f"""\
            Each element moves 12 bytes and costs 1 FLOP: the arithmetic intensity is 1/12, far below the ridge point
            of the H200 and of the MI300X.

            Measured: {{{{ measured("{mid}/{lab}/kernel/cuda") }}}}.

            {{{{ plot("{mid}/{lab}") }}}}
            """),
        "6-tradeoffs.md": "- It costs memory.\n- It costs registers.\n- It costs time to write.\n\n## When not to do this\n\nWhen the data is tiny.\n",
        "7-production.md": "PyTorch uses it [@pytorch-docs].\n\nvLLM uses it too [@vllm-paper].\n",
        "8-sources.md": textwrap.dedent("""\
            - [@vendor-sheet] The H200 bandwidth and the peak rates.
            - [@amd-sheet] The MI300X bandwidth figure.
            - [@pytorch-docs] How PyTorch launches the kernel.
            - [@vllm-paper] Where a serving system uses it.
            """),
        "9-self-assessment.md": "\n".join(
            [f"## Q{i}{' (quantitative)' if i <= 2 else ''}\n\nWhat is {i}?\n\n??? success \"Solution\"\n    It is {i}.\n"
             for i in range(1, 7)]
            + ["## Interview drills\n"]
            + [f"### Drill {i}\n\nExplain {i}.\n\n??? success \"Model answer\"\n    Because {i}.\n" for i in range(1, 4)]
        ),
    }


MODULE_YML = """\
id: {mid}
title: {title}
track: {track}
summary: A module about {title}.
hours: {{read: 1.5, lab: 2, drill: 0.5}}
prerequisites: {prereqs}
concepts: [bytes, bandwidth]
headline: The kernel is a small part of the program.
labs: [{lab}]
"""

CUDA = """\
#include <cuda_runtime.h>
#include "tutor_lab.cuh"
__global__ void add(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + 1.0f;
}
int main() {
  float* d = nullptr;
  CHECK(cudaMalloc(&d, 4096));
  CHECK(cudaFree(d));
  return 0;
}
"""

TRITON = "import tutor_lab\n\n\ndef main():\n    return 0\n"

REFERENCES = {
    "vendor-sheet": {"title": "H200 datasheet", "author": "NVIDIA", "year": 2024, "url": "https://example.org/h200"},
    "amd-sheet": {"title": "MI300X datasheet", "author": "AMD", "year": 2023, "url": "https://example.org/mi300x"},
    "pytorch-docs": {"title": "PyTorch documentation", "year": 2025, "url": "https://example.org/pytorch"},
    "vllm-paper": {"title": "Efficient Memory Management for LLM Serving", "year": 2023, "arxiv": "2309.06180"},
}


def hip_of(cuda: str) -> str:
    return (cuda.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("tutor_lab.cuh", "tutor_lab.hip.h")
            .replace("cudaMalloc", "hipMalloc").replace("cudaFree", "hipFree"))


def write_module(root: Path, mid: str, slug: str, title: str, prereqs: list[str], lab: str = "vec") -> None:
    folder = root / "modules" / f"{mid}-{slug}"
    folder.mkdir(parents=True)
    (folder / "module.yml").write_text(MODULE_YML.format(mid=mid, title=title, track=mid[0], prereqs=json.dumps(prereqs), lab=lab))
    for name, text in sections(mid, lab).items():
        (folder / name).write_text(text)
    (folder / "figures.yml").write_text(json.dumps([
        {"id": fid, "draw": "common.flow", "args": {"steps": steps}, "alt": f"{fid}: " + ", then ".join(steps) + ".",
         "caption": f"The {fid} of {mid}."}
        for fid, steps in (("picture", ["read", "compute", "write"]), ("steps", ["count bytes", "divide by bandwidth"]),
                           ("bound", ["bytes", "time floor"]))], indent=1))
    for vendor, ext, text in (("cuda", ".cu", CUDA), ("hip", ".hip", hip_of(CUDA)), ("triton", ".py", TRITON)):
        labdir = root / "labs" / mid / vendor
        labdir.mkdir(parents=True)
        (labdir / f"{lab}{ext}").write_text(text)
        todo = "// TODO 1: write the kernel\n" if ext != ".py" else "# TODO 1: write the kernel\n"
        (labdir / f"{lab}_exercise{ext}").write_text(todo + text)
    hints = {"lab": lab, "hints": [{"todo": 1, "title": "the kernel", "question": "Which element is yours?",
                                    "idea": "One element per thread.",
                                    "line": {v: "c[i] = a[i] + b[i];" for v in ("cuda", "hip", "triton")}}]}
    (root / "labs" / mid / "hints").mkdir()
    (root / "labs" / mid / "hints" / f"{lab}.yml").write_text(json.dumps(hints, indent=1))
    cards = [{"id": f"{mid.lower()}-card-{i}", "q": f"Question {i}?", "a": f"Answer {i}.",
              "cite": "@vendor-sheet" if i % 2 else "#first-principles", "section": "first-principles"} for i in range(8)]
    (root / "cards").mkdir(exist_ok=True)
    (root / "cards" / f"{mid}.yml").write_text(json.dumps(cards, indent=1))  # JSON is YAML


def write_record(root: Path, mid: str, lab: str = "vec", variant: str = "kernel", value: float = 3000.0) -> None:
    from tutor_build.measurements import source_digest

    sources = [f"labs/{mid}/cuda/{lab}.cu"]
    rec = {"module": mid, "lab": lab, "variant": variant, "vendor": "cuda", "gpu": "NVIDIA H200", "toolkit": "CUDA 13.0",
           "date": "2026-11-29", "metric": "bandwidth", "value": value, "unit": "GB/s",
           "ceiling": {"name": "device-to-device copy", "value": 4000.0, "unit": "GB/s"},
           "source": sources, "source_sha256": source_digest(root, sources)}
    (root / "measurements").mkdir(exist_ok=True)
    with open(root / "measurements" / "h200.jsonl", "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def make_course(root: Path) -> Path:
    """Two modules (A01, A02 needing A01), labs, cards, references, measurements, a site config."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "curriculum.yml").write_text(
        "tracks: {A: GPU foundations, B: ML numerics and parallelism}\n"
        "paths:\n  - {id: kernel-engineer, title: Kernel engineer, goals: [A02]}\n")
    write_module(root, "A01", "fake-basics", "Fake basics", [])
    write_module(root, "A02", "fake-coalescing", "Fake coalescing", ["A01"])
    import yaml

    (root / "references.yml").write_text(yaml.safe_dump(REFERENCES, sort_keys=False))
    write_record(root, "A01")
    write_record(root, "A02")
    (root / "glossary.yml").write_text(json.dumps([
        {"term": term, "definition": f"The fake course's {term}."}
        for term in ("AMD", "CDNA", "CUDA", "FLOP", "HBM", "HIP", "NVIDIA", "TB")], indent=1))
    (root / "docs" / "assets" / "css").mkdir(parents=True)
    for css in ("tutor.css", "figures.css"):
        shutil.copy(REPO / "docs" / "assets" / "css" / css, root / "docs" / "assets" / "css" / css)
    (root / "mkdocs.yml").write_text((REPO / "mkdocs.yml").read_text())
    return root
