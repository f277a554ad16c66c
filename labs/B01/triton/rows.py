"""B01 rows in Triton: softmax and layernorm over the rows of a float32 matrix, each row in one program.

  softmax_one_pass  the whole row in registers: one read of x, one write of y (8 bytes an element)
  softmax_online    any row length: a first pass keeps a running maximum and a running sum of
                    exponentials, rescaled whenever the maximum grows; a second pass reads x again
                    and writes y (12 bytes an element)
  layernorm         the whole row in registers: mean, then variance around it, then
                    y = (x - mean) / sqrt(var + eps) * w + b (8 bytes an element, w and b aside)
  torch_*, compiled_* (bench only) eager PyTorch and torch.compile on the same tensors, same run

    python labs/B01/triton/rows.py            check every variant on odd shapes
    python labs/B01/triton/rows.py --bench    GB/s on 16384 x 8192 floats (and 512 x 262144 for the
                                              online softmax), with the copy ceiling of the same run
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

EPS = 1e-5
MAX_ONE_PASS = 16384  # the longest row the one-pass kernels hold in registers
ONLINE_BLOCK = 2048   # elements per step of the online softmax
ONE_PASS_WARPS = 16   # on a GPU, the bench keeps the fastest of WARP_CANDIDATES
WARP_CANDIDATES = [4, 8, 16, 32]


@triton.jit
def softmax_one_pass_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    # Program r owns row r; BLOCK is the row length rounded up to a power of two.
    row = tl.program_id(0).to(tl.int64) * cols
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)  # lanes past the row: exp(-inf) = 0
    s = tl.sum(e, axis=0)
    tl.store(y_ptr + row + offs, e / s, mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    # Pass 1: lane l keeps the maximum m and the sum s of exp(x - m) over its elements l, l + BLOCK, ...
    # When a larger value arrives, the sum so far is rescaled by exp(m_old - m_new).
    row = tl.program_id(0).to(tl.int64) * cols
    m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + offs, mask=offs < cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # A lane that has seen nothing yet keeps m = -inf; guard its rescale (exp(-inf + inf) is NaN).
        s = s * tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new)) + \
            tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    # Combine the lanes: the row's maximum, and every lane's sum moved to it.
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    # Pass 2: read x again, write y.
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row + offs, mask=mask, other=0.0)
        tl.store(y_ptr + row + offs, tl.exp(x - row_max) / total, mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * cols
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(mask, x - mean, 0.0)  # lanes past the row add nothing to the variance
    var = tl.sum(d * d, axis=0) / cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row + offs, d * rstd * w + b, mask=mask)


def softmax_one_pass(x: torch.Tensor, y: torch.Tensor, warps: int | None = None) -> None:
    rows, cols = x.shape
    assert cols <= MAX_ONE_PASS, "one pass holds the whole row: use softmax_online"
    softmax_one_pass_kernel[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols),
                                     num_warps=warps or ONE_PASS_WARPS)


def softmax_online(x: torch.Tensor, y: torch.Tensor) -> None:
    rows, cols = x.shape
    softmax_online_kernel[(rows,)](x, y, cols, BLOCK=ONLINE_BLOCK, num_warps=8)


def layernorm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, y: torch.Tensor, warps: int | None = None) -> None:
    rows, cols = x.shape
    assert cols <= MAX_ONE_PASS
    layernorm_kernel[(rows,)](x, w, b, y, cols, EPS, BLOCK=triton.next_power_of_2(cols),
                              num_warps=warps or ONE_PASS_WARPS)


def layernorm_unfused(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Layernorm written as separate PyTorch operations, each a kernel of its own in eager mode."""
    mean = x.mean(dim=-1, keepdim=True)
    d = x - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    return d * torch.rsqrt(var + EPS) * w + b


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.detach().to("cpu", torch.float64), dim=-1)


def layernorm_ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r = x.detach().to("cpu", torch.float64)
    return torch.nn.functional.layer_norm(r, r.shape[-1:], w.cpu().double(), b.cpu().double(), EPS)


# Tolerances: softmax outputs are near 1/cols; float32 exp and a sum of cols terms give a relative
# error of a few times 1e-7 times log2(cols) at worst, so rtol 1e-5 holds with room. Layernorm outputs
# are of order 1 (inputs in [-4, 4), w and b in [-1, 1)): atol 1e-5.
SOFTMAX_TOL = dict(atol=1e-9, rtol=1e-5)
LAYERNORM_TOL = dict(atol=1e-5, rtol=1e-5)


def verify(rows: int, cols: int, seed: int) -> None:
    size = f"{rows}x{cols}"
    x = tutor_lab.rand(rows, cols, lo=-4.0, hi=4.0)
    x[0, 0] = 100.0  # exp(100) is past float32's range: a softmax that does not subtract the maximum fails
    ref = softmax_ref(x)
    if cols <= MAX_ONE_PASS:
        y = tutor_lab.output(rows, cols, name="y")
        softmax_one_pass(x, y)
        tutor_lab.check("rows", "softmax_one_pass", size, y, ref, seed, **SOFTMAX_TOL)
    y = tutor_lab.output(rows, cols, name="y")
    softmax_online(x, y)
    tutor_lab.check("rows", "softmax_online", size, y, ref, seed, **SOFTMAX_TOL)
    if cols <= MAX_ONE_PASS:
        w = tutor_lab.rand(cols, name="w")
        b = tutor_lab.rand(cols, name="b")
        y = tutor_lab.output(rows, cols, name="y")
        layernorm(x, w, b, y)
        tutor_lab.check("rows", "layernorm", size, y, layernorm_ref(x, w, b), seed, **LAYERNORM_TOL)


def timed(name: str, fn, y: torch.Tensor, ref: torch.Tensor, tol: dict, ceiling: dict, moved: float, seed: int,
          size: str) -> float:
    """Times fn (which writes y, or returns the output), records GB/s of 8 bytes an element and checks it."""
    useful = 2 * y.numel() * 4
    y.fill_(float("nan"))  # a variant that writes nothing fails
    ms = tutor_lab.timed_ms(fn)
    tutor_lab.measure("rows", name, "bandwidth", tutor_lab.gbps(useful, ms), "GB/s", ceiling, moved, ms)
    out = fn()
    tutor_lab.check("rows", name + "_bench", size, y if out is None else out, ref, seed, **tol)
    return ms


def bench(rows: int, cols: int, long_rows: int, long_cols: int, seed: int) -> None:
    # Every variant is credited with 8 bytes an element (read x once, write y once), so GB/s is
    # proportional to speed; "bytes" records what the kernel really moves (12 for the online softmax).
    # The copy ceiling is a device-to-device copy of the matrix, bytes read plus bytes written per second.
    global ONE_PASS_WARPS
    n = rows * cols
    size = f"{rows}x{cols}"
    x = torch.rand(rows, cols, device=tutor_lab.DEVICE) * 8.0 - 4.0
    y = torch.empty_like(x)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    ref = softmax_ref(x).float()
    best = []
    for warps in WARP_CANDIDATES:  # every candidate is recorded, so the tuning is on record
        best.append((timed(f"softmax_one_pass_w{warps}", lambda: softmax_one_pass(x, y, warps), y, ref, SOFTMAX_TOL,
                           ceiling, 8 * n, seed, size), warps))
    ONE_PASS_WARPS = min(best)[1]
    print(f"softmax_one_pass: best num_warps={ONE_PASS_WARPS}", file=sys.stderr)
    timed("softmax_one_pass", lambda: softmax_one_pass(x, y), y, ref, SOFTMAX_TOL, ceiling, 8 * n, seed, size)
    timed("softmax_online", lambda: softmax_online(x, y), y, ref, SOFTMAX_TOL, ceiling, 12 * n, seed, size)
    timed("torch_softmax", lambda: torch.softmax(x, dim=-1),
          y, ref, SOFTMAX_TOL, ceiling, 8 * n, seed, size)
    compiled_softmax = torch.compile(lambda t: torch.softmax(t, dim=-1))
    compiled_softmax(x)
    timed("compiled_softmax", lambda: compiled_softmax(x), y, ref, SOFTMAX_TOL, ceiling, 8 * n, seed, size)

    w = torch.rand(cols, device=tutor_lab.DEVICE) * 2.0 - 1.0
    b = torch.rand(cols, device=tutor_lab.DEVICE) * 2.0 - 1.0
    ref = layernorm_ref(x, w, b).float()
    timed("layernorm", lambda: layernorm(x, w, b, y), y, ref, LAYERNORM_TOL, ceiling, 8 * n, seed, size)
    timed("torch_layer_norm", lambda: torch.nn.functional.layer_norm(x, (cols,), w, b, EPS), y, ref, LAYERNORM_TOL,
          ceiling, 8 * n, seed, size)
    # mean (read), x - mean (read, write), d * d (read, write), mean (read), then d * rstd, * w, + b
    # (read, write each): 4 + 8 + 8 + 4 + 3 x 8 = 48 bytes an element in eager mode.
    timed("eager_layernorm_unfused", lambda: layernorm_unfused(x, w, b), y, ref, LAYERNORM_TOL, ceiling, 48 * n,
          seed, size)
    compiled_ln = torch.compile(layernorm_unfused)
    compiled_ln(x, w, b)
    timed("compiled_layernorm_unfused", lambda: compiled_ln(x, w, b), y, ref, LAYERNORM_TOL, ceiling, 8 * n,
          seed, size)
    del x, y, ref

    n = long_rows * long_cols
    size = f"{long_rows}x{long_cols}"
    x = torch.rand(long_rows, long_cols, device=tutor_lab.DEVICE) * 8.0 - 4.0
    y = torch.empty_like(x)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    ref = softmax_ref(x).float()
    timed("softmax_online_long", lambda: softmax_online(x, y), y, ref, SOFTMAX_TOL, ceiling, 12 * n, seed, size)
    timed("torch_softmax_long", lambda: torch.softmax(x, dim=-1), y, ref, SOFTMAX_TOL, ceiling, 8 * n, seed, size)


def main() -> int:
    def extra(p):
        p.add_argument("--rows", type=int, default=16384)
        p.add_argument("--cols", type=int, default=8192)
        p.add_argument("--long-rows", type=int, default=512)
        p.add_argument("--long-cols", type=int, default=262144)

    args = tutor_lab.parse_args(extra=extra)
    # 4097, 1000, 513: not powers of two, so the last block of a row is partial; 30011 is longer than
    # MAX_ONE_PASS, so only the online softmax runs there, over 15 steps of ONLINE_BLOCK.
    shapes = [(1, 1), (3, 7), (5, 1000), (7, 4097), (2, 8192), (3, 16384), (2, 30011), (130, 513)]
    if args.quick:
        shapes = [(1, 1), (3, 7), (5, 1000), (3, 4097), (2, 5003)]
    for rows, cols in shapes:
        verify(rows, cols, args.seed)
    if args.bench:
        bench(args.rows, args.cols, args.long_rows, args.long_cols, args.seed)
    return tutor_lab.finish("rows")


if __name__ == "__main__":
    sys.exit(main())
