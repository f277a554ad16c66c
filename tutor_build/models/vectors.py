"""Generate the players' shared test vectors and the JavaScript presets.

    python -m tutor_build.models.vectors          # write both files
    python -m tutor_build.models.vectors --check  # exit 1 if either is out of date

``tests/vectors/players.json``: for every player, inputs -> outputs of the Python model,
including defaults, every bound, out-of-range and non-numeric inputs and every choice.
``docs/assets/js/players/presets.js``: the hardware table of :mod:`hardware`, the input
specs of every player and the model presets, for the JavaScript models.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import hardware, training_memory
from .players import PLAYERS, SERVING_MODELS

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors" / "players.json"
PRESETS = ROOT / "docs" / "assets" / "js" / "players" / "presets.js"

EXTRA: dict[str, list[dict[str, Any]]] = {
    "where_time_goes": [{"log2_n": 30, "context_ms": 0, "alloc_us": 0}, {"device": "mi300x", "log2_n": 28}]
    + [{"context": c, "host_memory": h, "log2_n": n} for c in ("create", "reuse")
       for h in ("pageable", "pinned") for n in (10, 24)]
    + [{"host_memory": "pageable", "pageable_gbps": 100, "link_gbps": 20}],
    "coalescing": [{"stride": s, "bytes_per_element": b} for s in (0, 1, 2, 3, 8, 32, 33)
                   for b in (1, 2, 4, 8, 16)]
    + [{"tile": 32, "padding": p, "bytes_per_element": b} for p in (0, 1, 2) for b in (1, 2, 4, 8)]
    + [{"tile": 16, "padding": 0}, {"tile": 64, "padding": 1}],
    "occupancy": [{"threads": t, "registers": r, "shared_kib": s}
                  for t in (32, 64, 96, 256, 1024) for r in (16, 40, 64, 128, 255, 256)
                  for s in (0, 8, 48, 100)],
    "roofline": [{"device": d, "precision": p, "intensity": i, "measured_tflops": m}
                 for d in hardware.DEVICE_KEYS for p in hardware.PRECISIONS
                 for i in (0.25, 100, 1000) for m in (0, 50)],
    "gemm_tiling": [{"m": 4097, "n": 1000, "k": 77, "bm": 256, "bn": 256, "bk": 128, "stages": 8,
                     "bytes_per_element": 4},
                    {"device": "mi300x", "bm": 256, "bn": 128, "threads": 64},
                    {"device": "h100-sxm", "m": 8192, "n": 8192, "bm": 128, "bn": 256, "stages": 4}],
    "divergence": [{"pattern": p, "k": k, "threads": t, "p": q, "cost_a": 10, "cost_b": 30}
                   for p in ("threshold", "modulo", "random") for k in (1, 2, 3, 31, 32, 48, 64)
                   for t in (64, 100, 256) for q in (0.0, 0.01, 0.5)],
    "number_formats": [{"bits": b} for b in range(256)]
    + [{"value": x, "saturate": s} for x in (0.0, -0.0, 1.0, -1.5, 0.3, 240, 241, 448, 449, 464,
                                               500, 57344, 61440, 1e5, -1e5, 1e-9, -1e-9,
                                               2 ** -10, 2 ** -17, 0.0625, 65504, 65520, 3.14159)
       for s in ("yes", "no")],
    "attention_io": [{"log2_seq": n, "head_dim": d, "sram_kib": m}
                     for n in (6, 10, 14, 20) for d in (64, 128, 256) for m in (1, 64, 227)],
    "collectives": [{"operation": o, "algorithm": a, "gpus": g, "log2_bytes": n}
                    for o in ("all-reduce", "reduce-scatter", "all-gather") for a in ("ring", "tree")
                    for g in (2, 3, 8, 64) for n in (0, 20, 30)]
    + [{"alpha_us": 0, "log2_bytes": 0}],
    "training_memory": [{"zero_stage": z, "recompute": r, "dp": d}
                        for z in (0, 1, 2, 3) for r in ("none", "selective", "full") for d in (1, 8)]
    + [{"params_b": 175, "layers": 96, "hidden": 12288, "heads": 96, "seq": 2048}],
    "pipeline_schedules": [{"schedule": s, "stages": st, "micro_batches": m, "virtual": v}
                           for s in ("gpipe", "1f1b", "interleaved") for st in (1, 2, 4)
                           for m in (1, 4, 6, 8) for v in (1, 2)],
    "serving_sizing": [{"model": m, "device": d, "weights": w, "kv": k}
                       for m in SERVING_MODELS for d in hardware.DEVICE_KEYS
                       for w in ("bf16", "fp8", "fp8-weight-only") for k in ("bf16", "fp8")]
    + [{"attention": r, "kv": "fp8", "allreduce": a} for r in ("tensor_tile", "tensor", "cuda")
       for a in ("none", "ring")]
    + [{"n_gpus": 1}, {"context": 1048576}, {"slo_ms": 1}, {"bw_eff": 0.05, "n_gpus": 2}],
}


def _edge_cases(spec: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = [{}]
    for name, s in spec.items():
        if s["kind"] == "choice":
            cases += [{name: c} for c in s["choices"]]
            cases.append({name: "bogus"})
        else:
            lo, hi = s["min"], s["max"]
            span = hi - lo
            cases += [{name: lo}, {name: hi}, {name: lo - 1 - span}, {name: hi + 1 + span},
                      {name: "not a number"}]
            if s["kind"] == "int":
                cases.append({name: lo + 0.5})
    return cases


def generate() -> dict[str, Any]:
    """Every player's cases with the Python model's outputs."""
    out: dict[str, Any] = {"tolerance": 1e-9, "players": {}}
    for name, (spec, fn) in PLAYERS.items():
        rows = []
        for raw in _edge_cases(spec) + EXTRA.get(name, []):
            rows.append({"input": raw, "output": fn(raw)})
        out["players"][name] = rows
    return out


def presets() -> dict[str, Any]:
    """What presets.js defines as ``TutorPresets``."""
    serving = {}
    for key, m in SERVING_MODELS.items():
        serving[key] = asdict(m)
    return {
        "devices": hardware.as_plain(),
        "inputs": {name: spec for name, (spec, _) in PLAYERS.items()},
        "training_models": training_memory.MODELS,
        "serving_models": serving,
    }


def dumps_vectors() -> str:
    """One case a line, so a change shows as a readable diff."""
    data = generate()
    lines = ['{"tolerance": %s, "players": {' % json.dumps(data["tolerance"])]
    names = list(data["players"])
    for i, name in enumerate(names):
        rows = data["players"][name]
        lines.append(" %s: [" % json.dumps(name))
        for j, row in enumerate(rows):
            sep = "," if j < len(rows) - 1 else ""
            lines.append("  " + json.dumps(row, allow_nan=False, separators=(",", ":")) + sep)
        lines.append(" ]" + ("," if i < len(names) - 1 else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def dumps_presets() -> str:
    body = json.dumps(presets(), indent=1, allow_nan=False)
    return ("/* Generated by `python -m tutor_build.models.vectors` from tutor_build/models "
            "(hardware.py and the players' input specs). Do not edit. */\n"
            "(function (root) {\n  \"use strict\";\n  var P = " + body + ";\n"
            "  if (typeof module !== \"undefined\" && module.exports) module.exports = P;\n"
            "  else root.TutorPresets = P;\n"
            "})(typeof window !== \"undefined\" ? window : this);\n")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    files = {VECTORS: dumps_vectors(), PRESETS: dumps_presets()}
    if "--check" in args:
        stale = [str(p.relative_to(ROOT)) for p, text in files.items()
                 if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"{p}: out of date; run python -m tutor_build.models.vectors")
        return 1 if stale else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
