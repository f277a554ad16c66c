"""How fast is the build? Generates a 30-module course of realistic size and times `tutor check`, our strict
build, and stock mkdocs-material building the same pages without our plugin.

    python bench/site_speed.py [--modules 5,30] [--keep DIR]

It also times the real course (a copy of its tracked files): a cold strict build (no .cache) and a warm one.

A benchmark, not a test: it prints the figures and exits 0.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakecourse import REPO, make_course, write_module, write_record  # noqa: E402

WORDS = ("bandwidth latency warp wavefront occupancy register shared memory tile coalesced sector bank conflict "
         "kernel launch grid block thread tensor core matrix accumulate precision roofline ridge intensity byte "
         "flop cache stream event graph pipeline stage shard gradient optimizer activation attention decode").split()

CODE = """__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {{
  __shared__ float tile[32][33];  // one extra column: the column reads hit 32 different banks
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}}
"""


def paragraph(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def code_block(i: int) -> str:
    body = "".join(CODE.format() for _ in range(6)).splitlines()[:60]
    lang = ("cuda", "cpp", "python")[i % 3]
    return f"```{lang}\n" + "\n".join(body) + "\n```\n"


def enlarge(root: Path, n_modules: int) -> None:
    rng = random.Random(7)
    for k in range(3, n_modules + 1):
        track = "ABCD"[(k - 1) // 8]
        mid = f"{track}{(k - 1) % 8 + 1:02d}"
        write_module(root, mid, f"topic-{k}", f"Topic {k}", ["A01"])
        write_record(root, mid)
    for folder in (root / "modules").iterdir():
        for section in ("2-first-principles.md", "3-silicon.md", "5-performance.md", "6-tradeoffs.md", "7-production.md",
                        "9-self-assessment.md"):
            extra = []
            for j in range(2):  # 12 code blocks per module here, 6 more from the lab snippets: 18
                extra.append("\n\n".join(paragraph(rng, 120) for _ in range(3)))
                extra.append(code_block(j))
            extra.append("$$\nT = \\max\\left(\\frac{F}{P}, \\frac{Q}{B}\\right)\n$$\n")
            extra.append('=== "CUDA"\n\n    Launch with `cudaMemcpyAsync` and `__shfl_down_sync`.\n\n=== "HIP"\n\n    Same with '
                         '`hipMemcpyAsync`.\n\n=== "Triton"\n\n    `tl.load` with a mask.\n')
            path = folder / section
            path.write_text(path.read_text() + "\n\n" + "\n\n".join(extra) + "\n")
    text = (root / "curriculum.yml").read_text().replace("B: ML numerics and parallelism", "B: ML numerics and parallelism, C: LLM systems, D: Expert kernels")
    (root / "curriculum.yml").write_text(text)
    carry_real_weight(root)


def real_figures() -> list[dict]:
    """Every figure the real course declares whose drawing reads no records (those are the course's own)."""
    import yaml

    specs = []
    for path in sorted((REPO / "modules").glob("*/figures.yml")):
        specs += [s for s in yaml.safe_load(path.read_text()) if not s["draw"].startswith("c07.")]
    return specs


def carry_real_weight(root: Path) -> None:
    """What real modules carry beyond prose: the real course's code-drawn figures (four per module, dealt in
    turn), a plot of six records, display math, and the real glossary's terms marked on every page."""
    import json

    import yaml

    specs = real_figures()
    deal = 0
    for folder in sorted((root / "modules").iterdir()):
        mid = folder.name.split("-")[0]
        mine = []
        for i in range(4):
            spec = dict(specs[deal % len(specs)], id=f"real-{i}")
            mine.append(spec)
            deal += 1
        figs = yaml.safe_load((folder / "figures.yml").read_text()) + mine
        (folder / "figures.yml").write_text(json.dumps(figs, indent=1))
        for i, section in enumerate(("2-first-principles.md", "3-silicon.md", "5-performance.md", "6-tradeoffs.md")):
            path = folder / section
            path.write_text(path.read_text() + f'\n\n{{{{ figure("real-{i}") }}}}\n')
        for k in range(6):
            write_record(root, mid, variant=f"v{k}", value=1000.0 + 400 * k)
        variants = {"kernel": "the kernel", **{f"v{k}": f"variant {k}" for k in range(6)}}
        (root / "labs" / mid / "plots.yml").write_text(json.dumps(
            {"vec": {"what": "bandwidth of each variant", "axis": "bandwidth", "variants": variants}}, indent=1))
        perf = folder / "5-performance.md"
        perf.write_text(perf.read_text() + f'\n\n{{{{ plot("{mid}/vec") }}}}\n')
    terms = [{"term": e["term"], "definition": e["definition"], **({"expansion": e["expansion"]} if e.get("expansion") else {})}
             for e in yaml.safe_load((REPO / "glossary.yml").read_text())]
    (root / "glossary.yml").write_text(json.dumps(terms, indent=1))


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return elapsed


def stock_copy(root: Path, dest: Path) -> None:
    """The same pages, pre-rendered by our renderer, built by stock mkdocs-material without our plugin."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tutor_build.load import load_course
    from tutor_build.render.pages import render_site

    course, _ = load_course(root)
    site = render_site(course)
    shutil.copytree(root, dest)
    for path, text in {**site.pages, **site.assets}.items():
        (dest / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / "docs" / path).write_text(text)
    config = (dest / "mkdocs.yml").read_text().replace("  - tutor\n", "")
    (dest / "mkdocs.yml").write_text(config)


def real_copy(dest: Path) -> Path:
    """The real course's tracked files (as they are in the working tree), without any cache."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def builds(root: Path, site: Path) -> tuple[float, float]:
    """Cold (no .cache) and warm (caches filled by the cold one) strict builds, in seconds."""
    shutil.rmtree(root / ".cache", ignore_errors=True)
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)]
    cold = timed(cmd, root)
    return cold, min(timed(cmd, root) for _ in range(2))


def fake(work: Path, n_modules: int) -> None:
    root = make_course(work / f"course-{n_modules}")
    enlarge(root, n_modules)
    words = sum(len(p.read_text().split()) for p in (root / "modules").rglob("*.md"))
    blocks = sum(p.read_text().count("```") // 2 for p in (root / "modules").rglob("*.md"))
    figs = sum(p.read_text().count('"draw"') for p in (root / "modules").rglob("figures.yml"))
    py = sys.executable
    check = min(timed([py, "-m", "tutor_build.cli", "check"], root) for _ in range(3))
    cold, warm = builds(root, work / f"site-ours-{n_modules}")
    stock_copy(root, work / f"stock-{n_modules}")
    stock = min(timed([py, "-m", "mkdocs", "build", "-q", "-d", str(work / f"site-stock-{n_modules}")],
                      work / f"stock-{n_modules}") for _ in range(2))
    print(f"fake course, {n_modules} modules: {words:,} words, {blocks} code blocks, {figs} figures")
    print(f"  tutor check (warm):             {check:6.2f} s")
    print(f"  strict build, cold / warm:      {cold:6.2f} s / {warm:.2f} s")
    print(f"  stock mkdocs-material, same:    {stock:6.2f} s   ({stock / warm:.1f}x our warm build)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", default="5,30", help="sizes of the fake course, comma-separated")
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp())
    real = real_copy(work / "real")
    n_real = len(list((real / "modules").glob("*/module.yml")))
    cold, warm = builds(real, work / "site-real")
    print(f"real course, {n_real} modules: strict build, cold / warm: {cold:.2f} s / {warm:.2f} s")
    for n in (int(x) for x in args.modules.split(",")):
        fake(work, n)


if __name__ == "__main__":
    main()
