"""A05 scan in Triton, exercise: finish the look-back (solution: scan.py).

The inclusive prefix sum y[i] = x[0] + ... + x[i] of n float32 values.

  reduce_then_scan  three launches: the total of each block, a scan of those totals in one program,
                    then tl.cumsum of each block plus the total of every block before it (3n bytes)
  lookback          one launch, decoupled look-back: each program takes a tile number from an atomic
                    counter, scans its tile with tl.cumsum, publishes the tile's total, then walks back
                    over its predecessors' published words until it meets an inclusive prefix (2n bytes)
  torch_cumsum      torch.cumsum on the same tensor, timed in the same run (bench only)

    python labs/A05/triton/scan_exercise.py            check both variants on odd sizes
    TRITON_INTERPRET=1 python labs/A05/triton/scan_exercise.py   the same on a CPU (set before triton is imported)
    python labs/A05/triton/scan_exercise.py --bench    GB/s on 2^28 floats (bytes read + written once), with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


# ---------------------------------------------------------------- reduce-then-scan
@triton.jit
def block_total_kernel(x_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(totals_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def scan_totals_kernel(totals_ptr, count, BLOCK: tl.constexpr):
    # One program scans the block totals in place, BLOCK at a time, carrying the running total.
    carry = 0.0
    for start in range(0, count, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        t = tl.load(totals_ptr + offs, mask=offs < count, other=0.0)
        tl.store(totals_ptr + offs, tl.cumsum(t, axis=0) + carry, mask=offs < count)
        carry += tl.sum(t, axis=0)


@triton.jit
def scan_add_kernel(x_ptr, y_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    before = tl.load(totals_ptr + pid - 1, mask=pid > 0, other=0.0)  # the blocks before this one
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0) + before, mask=offs < n)


# ---------------------------------------------------------------- decoupled look-back
# Tile t's word in state_ptr[1 + t] (int64): status in the high 32 bits (0 nothing yet, 1 the tile's
# own total, 2 the inclusive prefix of tiles 0..t), the float's bits in the low 32. One 64-bit atomic
# carries both, so no program can see a status without its value. Reads are atomics with acquire
# semantics and writes atomics with release semantics, both at GPU scope: every spin iteration reads
# the word from L2 afresh, and nothing the program does after a read can be moved before it.
@triton.jit
def lookback_kernel(x_ptr, y_ptr, state_ptr, n, BLOCK: tl.constexpr):
    # The tile this program scans is the order it arrived in, not its program id: every tile it waits
    # for was handed to a program that is already running, so the wait always ends.
    # TODO 1: tile: how many programs took a tile before this one (state_ptr[0] counts them).
    tile = tl.program_id(0).to(tl.int64)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)
    bits = total.to(tl.uint32, bitcast=True).to(tl.int64)
    status = tl.where(tile == 0, 2, 1).to(tl.int64)
    tl.atomic_xchg(state_ptr + 1 + tile, (status << 32) | bits, sem="release")
    before = 0.0
    j = tile - 1  # the predecessor read next
    while j >= 0:
        word = tl.atomic_add(state_ptr + 1 + j, 0, sem="acquire")  # adds nothing: an atomic read
        st = word >> 32
        value = (word & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
        # TODO 2: add the value if the word holds one; then read the same word again if it held nothing,
        #         the next one back if it held a tile's own total, and stop (j < 0) at an inclusive prefix.
        j = -1
    if tile > 0:
        prefix = (before + total).to(tl.uint32, bitcast=True).to(tl.int64)
        tl.atomic_xchg(state_ptr + 1 + tile, (tl.full([], 2, tl.int64) << 32) | prefix, sem="release")
    tl.store(y_ptr + offs, local + before, mask=offs < n)


CONFIGS = {
    "reduce_then_scan": dict(BLOCK=4096, num_warps=8),
    "lookback": dict(BLOCK=8192, num_warps=16),
}
# On a GPU, each variant keeps the fastest of its candidates, timed in the same run.
CANDIDATES = {
    "reduce_then_scan": [dict(BLOCK=2048, num_warps=4), dict(BLOCK=4096, num_warps=8)],
    "lookback": [dict(BLOCK=4096, num_warps=8), dict(BLOCK=8192, num_warps=16), dict(BLOCK=16384, num_warps=16)],
}
TOTALS_BLOCK = 1024


def scan(x: torch.Tensor, y: torch.Tensor, work: torch.Tensor, variant: str) -> None:
    """y = inclusive prefix sum of x. work: at least cdiv(n, 2048) + 1 elements of int64 (state) or
    of float32 totals, viewed as needed."""
    n = x.numel()
    assert n + 2 * 16384 < 2**31, "32-bit offsets"
    cfg = CONFIGS[variant]
    tiles = triton.cdiv(n, cfg["BLOCK"])
    if variant == "reduce_then_scan":
        totals = work.view(torch.float32)[:tiles]
        block_total_kernel[(tiles,)](x, totals, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
        scan_totals_kernel[(1,)](totals, tiles, BLOCK=TOTALS_BLOCK, num_warps=4)
        scan_add_kernel[(tiles,)](x, y, totals, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    else:
        state = work[: tiles + 1]
        state.zero_()  # the counter and every tile's status: nothing yet
        lookback_kernel[(tiles,)](x, y, state, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])


def workspace(n: int, guarded: bool) -> torch.Tensor:
    count = triton.cdiv(n, 2048) + 1
    if guarded:
        return tutor_lab.output(count, dtype=torch.int64, name="state")
    return torch.empty(count, dtype=torch.int64, device=tutor_lab.DEVICE)


def exact_input(n: int, guarded: bool = True) -> torch.Tensor:
    """Integers 0..7 as floats, each kept with probability min(1, 2^21 / n), the others 0: every partial
    sum is an integer below 2^24 (checked), so any order of addition is exact. Up to 2^21 elements
    every value is kept."""
    x = tutor_lab.rand(n, lo=0.0, hi=8.0) if guarded else torch.rand(n, device=tutor_lab.DEVICE) * 8.0
    x.floor_()
    if n > 2**21:
        x.mul_(torch.rand(n, device=x.device) < 2**21 / n)
    assert float(x.double().sum()) < 2**24, "the exact input must sum to less than 2^24"
    return x


def check_tickets(work: torch.Tensor, n: int, name: str, seed: int) -> None:
    """After a look-back launch the counter in state[0] has handed out one ticket per tile: a count that
    ends elsewhere means a tile was taken twice, skipped, or not taken by ticket."""
    tiles = triton.cdiv(n, CONFIGS["lookback"]["BLOCK"])
    tutor_lab.check("scan", name + "_tickets", str(n), work[:1].double(),
                    torch.tensor([float(tiles)], dtype=torch.float64), seed)


def verify(n: int, seed: int) -> None:
    """Two inputs per size. Integers 0..7 as floats (exact_input): every partial sum is an integer below
    2^24, so any order is exact and the scan must match bit for bit. Uniform floats in [0, 1): y[i] sums
    i + 1 nonnegative terms, so whatever the order |y[i] - exact[i]| <= gamma(i) exact[i], with
    gamma(k) = k u / (1 - k u) and u = 2^-24: a relative tolerance gamma(n - 1), plus u for rounding
    the float64 reference to float32; the bound means something only while (n - 1) u is well below 1:
    above 2^23 elements, the exact check alone. After lookback, its ticket counter (check_tickets)."""
    u = 2.0**-24
    ku = (n - 1) * u
    for integers in (True, False) if ku < 0.5 else (True,):
        x = exact_input(n) if integers else tutor_lab.rand(n, lo=0.0, hi=1.0)
        ref = torch.cumsum(x.double(), dim=0).float()
        rtol = 0.0 if integers else ku / (1 - ku) + u
        work = workspace(n, guarded=True)
        for variant in CONFIGS:
            y = tutor_lab.output(n, name="y")
            scan(x, y, work, variant)
            name = variant + ("" if integers else "_float")
            tutor_lab.check("scan", name, str(n), y, ref, seed, rtol=rtol)
            if variant == "lookback":
                check_tickets(work, n, name, seed)


def timed(x: torch.Tensor, y: torch.Tensor, work: torch.Tensor, variant: str, name: str, ref: torch.Tensor,
          ceiling: dict, seed: int) -> float:
    """Times one variant on the bench's buffers, records its rate, then checks what the timed runs left in y
    (each run rewrites all of it) bit for bit, and lookback's ticket counter. Returns the median ms."""
    n = x.numel()
    y.fill_(float("nan"))  # a variant that writes nothing fails
    ms = tutor_lab.timed_ms(lambda: scan(x, y, work, variant))
    tutor_lab.measure("scan", name, "bandwidth", tutor_lab.gbps(8 * n, ms), "GB/s", ceiling, 8 * n, ms)
    tutor_lab.check("scan", name + "_bench", str(n), y, ref, seed)
    if variant == "lookback":
        check_tickets(work, n, name + "_bench", seed)
    return ms


def bench(n: int, seed: int) -> None:
    # A scan must read each element once and write it once: 8 bytes, the same as the copy ceiling moves.
    # The timed input is exact_input's (the values do not change the speed): every timed result is checked.
    x = exact_input(n, guarded=False)
    ref = torch.cumsum(x.double(), dim=0).float()
    y = torch.empty(n, device=tutor_lab.DEVICE)
    work = workspace(n, guarded=False)
    ceiling = tutor_lab.copy_ceiling(4 * n)
    traffic = 8 * n
    for variant, cands in CANDIDATES.items():  # every candidate is recorded, so the tuning is on record
        timings = []
        for cfg in cands:
            CONFIGS[variant] = cfg
            name = f"{variant}_b{cfg['BLOCK']}_w{cfg['num_warps']}"
            timings.append((timed(x, y, work, variant, name, ref, ceiling, seed), cfg))
        CONFIGS[variant] = min(timings, key=lambda t: t[0])[1]
        print(f"{variant}: best {CONFIGS[variant]}", file=sys.stderr)
    for variant in CONFIGS:
        timed(x, y, work, variant, variant, ref, ceiling, seed)
    y.fill_(float("nan"))
    ms = tutor_lab.timed_ms(lambda: torch.cumsum(x, dim=0, out=y))
    tutor_lab.measure("scan", "torch_cumsum", "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s", ceiling, traffic, ms)
    tutor_lab.check("scan", "torch_cumsum_bench", str(n), y, ref, seed)


def main() -> int:
    def extra(p):
        p.add_argument("--n", type=int, default=2**28)

    args = tutor_lab.parse_args(extra=extra)
    # 2**25 + 4099: above 2^24, not a multiple of any BLOCK, 8,193 or more totals for scan_totals_kernel's loop
    sizes = [1, 7, 1000, 4096, 4097, 100003, 2**20 + 7, 2**25 + 4099]
    if args.quick:
        sizes = [1, 7, 1000, 8193, 20011]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n, args.seed)
    return tutor_lab.finish("scan")


if __name__ == "__main__":
    sys.exit(main())
