"""C03 paged_attention in Triton: decode attention (one new query token per sequence) over a KV cache that
is either contiguous (one max-length slot per sequence) or paged (fixed-size blocks anywhere in a pool,
found through a block table), the same kernel for both.

Layout, shared by both caches so that the comparison isolates the indirection: K and V are rows of
[KV_HEADS, HEAD_DIM] values, one row per cached token.
  contiguous  row of token t of sequence b = b * max_len + t
  paged       row of token t of sequence b = table[b, t // PAGE] * PAGE + t % PAGE
The query is [B, H, D], H = GROUP * KV_HEADS (grouped-query attention: GROUP query heads share one KV head).
One program owns one (sequence, KV head) pair and all GROUP query heads that read it, so each K and V value
is loaded once per step: the saving GQA exists for. It walks the sequence in tiles of BLOCK_N tokens with the
online softmax of B01/B03 (running maximum m, running sum l, the accumulator rescaled when m grows).

  contiguous            the kernel on the contiguous cache (best of CANDIDATES, timed in the same run)
  paged_b16, paged_b32  the kernel on a paged cache with 16- and 32-token pages, shuffled at random in the pool
  paged_b16_ordered     the control: the same kernel and table lookup on 16-token pages handed out in order (an
                        identity block table: each sequence's pages follow each other, the sequences back to
                        back), so the indirection can be told apart from where the pages sit
  <layout>_<candidate>  every candidate tile shape (bench)
  copy                  a device-to-device copy of as many bytes as the kernels read: the ceiling
  read                  a read-only stream of as many bytes (a sum of every word, best of READ_BLOCKS): a second
                        ceiling, closer to a kernel that only reads

    python labs/C03/triton/paged_attention.py            check every variant on ragged lengths
    python labs/C03/triton/paged_attention.py --bench    GB/s of KV read, Llama 3.1 8B heads, 64 sequences
"""

import math
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import tutor_lab  # noqa: E402  (first: without a GPU it sets TRITON_INTERPRET=1 before Triton loads)
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
LOG2E = 1.4426950408889634  # exp(x) = exp2(x log2 e)


@triton.jit
def decode_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lens_ptr, table_ptr, table_stride, max_len, qk_scale,
                  GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                  PAGED: tl.constexpr, PAGE: tl.constexpr, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr):
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    n_tok = tl.load(lens_ptr + seq)
    offs_g = tl.arange(0, GROUP_PAD)  # query heads of this group, padded to the matrix unit's smallest M
    offs_d = tl.arange(0, HEAD_DIM)
    q_rows = (seq * KV_HEADS + kvh) * GROUP + offs_g
    in_group = offs_g < GROUP
    q = tl.load(q_ptr + q_rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=in_group[:, None],
                other=0.0)
    if UPCAST:  # only on the CPU: the interpreter's tl.dot misreads bf16 operands; fp32 holds them exactly
        q = q.to(tl.float32)
    m_i = tl.full([GROUP_PAD], -float("inf"), dtype=tl.float32)
    l_i = tl.full([GROUP_PAD], 0.0, dtype=tl.float32)
    acc = tl.full([GROUP_PAD, HEAD_DIM], 0.0, dtype=tl.float32)
    for start in range(0, n_tok, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        live = offs_n < n_tok
        if PAGED:
            # The only difference from the contiguous cache: one table entry per PAGE tokens tells where the
            # page sits in the pool. A tile of BLOCK_N tokens may span several pages.
            page = tl.load(table_ptr + seq * table_stride + offs_n // PAGE, mask=live, other=0)
            row = page.to(tl.int64) * PAGE + offs_n % PAGE
        else:
            row = seq.to(tl.int64) * max_len + offs_n
        base = (row * KV_HEADS + kvh) * HEAD_DIM
        k = tl.load(k_ptr + base[None, :] + offs_d[:, None], mask=live[None, :], other=0.0)  # D x BLOCK_N
        v = tl.load(v_ptr + base[:, None] + offs_d[None, :], mask=live[:, None], other=0.0)  # BLOCK_N x D
        if UPCAST:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k)  # GROUP_PAD x BLOCK_N raw scores
        qk = tl.where(live[None, :], qk, -float("inf"))
        # Online softmax in log2 units; the first tile holds at least one live token, so m_new is finite.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk * qk_scale - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    o_ptrs = o_ptr + q_rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :]
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=in_group[:, None])


@triton.jit
def read_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    """The read-only ceiling: each program sums BLOCK consecutive words and stores one partial sum, so every
    byte is read once and almost nothing is written (one word per BLOCK read)."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x.to(tl.float32), axis=0))


READ_BLOCKS = [dict(BLOCK=4096, num_warps=8), dict(BLOCK=8192, num_warps=8), dict(BLOCK=16384, num_warps=16)]


def read_all(x: torch.Tensor, parts: torch.Tensor, cfg: dict) -> torch.Tensor:
    """Sums every element of the 1-D float32 `x` through read_kernel; `parts` holds one float per program."""
    grid = (triton.cdiv(x.numel(), cfg["BLOCK"]),)
    read_kernel[grid](x, parts, x.numel(), **cfg)
    return parts[: grid[0]]


# Tile shapes tried by the bench: tokens per tile and warps per program.
CANDIDATES = [
    dict(BLOCK_N=32, num_warps=4, num_stages=2),
    dict(BLOCK_N=64, num_warps=4, num_stages=2),
    dict(BLOCK_N=64, num_warps=4, num_stages=3),
    dict(BLOCK_N=128, num_warps=4, num_stages=2),
    dict(BLOCK_N=128, num_warps=8, num_stages=2),
]
BEST = dict(BLOCK_N=64, num_warps=4, num_stages=2)  # replaced per layout by the bench's winner


def shape_name(cfg: dict) -> str:
    return f"n{cfg['BLOCK_N']}_w{cfg['num_warps']}_s{cfg['num_stages']}"


class Cache:
    """K and V rows [rows, KV_HEADS, HEAD_DIM] plus what the kernel needs to find a sequence's tokens.

    page = 0: contiguous, sequence b owns rows b * max_len .. b * max_len + max_len - 1.
    page > 0: paged, table[b, j] is the pool page holding tokens j * page .. j * page + page - 1 of sequence b."""

    def __init__(self, k, v, lens, max_len, page=0, table=None):
        self.k, self.v, self.lens, self.max_len, self.page, self.table = k, v, lens, max_len, page, table


def build_caches(lens: list[int], kv_heads: int, dim: int, pages: tuple[int, ...], dtype, guard: bool,
                 spare: float = 0.25, ordered: tuple[int, ...] = ()) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """The same K and V values laid out contiguously and in shuffled pages of each size in `pages`, and, for
    each size in `ordered`, in pages handed out in order (paged_b<size>_ordered: the same pool, an identity
    block table).

    Rows no sequence owns (the tail of each contiguous slot, the pool's free pages) hold NaN, so a kernel
    that reads a token it should not, or follows a wrong table entry, produces NaN and fails its check.
    Returns the caches by name and the dense per-sequence K and V ([B, max_len, KV_HEADS, D]) for the reference."""
    batch, max_len = len(lens), max(lens)
    dense_k = torch.randn(batch, max_len, kv_heads, dim, device=tutor_lab.DEVICE).to(dtype)
    dense_v = torch.randn(batch, max_len, kv_heads, dim, device=tutor_lab.DEVICE).to(dtype)
    nan = float("nan")
    for b, n in enumerate(lens):
        dense_k[b, n:] = nan
        dense_v[b, n:] = nan
    lens_t = torch.tensor(lens, dtype=torch.int32, device=tutor_lab.DEVICE)
    wrap = (lambda t, name: tutor_lab.guarded(t, name=name)) if guard else (lambda t, name: t)
    caches = {"contiguous": Cache(wrap(dense_k.reshape(-1, kv_heads, dim), "k"),
                                  wrap(dense_v.reshape(-1, kv_heads, dim), "v"), wrap(lens_t, "lens"), max_len)}
    for page, shuffled in [(p, True) for p in pages] + [(p, False) for p in ordered]:
        per_seq = [-(-n // page) for n in lens]
        used = sum(per_seq)
        n_pages = used + max(1, int(used * spare))  # a pool with free pages left over, as a server's has
        # pages handed out in a random order, or (the control) in order: page j of sequence b follows page j - 1
        order = torch.randperm(n_pages, device="cpu") if shuffled else torch.arange(n_pages)
        width = max(per_seq)
        table = torch.zeros(batch, width, dtype=torch.int32)
        pool_k = torch.full((n_pages, page, kv_heads, dim), nan, dtype=dtype, device=tutor_lab.DEVICE)
        pool_v = torch.full_like(pool_k, nan)
        nxt = 0
        for b, n in enumerate(lens):
            for j in range(per_seq[b]):
                p = int(order[nxt])
                nxt += 1
                table[b, j] = p
                lo, hi = j * page, min(n, (j + 1) * page)
                pool_k[p, : hi - lo] = dense_k[b, lo:hi]
                pool_v[p, : hi - lo] = dense_v[b, lo:hi]
        caches[f"paged_b{page}" + ("" if shuffled else "_ordered")] = Cache(wrap(pool_k.reshape(-1, kv_heads, dim), "k_pool"),
                                         wrap(pool_v.reshape(-1, kv_heads, dim), "v_pool"), wrap(lens_t, "lens"),
                                         max_len, page, wrap(table.to(tutor_lab.DEVICE), "block_table"))
    return caches, dense_k, dense_v


def decode_attention(q: torch.Tensor, cache: Cache, o: torch.Tensor, cfg: dict | None = None) -> None:
    cfg = cfg or BEST
    batch, heads, dim = q.shape
    kv_heads = cache.k.shape[1]
    group = heads // kv_heads
    assert heads % kv_heads == 0 and dim in (16, 32, 64, 128, 256)
    table = cache.table if cache.page else cache.lens  # an unused pointer for the contiguous cache
    stride = cache.table.shape[1] if cache.page else 0
    grid = (batch, kv_heads)
    decode_kernel[grid](q, cache.k, cache.v, o, cache.lens, table, stride, cache.max_len,
                        LOG2E / math.sqrt(dim), GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)),
                        KV_HEADS=kv_heads, HEAD_DIM=dim, PAGED=bool(cache.page), PAGE=max(cache.page, 1),
                        UPCAST=INTERPRETED, **cfg)


def reference(q: torch.Tensor, dense_k: torch.Tensor, dense_v: torch.Tensor, lens: list[int]) -> torch.Tensor:
    """float32, one sequence at a time, from the dense K and V: softmax(q K^T / sqrt(d)) V over its own tokens."""
    batch, heads, dim = q.shape
    group = heads // dense_k.shape[2]
    out = torch.empty(batch, heads, dim, dtype=torch.float32, device=q.device)
    for b, n in enumerate(lens):
        k = dense_k[b, :n].float().repeat_interleave(group, dim=1)  # n x H x D: each KV head for GROUP heads
        v = dense_v[b, :n].float().repeat_interleave(group, dim=1)
        s = torch.einsum("hd,nhd->hn", q[b].float(), k) / math.sqrt(dim)
        out[b] = torch.einsum("hn,nhd->hd", torch.softmax(s, dim=-1), v)
    return out


def tolerance(v: torch.Tensor) -> tuple[float, float]:
    """|o - ref| <= atol + rtol |ref| for bf16 K and V, fp32 scores and sums, P rounded to bf16, O stored bf16.

    P V uses P rounded to bf16 (at most 2^-7 of each weight, rounding or truncating) while l sums the unrounded
    weights, so the error of o is at most 2^-7 sum_j p_j |v_j| / l <= 2^-7 max|v|. Storing o as bf16 adds
    2^-7 |o| <= 2^-7 (|ref| + that first error). The fp32 scores and exp2 add far less than 1e-5."""
    finite = v[torch.isfinite(v)].float()
    vmax = float(finite.abs().max()) if finite.numel() else 0.0
    first = 2.0**-7 * vmax
    return first * (1 + 2.0**-7) + 1e-5, 2.0**-7


def verify(lens: list[int], heads: int, kv_heads: int, dim: int, pages: tuple[int, ...], seed: int,
           candidates: bool) -> None:
    size = f"B{len(lens)}_H{heads}_KV{kv_heads}_D{dim}_len{'-'.join(map(str, lens))}"
    caches, dense_k, dense_v = build_caches(lens, kv_heads, dim, pages, torch.bfloat16, guard=True,
                                            ordered=ORDERED)
    q = tutor_lab.rand(len(lens), heads, dim, lo=-3.0, hi=3.0, name="q").to(torch.bfloat16)
    q = tutor_lab.guarded(q, name="q")
    ref = reference(q, dense_k, dense_v, lens)
    atol, rtol = tolerance(dense_v)
    cfgs = [("", BEST)] + ([("_" + shape_name(c), c) for c in CANDIDATES] if candidates else [])
    for name, cache in caches.items():
        for suffix, cfg in cfgs:
            o = tutor_lab.output_like(q, name="o")
            decode_attention(q, cache, o, cfg)
            tutor_lab.check("paged_attention", name + suffix, size, o, ref, seed, atol=atol, rtol=rtol)


ORDERED = (16,)  # the page sizes of the control cache (identity block table)


def verify_read(n: int, seed: int) -> None:
    """The read ceiling sums what it reads: every element, once (n not a multiple of any block)."""
    x = tutor_lab.rand(n, name="x")
    for cfg in READ_BLOCKS:
        parts = tutor_lab.output(triton.cdiv(n, cfg["BLOCK"]), name="parts")
        got = read_all(x, parts, cfg).double().sum().reshape(1)
        want = x.double().sum().reshape(1)
        tutor_lab.check("paged_attention", f"read_{cfg['BLOCK']}", f"n{n}", got, want, seed,
                        atol=1e-6 * n, rtol=1e-5)


# Rounds of interleaved timing: each round times the copy and every kernel once, in the same order, so a
# drift of the clock reaches all of them alike; a record is the median over the rounds.
ROUNDS = 5


def interleaved_ms(runs: dict) -> dict:
    for fn in runs.values():  # compile and run each once before the first round
        fn()
    tutor_lab.sync()
    times = {name: [] for name in runs}
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            times[name].append(tutor_lab.timed_ms(fn, reps=10))
    return {name: statistics.median(t) for name, t in times.items()}


def kv_bytes(lens: list[int], kv_heads: int, dim: int, item: int) -> int:
    """The bytes a decode step must read: K and V of every cached token, every KV head (q, o and the block
    table are under 0.1% of it here and not counted)."""
    return 2 * sum(lens) * kv_heads * dim * item


def bench(batch: int, heads: int, kv_heads: int, dim: int, max_len: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    # Ragged lengths between 3/4 of max_len and max_len, not multiples of any page or tile.
    lens = [int(x) for x in torch.randint(3 * max_len // 4, max_len + 1, (batch,), generator=gen)]
    pages = (16, 32)
    caches, dense_k, dense_v = build_caches(lens, kv_heads, dim, pages, torch.bfloat16, guard=False,
                                            ordered=ORDERED)
    q = torch.randn(batch, heads, dim, device=tutor_lab.DEVICE).to(torch.bfloat16)
    o = torch.empty_like(q)
    nbytes = kv_bytes(lens, kv_heads, dim, 2)
    size = f"B{batch}_H{heads}_KV{kv_heads}_D{dim}_max{max_len}"
    ref = reference(q, dense_k, dense_v, lens)
    atol, rtol = tolerance(dense_v)
    del dense_k, dense_v
    src = torch.zeros(nbytes // 2, dtype=torch.uint8, device=tutor_lab.DEVICE)  # read nbytes/2, write nbytes/2
    dst = torch.empty_like(src)
    runs = {"copy": lambda: dst.copy_(src)}
    fits = {name: [] for name in caches}  # a candidate that fails its check is timed but never chosen
    for name, cache in caches.items():
        for cfg in CANDIDATES:
            o.fill_(float("nan"))
            decode_attention(q, cache, o, cfg)
            if tutor_lab.check("paged_attention", f"{name}_{shape_name(cfg)}_bench", size, o, ref, seed,
                               atol=atol, rtol=rtol):
                fits[name].append(cfg)
            runs[f"{name}_{shape_name(cfg)}"] = lambda cache=cache, cfg=cfg: decode_attention(q, cache, o, cfg)
    # The read-only ceiling, timed last in each round (after the variants the records had before it).
    words = torch.zeros(nbytes // 4, dtype=torch.float32, device=tutor_lab.DEVICE)  # nbytes, read once
    parts = torch.empty(triton.cdiv(words.numel(), min(c["BLOCK"] for c in READ_BLOCKS)), dtype=torch.float32,
                        device=tutor_lab.DEVICE)
    for cfg in READ_BLOCKS:
        runs[f"read_{cfg['BLOCK']}"] = lambda cfg=cfg: read_all(words, parts, cfg)
    sweep = interleaved_ms(runs)
    ceiling = {"name": "device-to-device copy of the same bytes (read + written)",
               "value": tutor_lab.gbps(nbytes, sweep["copy"]), "unit": "GB/s"}
    tutor_lab.measure("paged_attention", "copy", "bandwidth", ceiling["value"], "GB/s", ceiling, nbytes=nbytes,
                      ms=sweep["copy"])
    for cfg in READ_BLOCKS:
        ms = sweep[f"read_{cfg['BLOCK']}"]
        print(f"paged_attention: read, {cfg['BLOCK']}-word blocks {ms:.4f} ms ({tutor_lab.gbps(nbytes, ms):.0f} GB/s)",
              file=sys.stderr)
    read_ms = min(sweep[f"read_{cfg['BLOCK']}"] for cfg in READ_BLOCKS)
    read = {"name": "read-only stream of the same bytes (a sum, best block)", "value": tutor_lab.gbps(nbytes, read_ms),
            "unit": "GB/s"}
    tutor_lab.measure("paged_attention", "read", "bandwidth", read["value"], "GB/s", read, nbytes=nbytes, ms=read_ms)
    for name, cache in caches.items():
        for cfg in CANDIDATES:
            ms = sweep[f"{name}_{shape_name(cfg)}"]
            print(f"paged_attention: {name}_{shape_name(cfg)} {ms:.4f} ms ({tutor_lab.gbps(nbytes, ms):.0f} GB/s)",
                  file=sys.stderr)
            tutor_lab.measure("paged_attention", f"{name}_{shape_name(cfg)}", "bandwidth",
                              tutor_lab.gbps(nbytes, ms), "GB/s", ceiling, nbytes=nbytes, ms=ms)
        best = min(fits[name] or CANDIDATES, key=lambda c: sweep[f"{name}_{shape_name(c)}"])
        ms = sweep[f"{name}_{shape_name(best)}"]
        print(f"paged_attention: {name} = {shape_name(best)}", file=sys.stderr)
        tutor_lab.measure("paged_attention", name, "bandwidth", tutor_lab.gbps(nbytes, ms), "GB/s", ceiling,
                          nbytes=nbytes, ms=ms)
        o.fill_(float("nan"))
        decode_attention(q, cache, o, best)
        tutor_lab.check("paged_attention", name + "_bench", size, o, ref, seed, atol=atol, rtol=rtol)


def main() -> int:
    def extra(p):
        # Llama 3.1 8B's attention: 32 query heads, 8 KV heads, head dimension 128 (its config.json).
        p.add_argument("--batch", type=int, default=64)
        p.add_argument("--heads", type=int, default=32)
        p.add_argument("--kv-heads", type=int, default=8)
        p.add_argument("--dim", type=int, default=128)
        p.add_argument("--max-len", type=int, default=4096)

    args = tutor_lab.parse_args(extra=extra)
    # (lengths, heads, KV heads, head dim): GQA, MQA (one KV head), MHA (GROUP = 1), ragged lengths with 1,
    # a length below one page, lengths one past a page and not multiples of any page or tile.
    cases = [([1, 17, 100, 33], 8, 2, 64), ([250, 5], 4, 1, 32), ([129, 64, 31], 4, 4, 64)]
    if not args.quick:
        cases += [([1000, 513, 2047, 7], 32, 8, 128), ([300] * 3, 16, 2, 128)]
    pages = (16, 32)
    for i, (lens, heads, kv_heads, dim) in enumerate(cases):
        verify(lens, heads, kv_heads, dim, pages, args.seed, candidates=(i == 0))
    verify_read(10_007 if args.quick else 1_000_003, args.seed)
    if args.bench:
        bench(args.batch, args.heads, args.kv_heads, args.dim, args.max_len, args.seed)
    return tutor_lab.finish("paged_attention")


if __name__ == "__main__":
    sys.exit(main())
