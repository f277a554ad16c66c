"""Module C02 (anatomy of inference): the count of one decode or prefill step of a Llama decoder, the batch
where decode's bound turns from bandwidth to compute, and the two-segment fit that finds the knee in measured
step times.

The counts are closed forms of the published config (Llama 3.1 8B, config.json): every weight is read once per
step and multiplies every new token (2 FLOP per weight and token); attention reads the cached keys and values
of every position once per sequence (grouped-query attention reads each KV head once, not once per query
head). They mirror ``step_flops`` and ``step_bytes`` of the lab (labs/C02/python/prefill_decode.py), which
checks them against torch's FLOP counter; the records of its bench carry the same ``bytes`` and ``flops``.

``hinge_fit`` is pure: measured (batch, ms) points in, the knee and the two slopes out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

# meta-llama/Llama-3.1-8B config.json
LLAMA31_8B = dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, mlp=14336, vocab=128256)

RECORD = "C02/prefill_decode/{variant}/python"


def params(cfg: dict = LLAMA31_8B) -> tuple[int, int]:
    """(parameters a step reads, of which the embedding table: a step reads only its tokens' rows of it).
    The first term holds the layers' matrices and norms, the final norm and the output head."""
    h, d, L = cfg["hidden"], cfg["head_dim"], cfg["layers"]
    per_layer = h * (cfg["heads"] + 2 * cfg["kv_heads"]) * d + cfg["heads"] * d * h + 3 * h * cfg["mlp"] + 2 * h
    return L * per_layer + h + cfg["vocab"] * h, cfg["vocab"] * h


def gemm_params(cfg: dict = LLAMA31_8B) -> int:
    """Weights that multiply a token: the layers' matrices and the output head (no norms, no embedding)."""
    h, L = cfg["hidden"], cfg["layers"]
    return params(cfg)[0] - h - 2 * h * L


def kv_bytes_per_token(cfg: dict = LLAMA31_8B, elem: int = 2) -> int:
    """Keys and values of one position, every layer and KV head."""
    return 2 * cfg["layers"] * cfg["kv_heads"] * cfg["head_dim"] * elem


def step_flops(batch: int, new: int, context: int, cfg: dict = LLAMA31_8B) -> int:
    """Matrix FLOP of one forward: 2 per weight and new token (the head at the last position only) plus
    4 x heads x head_dim per causal query-key pair."""
    h, d, L, V = cfg["hidden"], cfg["head_dim"], cfg["layers"], cfg["vocab"]
    body = gemm_params(cfg) - V * h
    pairs = new * context - new * (new - 1) // 2
    return batch * (2 * body * new + 2 * V * h + 4 * L * cfg["heads"] * d * pairs)


def activation_elements(new: int, cfg: dict = LLAMA31_8B) -> int:
    """Inputs and outputs of each matrix product once, per sequence (the head at the last position)."""
    h, d, nh, nkv, m = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["mlp"]
    per_token = (h + (nh + 2 * nkv) * d) + (nh * d + h) + (h + 2 * m) + (m + h)
    return new * cfg["layers"] * per_token + h + cfg["vocab"]


def step_bytes(batch: int, new: int, read: int, cfg: dict = LLAMA31_8B, elem: int = 2) -> int:
    """Least HBM traffic of one forward: the weights once, the new tokens' embedding rows, `read` cached
    positions read and `new` written per sequence, and the activations of the products once."""
    per_pos = kv_bytes_per_token(cfg, elem) // elem
    return elem * (params(cfg)[0] + batch * (new * cfg["hidden"] + per_pos * (read + new)
                                             + activation_elements(new, cfg)))


def bound_ms(batch: int, context: int, bw: float, rate: float, cfg: dict = LLAMA31_8B) -> float:
    """max(bytes / bandwidth, FLOP / rate) of one decode step at this batch and context, in ms."""
    return 1e3 * max(step_bytes(batch, 1, context, cfg) / bw, step_flops(batch, 1, context, cfg) / rate)


def crossover_batch(context: int, bw: float, rate: float, cfg: dict = LLAMA31_8B) -> float | None:
    """The batch where a decode step's bytes / bw equals its FLOP / rate (both are linear in the batch), or
    None where the FLOP never catch up (each sequence adds more read time than compute time)."""
    b0 = step_bytes(0, 1, context, cfg) / bw  # the weights alone
    db = (step_bytes(1, 1, context, cfg) - step_bytes(0, 1, context, cfg)) / bw  # per sequence
    df = step_flops(1, 1, context, cfg) / rate
    return b0 / (df - db) if df > db else None


@dataclass(frozen=True)
class Hinge:
    knee: float  # batch where the slope changes
    a: float  # ms at batch 0 (extrapolated)
    below: float  # ms per sequence below the knee
    above: float  # ms per sequence above the knee
    sse: float  # sum of squared residuals, ms^2

    def __call__(self, b: float) -> float:
        return self.a + self.below * min(b, self.knee) + self.above * max(b - self.knee, 0.0)


def _lstsq3(rows: Sequence[tuple[float, float, float]], ys: Sequence[float]) -> tuple[float, float, float, float]:
    """Least squares for y = c0 r0 + c1 r1 + c2 r2 through the normal equations (3 x 3, Cramer's rule)."""
    m = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    v = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(3)]

    def det(a):
        return (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    d = det(m)
    if abs(d) < 1e-12:
        return 0.0, 0.0, 0.0, float("inf")
    c = []
    for k in range(3):
        mk = [[v[i] if j == k else m[i][j] for j in range(3)] for i in range(3)]
        c.append(det(mk) / d)
    sse = sum((y - sum(ci * ri for ci, ri in zip(c, r))) ** 2 for r, y in zip(rows, ys))
    return c[0], c[1], c[2], sse


def hinge_fit(points: Iterable[tuple[float, float]], step: float = 0.5) -> Hinge:
    """Fit t(B) = a + b min(B, k) + c max(B - k, 0) by least squares, the knee k searched over a grid of
    `step` between the second-smallest and the second-largest batch (each segment keeps two points)."""
    pts = sorted(points)
    bs, ts = [p[0] for p in pts], [p[1] for p in pts]
    best = None
    k = bs[1]
    while k <= bs[-2] + 1e-9:
        rows = [(1.0, min(b, k), max(b - k, 0.0)) for b in bs]
        a, lo, hi, sse = _lstsq3(rows, ts)
        if best is None or sse < best.sse - 1e-12:
            best = Hinge(k, a, lo, hi, sse)
        k += step
    assert best is not None
    return best


def decode_points(recs: dict, context: int = 128) -> list[tuple[int, float]]:
    """(batch, ms) of the CUDA-graph decode records at a context, from the records by key."""
    out = []
    prefix = f"C02/prefill_decode/decode_ctx{context}_b"
    for key, r in recs.items():
        if key.startswith(prefix) and key.endswith("/python"):
            out.append((int(key[len(prefix):].split("/")[0]), float(r["value"])))
    return sorted(out)


def course_records() -> dict:
    from ..measurements import records
    return records(Path(__file__).resolve().parents[2])


def ceilings(recs: dict) -> tuple[float, float]:
    """(copy bandwidth in bytes/s, torch.mm bf16 rate in FLOP/s) measured in the lab's run."""
    bw = recs[RECORD.format(variant="copy_bandwidth")]["value"] * 1e9
    rate = recs[RECORD.format(variant="mm_bf16")]["value"] * 1e12
    return bw, rate


# ---------------------------------------------------------------- the kernel-by-kernel bound
LINEAR_SHAPES = ("qkv", "out", "gate_up", "down", "head")


def linear_shapes(cfg: dict = LLAMA31_8B) -> list[tuple[str, int, int]]:
    """(name, out features N, in features K) of each weight product of a decode step (the lab's linear_shapes)."""
    h, d, nh, nkv = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"]
    return [("qkv", (nh + 2 * nkv) * d, h), ("out", h, nh * d), ("gate_up", 2 * cfg["mlp"], h),
            ("down", h, cfg["mlp"]), ("head", cfg["vocab"], h)]


def decode_kernels(batch: int, context: int, cfg: dict = LLAMA31_8B, elem: int = 2) -> list[tuple[str, int, int]]:
    """One decode step as the kernels that run one after another: (name, bytes, FLOP) of each weight product of
    every layer and the head (weights, input and output once), attention over the cache once a layer, and the
    rest (bytes only: norms' weights, embedding rows, cache writes). The terms add up to step_bytes and
    step_flops; the lab's decode_kernels checks the same split."""
    h, L = cfg["hidden"], cfg["layers"]
    out = []
    for name, n, k in linear_shapes(cfg):
        layers = [""] if name == "head" else range(L)
        out += [(f"{name}{i}", elem * (n * k + batch * (k + n)), 2 * batch * n * k) for i in layers]
    attn_f = (step_flops(batch, 1, context, cfg) - step_flops(batch, 1, 0, cfg)) // L
    attn_b = (step_bytes(batch, 1, context, cfg, elem) - step_bytes(batch, 1, 0, cfg, elem)) // L
    out += [(f"attention{i}", attn_b, attn_f) for i in range(L)]
    rest_b = step_bytes(batch, 1, context, cfg, elem) - sum(b for _, b, _ in out)
    rest_f = step_flops(batch, 1, context, cfg) - sum(f for _, _, f in out)
    out.append(("rest", rest_b, rest_f))
    return out


def kernel_bound_ms(batch: int, context: int, bw: float, rate: float, cfg: dict = LLAMA31_8B) -> float:
    """The bound of a step whose kernels run one after another: the sum over kernels of each kernel's
    max(bytes / bandwidth, FLOP / rate), in ms. Never below bound_ms (a sum of maxima >= the max of sums)."""
    return 1e3 * sum(max(b / bw, f / rate) for _, b, f in decode_kernels(batch, context, cfg))


def product_ridge_rows(name: str, bw: float, rate: float, cfg: dict = LLAMA31_8B, elem: int = 2) -> float:
    """The rows M where one weight product's FLOP / rate equals its bytes / bandwidth:
    2 M N K / R = elem (N K + M (N + K)) / bw."""
    n, k = {s: (n, k) for s, n, k in linear_shapes(cfg)}[name]
    return elem * n * k / bw / (2 * n * k / rate - elem * (n + k) / bw)


# ---------------------------------------------------------------- how well the knee is determined
def profile_interval(points: Sequence[tuple[float, float]], level_f: float | None = None,
                     step: float = 0.5) -> tuple[float, float]:
    """The knees k whose best three-parameter fit is not significantly worse than the best knee: the profile
    likelihood interval SSE(k) <= SSE_min (1 + F / (n - 4)), with F the 95% quantile of F(1, n - 4) (the knee as
    the fourth parameter). Returns (lowest, highest) such k on the grid."""
    pts = sorted(points)
    n = len(pts)
    f = level_f if level_f is not None else _f95(n - 4)
    best = hinge_fit(pts, step)
    limit = best.sse * (1.0 + f / (n - 4))
    bs, ts = [p[0] for p in pts], [p[1] for p in pts]
    ok = []
    k = bs[1]
    while k <= bs[-2] + 1e-9:
        rows = [(1.0, min(b, k), max(b - k, 0.0)) for b in bs]
        if _lstsq3(rows, ts)[3] <= limit:
            ok.append(k)
        k += step
    return min(ok), max(ok)


def _f95(dof: int) -> float:
    """95% quantile of F(1, dof) = t(0.975, dof)^2, from a short table (dof 10..20) of Student's t."""
    t975 = {10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101,
            19: 2.093, 20: 2.086}
    return t975[max(10, min(20, dof))] ** 2


def bootstrap_knees(points: Sequence[tuple[float, float]], n: int = 400, seed: int = 0,
                    step: float = 1.0) -> list[float]:
    """Knees of the hinge fit to `n` resamples of the points (cases drawn with replacement, a fixed seed so the
    page and the test get the same numbers); resamples with fewer than 4 distinct batches are skipped."""
    import random
    rng = random.Random(seed)
    pts = sorted(points)
    out = []
    while len(out) < n:
        sample = [rng.choice(pts) for _ in pts]
        if len({b for b, _ in sample}) < 4:
            continue
        out.append(hinge_fit(sample, step).knee)
    return sorted(out)


def percentile(xs: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of sorted xs, by the nearest rank."""
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]
