"""C07 sizing (exercise: complete TODO 1 to 3): which bound binds on a serving node, HBM capacity or the latency SLO?

A calculator in closed form, checked three ways: against values worked by hand from the
published Llama 3 configs, against a brute-force search over the batch (the closed form
inverts a piecewise-linear step time; the search just tries batches), and, when the course
package is importable, against tutor_build.models.serving.

  python labs/C07/python/sizing_exercise.py           every check, then the table of the module
  python labs/C07/python/sizing_exercise.py --quick   the same (it is all arithmetic)
  python labs/C07/python/sizing_exercise.py --ctx 8192 --slo-ms 50 --gpu mi300x   your own scenario
"""

from __future__ import annotations

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "common", "python"))
import torch  # noqa: E402

import tutor_lab as tl  # noqa: E402

LAB = "sizing"
# Published configs (config.json of the Llama 3.1 models): layers, hidden, heads, kv heads,
# head dim, intermediate, vocab.
MODELS = {
    "llama3-70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, inter=28672, vocab=128256),
    "llama3-8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, vocab=128256),
}
# Datasheets: HBM bytes, peak bytes/s, dense bf16 and fp8 FLOP/s per GPU.
GPUS = {
    "h200": dict(hbm=141e9, bw=4.8e12, bf16=989.5e12, fp8=1979e12),
    "mi300x": dict(hbm=192e9, bw=5.3e12, bf16=1307.4e12, fp8=2614.9e12),
}


# ---------------------------------------------------------------- the calculator
def params(m: dict) -> tuple[int, int]:
    """(resident parameters, parameters the GEMMs of one decode step read)."""
    layer = (m["hidden"] * m["heads"] * m["head_dim"] + 2 * m["hidden"] * m["kv_heads"] * m["head_dim"]
             + m["heads"] * m["head_dim"] * m["hidden"] + 3 * m["hidden"] * m["inter"])
    gemm = m["layers"] * layer + m["vocab"] * m["hidden"]  # + LM head; embedding is a gather
    resident = gemm + m["vocab"] * m["hidden"] + (2 * m["layers"] + 1) * m["hidden"]
    return resident, gemm


def kv_bytes_per_token(m: dict, kv_bytes: float) -> float:
    # TODO 1: the bytes one more token adds to the KV cache of the whole model, kv_bytes per value.
    #         What does each layer store per token, and for how many heads? Check: 327,680 for 70B in bf16.
    return float("nan")


def kv_pool_tokens(m, g, n, w_bytes, kv_bytes, mem_util=0.9) -> int:
    # TODO 2: how many whole tokens of KV fit: the node's n GPUs give the fraction mem_util of their HBM
    #         to weights + KV, and the resident weights (see params) take their share first. Never < 0.
    return 0


def step_time(m, g, n, w_bytes, kv_bytes, ctx, batch, gemm_fp8=False, bw_eff=1.0) -> float:
    """Seconds: weight GEMMs on their roofline, plus attention on its roofline."""
    _, gemm = params(m)
    bw = bw_eff * g["bw"] * n
    flops = (g["fp8"] if gemm_fp8 else g["bf16"]) * n
    t_gemm = max(gemm * w_bytes / bw, 2 * gemm * batch / flops)
    tokens = batch * ctx
    t_attn = max(tokens * kv_bytes_per_token(m, kv_bytes) / bw,
                 tokens * 4 * m["layers"] * m["heads"] * m["head_dim"] / (g["bf16"] * n))
    return t_gemm + t_attn


def slo_batch(m, g, n, w_bytes, kv_bytes, ctx, slo_s, gemm_fp8=False, bw_eff=1.0) -> float:
    """The batch whose step time equals the SLO, inverting the piecewise-linear step time."""
    _, gemm = params(m)
    bw = bw_eff * g["bw"] * n
    a = gemm * w_bytes / bw  # weight read (s)
    c = 2 * gemm / ((g["fp8"] if gemm_fp8 else g["bf16"]) * n)  # GEMM compute per sequence (s)
    per_seq = max(ctx * kv_bytes_per_token(m, kv_bytes) / bw,
                  ctx * 4 * m["layers"] * m["heads"] * m["head_dim"] / (g["bf16"] * n))
    # TODO 3: the batch B whose step time, max(a, c * B) + per_seq * B, equals slo_s, in closed form.
    #         The max makes it piecewise linear: solve one piece, then check that B lies in that piece.
    #         If even an empty batch misses the SLO, return 0.0.
    return 0.0


def crossover_batch(g, w_bytes, gemm_fp8=False, bw_eff=1.0) -> float:
    """Batch where 2B/b_w FLOP per weight byte meets the ridge point."""
    return (g["fp8"] if gemm_fp8 else g["bf16"]) / (bw_eff * g["bw"]) * w_bytes / 2


def attention_intensity(m, kv_bytes) -> float:
    return 4 * m["layers"] * m["heads"] * m["head_dim"] / kv_bytes_per_token(m, kv_bytes)


# ---------------------------------------------------------------- checks
def brute_slo_batch(m, g, n, w_bytes, kv_bytes, ctx, slo_s, gemm_fp8) -> float:
    """Bisection on step_time alone: no algebra shared with slo_batch."""
    lo, hi = 0.0, 1e7
    for _ in range(200):
        mid = (lo + hi) / 2
        if step_time(m, g, n, w_bytes, kv_bytes, ctx, mid, gemm_fp8) <= slo_s:
            lo = mid
        else:
            hi = mid
    return lo


def check_scalar(variant: str, size: str, got: float, want: float, seed: int, rtol: float) -> None:
    tl.check(LAB, variant, size, torch.tensor([got], dtype=torch.float64),
             torch.tensor([want], dtype=torch.float64), seed, rtol=rtol)


def run_checks(args) -> None:
    m70, m8 = MODELS["llama3-70b"], MODELS["llama3-8b"]
    # Worked by hand: 2 (K and V) x 80 layers x 8 heads x 128 x 2 bytes; 2 x 32 x 8 x 128 x 2.
    check_scalar("kv_bytes_per_token", "llama3-70b_bf16", kv_bytes_per_token(m70, 2), 327_680, args.seed, 0)
    check_scalar("kv_bytes_per_token", "llama3-8b_bf16", kv_bytes_per_token(m8, 2), 131_072, args.seed, 0)
    # The parameter counts the configs imply (70.55 B and 8.03 B).
    check_scalar("params", "llama3-70b", params(m70)[0], 70_553_706_496, args.seed, 0)
    check_scalar("params", "llama3-8b", params(m8)[0], 8_030_261_248, args.seed, 0)
    # GQA group 8: 2 x 8 / b_kv FLOP per byte, whatever the batch.
    check_scalar("attention_intensity", "group8_bf16", attention_intensity(m70, 2), 8.0, args.seed, 1e-12)
    # Closed form vs brute force, on random scenarios (fresh each run).
    gen = torch.Generator().manual_seed(args.seed)
    n_cases = 8 if args.quick else 40
    for i in range(n_cases):
        r = torch.rand(6, generator=gen, dtype=torch.float64).tolist()
        m = m70 if r[0] < 0.5 else m8
        g = GPUS["h200"] if r[1] < 0.5 else GPUS["mi300x"]
        n = [1, 2, 4, 8][int(r[2] * 4)]
        fp8 = r[3] < 0.5
        ctx = int(64 + r[4] * 32000)
        slo = 0.010 + r[5] * 0.090
        w_b, kv_b = (1.0, 1.0) if fp8 else (2.0, 2.0)
        if params(m)[1] * w_b / (g["bw"] * n) >= slo:
            continue  # the weights alone do not fit the SLO: no batch at all
        got = slo_batch(m, g, n, w_b, kv_b, ctx, slo, fp8)
        want = brute_slo_batch(m, g, n, w_b, kv_b, ctx, slo, fp8)
        check_scalar("slo_batch", f"case{i}_n{n}_ctx{ctx}_{'fp8' if fp8 else 'bf16'}", got, want, args.seed, 1e-9)
    # Agreement with the course's model, when the repository is on the path.
    root = os.path.join(HERE, "..", "..", "..")
    sys.path.insert(0, root)
    try:
        from tutor_build.models import serving as sv
    except ImportError as exc:
        tl.emit({"event": "skip", "lab": LAB, "variant": "course_model", "reason": str(exc)})
        return
    s = sv.SCENARIO
    check_scalar("course_model", "kv_pool", kv_pool_tokens(m70, GPUS["h200"], 8, 2, 2), sv.kv_pool_tokens(s), args.seed, 0)
    check_scalar("course_model", "slo_batch", slo_batch(m70, GPUS["h200"], 8, 2, 2, 4096, 0.030), sv.slo_batch(s), args.seed, 1e-12)


def report(args) -> None:
    m, g = MODELS[args.model], GPUS[args.gpu]
    for label, w_b, kv_b, fp8 in (("bf16", 2.0, 2.0, False), ("fp8", 1.0, 1.0, True)):
        pool = kv_pool_tokens(m, g, args.gpus, w_b, kv_b)
        b = slo_batch(m, g, args.gpus, w_b, kv_b, args.ctx, args.slo_ms / 1e3, fp8)
        cap = math.floor(b * args.ctx)
        tl.emit({"event": "result", "lab": LAB, "variant": label, "model": args.model, "gpu": args.gpu,
                 "gpus": args.gpus, "ctx": args.ctx, "slo_ms": args.slo_ms,
                 "kv_bytes_per_token": kv_bytes_per_token(m, kv_b), "kv_pool_tokens": pool,
                 "slo_tokens": cap, "slo_batch": round(b, 1),
                 "binds": "latency" if cap < pool else "capacity",
                 "gemm_crossover_batch": round(crossover_batch(g, w_b, fp8), 1),
                 "gemms": "compute-bound" if b > crossover_batch(g, w_b, fp8) else "memory-bound",
                 "attention_flop_per_byte": attention_intensity(m, kv_b)})


def main() -> int:
    def extra(p):
        p.add_argument("--model", choices=sorted(MODELS), default="llama3-70b")
        p.add_argument("--gpu", choices=sorted(GPUS), default="h200")
        p.add_argument("--gpus", type=int, default=8)
        p.add_argument("--ctx", type=int, default=4096)
        p.add_argument("--slo-ms", type=float, default=30.0)

    args = tl.parse_args(extra=extra)
    run_checks(args)
    report(args)
    return tl.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
