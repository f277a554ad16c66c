"""B03 flash_attention in Triton (exercise: TODOs 1-3): a FlashAttention-style forward pass, O = softmax(Q K^T / sqrt(d)) V.

Q, K, V and O are B x H x S x D tensors (D contiguous), bf16 on the GPU. One program owns BLOCK_M query
rows of one head. It walks the keys and values of that head in blocks of BLOCK_N: scores on the matrix
unit with tl.dot (fp32 accumulation), an online softmax (a running maximum m and a running sum l per row,
the output accumulator rescaled by exp(m_old - m_new) whenever m grows), the tile of probabilities cast to
bf16 and multiplied into V with a second tl.dot. The S x S score matrix never leaves the chip: each block
of scores lives only in registers. Causal: query i sees keys 0..i only, so the program stops at its own
diagonal, and the blocks wholly below it need no mask.

  flash, flash_causal          the kernel with the best of CANDIDATES (timed in the same run)
  flash_tma, flash_tma_causal  optional, NVIDIA Hopper and later: the same kernel, its tiles moved by the TMA
                               (CDNA 3 has no TMA; its loads are buffer loads into registers, then LDS), the
                               best of TMA_CANDIDATES; skipped with a reason on the CPU and on AMD
  <candidate>[_tma][_causal]   every candidate shape, timed and checked (bench)
  sdpa, sdpa_causal            torch.nn.functional.scaled_dot_product_attention, same tensors, same run:
                               the ceiling
  naive, naive_causal          eager PyTorch: Q K^T, softmax, times V, the S x S scores in HBM (bench)

    TRITON_INTERPRET=1 python labs/B03/triton/flash_attention_exercise.py --quick   check on odd lengths (CPU)
    python labs/B03/triton/flash_attention_exercise.py --bench    TFLOP/s at B=8, H=16, S=4096, D=128, bf16, beside SDPA
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
LOG2E = 1.4426950408889634  # exp(x) = exp2(x log2 e): exp2 is the instruction the GPU has


@triton.jit
def attn_step(acc, m_i, l_i, q, k, v, offs_m, start_n, seq, qk_scale,
              MASKED: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr):
    # One block of BLOCK_N keys and values (k as D x BLOCK_N, v as BLOCK_N x D, keys past S read as zeros):
    # scores, the online-softmax update, and P V into acc.
    offs_n = start_n + tl.arange(0, BLOCK_N)
    if UPCAST:  # only on the CPU: the interpreter's tl.dot misreads bf16 operands; fp32 holds them exactly
        k = k.to(tl.float32)
    qk = tl.dot(q, k)  # BLOCK_M x BLOCK_N raw scores; m_i is kept in log2 units (times qk_scale)
    if MASKED:
        # TODO 2: a key this row may not see (at or past seq, or after the row itself when CAUSAL) must add
        # nothing to the softmax.
        pass
    # Every row has seen at least one key it may see by now, so m_new is finite.
    # The scale goes in once per row for the maximum, and with the subtraction as one fused multiply-add
    # per score (qk_scale > 0, so the maximum of the scaled scores is the scaled maximum).
    m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    # TODO 1: l_i and acc hold sums of exp2(s - m_i); from here on they must hold sums of exp2(s - m_new),
    # with this block's p added to l_i.
    l_i = l_i + tl.sum(p, axis=1)
    if UPCAST:
        acc = tl.dot(p, v.to(tl.float32), acc)
    else:
        acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, m_new, l_i


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, qk_scale, CAUSAL: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, UPCAST: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1).to(tl.int64) * seq * HEAD_DIM  # B x H heads, each S x D, one after the other
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < seq, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    # K is read as its transpose, D x BLOCK_N: element (d, n) is K[n, d].
    k_ptrs = k_ptr + head + tl.arange(0, BLOCK_N)[None, :] * HEAD_DIM + offs_d[:, None]
    v_ptrs = v_ptr + head + tl.arange(0, BLOCK_N)[:, None] * HEAD_DIM + offs_d[None, :]
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, dtype=tl.float32)
    acc = tl.full([BLOCK_M, HEAD_DIM], 0.0, dtype=tl.float32)
    # Blocks of keys that every row of this program may see, wholly inside S: no mask.
    if CAUSAL:
        whole = start_m  # keys 0..start_m - 1 sit below the diagonal of every row (BLOCK_M % BLOCK_N == 0)
        end = tl.minimum(start_m + BLOCK_M, seq)  # no row of this program sees a key at or past its end
    else:
        whole = (seq // BLOCK_N) * BLOCK_N
        end = seq
    for start_n in range(0, whole, BLOCK_N):
        k = tl.load(k_ptrs + start_n * HEAD_DIM)
        v = tl.load(v_ptrs + start_n * HEAD_DIM)
        acc, m_i, l_i = attn_step(acc, m_i, l_i, q, k, v, offs_m, start_n, seq, qk_scale,
                                  False, CAUSAL, BLOCK_N, UPCAST)
    # The rest: the diagonal blocks (causal) and the ragged last block, masked; keys past S are not loaded.
    for start_n in range(whole, end, BLOCK_N):
        in_seq = start_n + tl.arange(0, BLOCK_N) < seq
        k = tl.load(k_ptrs + start_n * HEAD_DIM, mask=in_seq[None, :], other=0.0)
        v = tl.load(v_ptrs + start_n * HEAD_DIM, mask=in_seq[:, None], other=0.0)
        acc, m_i, l_i = attn_step(acc, m_i, l_i, q, k, v, offs_m, start_n, seq, qk_scale,
                                  True, CAUSAL, BLOCK_N, UPCAST)
    # TODO 3: store the rows of O this program owns (the weighted mean: acc holds the weighted sum of V, l_i
    # the weights), only those that exist, in O's own dtype.
    pass


@triton.jit
def attn_fwd_tma_kernel(q_desc, k_desc, v_desc, o_desc, seq, qk_scale, CAUSAL: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                        OUT_DTYPE: tl.constexpr):
    # Optional, NVIDIA Hopper and later: the same program with its tiles moved by the TMA (the Tensor Memory
    # Accelerator) through descriptors made on the host. Each descriptor sees its tensor as (B H) x S x D, so
    # a tile that hangs past S reads zeros and stores nothing there, head by head: no pointer arithmetic and
    # no load masks; the scores past S are still masked, by the same attn_step.
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh, start_m, 0]).reshape(BLOCK_M, HEAD_DIM)
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, dtype=tl.float32)
    acc = tl.full([BLOCK_M, HEAD_DIM], 0.0, dtype=tl.float32)
    if CAUSAL:
        whole = start_m
        end = tl.minimum(start_m + BLOCK_M, seq)
    else:
        whole = (seq // BLOCK_N) * BLOCK_N
        end = seq
    for start_n in range(0, whole, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc, m_i, l_i = attn_step(acc, m_i, l_i, q, tl.trans(k), v, offs_m, start_n, seq, qk_scale,
                                  False, CAUSAL, BLOCK_N, False)
    for start_n in range(whole, end, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc, m_i, l_i = attn_step(acc, m_i, l_i, q, tl.trans(k), v, offs_m, start_n, seq, qk_scale,
                                  True, CAUSAL, BLOCK_N, False)
    acc = acc / l_i[:, None]
    o_desc.store([bh, start_m, 0], acc.to(OUT_DTYPE).reshape(1, BLOCK_M, HEAD_DIM))

# Tile shapes tried by the bench; BLOCK_M must be a multiple of BLOCK_N (the causal split above).
CANDIDATES = [
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=4),
    dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=32, num_warps=4, num_stages=4),
]
BEST = dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3)  # replaced by the bench's winner


def shape_name(cfg: dict) -> str:
    return f"m{cfg['BLOCK_M']}_n{cfg['BLOCK_N']}_w{cfg['num_warps']}_s{cfg['num_stages']}"


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, causal: bool,
                    cfg: dict | None = None) -> None:
    cfg = cfg or BEST
    batch, heads, seq, dim = q.shape
    assert dim in (16, 32, 64, 128, 256) and cfg["BLOCK_M"] % cfg["BLOCK_N"] == 0
    grid = (triton.cdiv(seq, cfg["BLOCK_M"]), batch * heads)
    attn_fwd_kernel[grid](q, k, v, o, seq, LOG2E / math.sqrt(dim), CAUSAL=causal, HEAD_DIM=dim,
                          UPCAST=INTERPRETED, **cfg)


# The TMA variant's tile shapes (optional, NVIDIA Hopper and later); the bench's fastest is `flash_tma`.
TMA_CANDIDATES = [
    dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=2),
    dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=4),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
    dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
]
BEST_TMA = dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=2)  # replaced by the bench's winner
OUT_DTYPES = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


def tma_unavailable() -> str:
    """Why the TMA variant cannot run here, or "" when it can."""
    if INTERPRETED or not torch.cuda.is_available():
        return "the Triton interpreter has no TMA"
    if torch.version.hip or torch.cuda.get_device_capability()[0] < 9:
        return "TMA needs an NVIDIA GPU of compute capability 9.0 (Hopper) or later"
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return f"Triton {triton.__version__} has no host-side tensor descriptors"
    return ""


TMA_WHY = tma_unavailable()


def flash_attention_tma(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, causal: bool,
                        cfg: dict | None = None):
    """Launch the TMA kernel once (every tensor B x H x S x D, contiguous, 16-byte aligned)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    cfg = cfg or BEST_TMA
    batch, heads, seq, dim = q.shape
    assert cfg["BLOCK_M"] % cfg["BLOCK_N"] == 0
    assert all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (q, k, v, o)), "TMA: aligned, contiguous"
    rows = {"q": cfg["BLOCK_M"], "k": cfg["BLOCK_N"], "v": cfg["BLOCK_N"], "o": cfg["BLOCK_M"]}
    descs = [TensorDescriptor.from_tensor(t.view(batch * heads, seq, dim), [1, rows[n], dim])
             for n, t in zip("qkvo", (q, k, v, o))]
    grid = (triton.cdiv(seq, cfg["BLOCK_M"]), batch * heads)
    attn_fwd_tma_kernel[grid](*descs, seq, LOG2E / math.sqrt(dim), CAUSAL=causal, HEAD_DIM=dim,
                              OUT_DTYPE=OUT_DTYPES[o.dtype], **cfg)


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Three steps, each a kernel of its own in eager mode: the S x S scores and probabilities go to HBM."""
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), -float("inf"))
    return torch.softmax(s, dim=-1) @ v


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """float32 on the device, from the same bf16 values."""
    return naive_attention(q.float(), k.float(), v.float(), causal)


def tolerance(v: torch.Tensor) -> tuple[float, float]:
    """|o - ref| <= atol + rtol |ref| for bf16 inputs, fp32 scores and sums, P rounded to bf16, O stored as bf16.

    The kernel multiplies V by P rounded to bf16 while l sums the unrounded P. Rounding to bf16 (8 significant
    bits) moves a value by at most 2^-8 of itself when it rounds to nearest, 2^-7 when it truncates; take 2^-7.
    Then |sum_j (p~_j - p_j) v_j| / l <= 2^-7 sum_j p_j |v_j| / l <= 2^-7 max|v|. The stored O adds 2^-7 |o|,
    and |o| <= |ref| + that first error. The fp32 scores and exp2 add far less than 1e-5 here."""
    vmax = float(v.float().abs().max()) if v.numel() else 0.0
    first = 2.0**-7 * vmax
    return first * (1 + 2.0**-7) + 1e-5, 2.0**-7


def verify(batch: int, heads: int, seq: int, dim: int, seed: int, candidates: bool) -> None:
    size = f"{batch}x{heads}x{seq}x{dim}"
    # Q and K in [-3, 3): scores of a few units after the 1/sqrt(d) scale, so the running maximum moves
    # often and a wrong rescale shows; V in [-1, 1).
    q = tutor_lab.guarded(tutor_lab.rand(batch, heads, seq, dim, lo=-3.0, hi=3.0).to(torch.bfloat16), name="q")
    k = tutor_lab.guarded(tutor_lab.rand(batch, heads, seq, dim, lo=-3.0, hi=3.0).to(torch.bfloat16), name="k")
    v = tutor_lab.guarded(tutor_lab.rand(batch, heads, seq, dim).to(torch.bfloat16), name="v")
    atol, rtol = tolerance(v)
    runs = [("flash", flash_attention, BEST)]
    runs += [(shape_name(c), flash_attention, c) for c in CANDIDATES] if candidates else []
    if not TMA_WHY:
        runs += [("flash_tma", flash_attention_tma, BEST_TMA)]
        runs += [(shape_name(c) + "_tma", flash_attention_tma, c) for c in TMA_CANDIDATES] if candidates else []
    for causal in (False, True):
        ref = reference(q, k, v, causal)
        for name, kernel, cfg in runs:
            o = tutor_lab.output_like(q, name="o")
            kernel(q, k, v, o, causal, cfg)
            variant = name + ("_causal" if causal else "")
            tutor_lab.check("flash_attention", variant, size, o, ref, seed, atol=atol, rtol=rtol)


# Rounds of interleaved timing: each round times SDPA and every kernel once, in the same order, so a drift
# of the GPU's clock reaches all of them alike; each record is the median over the rounds.
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


def attention_flops(batch: int, heads: int, seq: int, dim: int, causal: bool) -> float:
    """4 S^2 D per head (Q K^T and P V, 2 S^2 D each); causal counts half the score matrix."""
    full = 4.0 * batch * heads * seq * seq * dim
    return full / 2 if causal else full


def bench(batch: int, heads: int, seq: int, dim: int, seed: int) -> None:
    global BEST, BEST_TMA
    shape = (batch, heads, seq, dim)
    size = "x".join(map(str, shape))
    q = torch.randn(shape, device=tutor_lab.DEVICE, dtype=torch.bfloat16)
    k = torch.randn(shape, device=tutor_lab.DEVICE, dtype=torch.bfloat16)
    v = torch.randn(shape, device=tutor_lab.DEVICE, dtype=torch.bfloat16)
    o = torch.empty_like(q)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    atol, rtol = tolerance(v)
    # (record name, kernel, shape) of every candidate; the fastest of each kernel becomes flash / flash_tma
    kernels = {"flash": (flash_attention, CANDIDATES, "")}
    if not TMA_WHY:
        kernels["flash_tma"] = (flash_attention_tma, TMA_CANDIDATES, "_tma")
    else:
        print(f"flash_attention: flash_tma skipped: {TMA_WHY}", file=sys.stderr)
    for causal in (False, True):
        tag = "_causal" if causal else ""
        flops = attention_flops(batch, heads, seq, dim, causal)
        ref = sdpa(q.float(), k.float(), v.float(), is_causal=causal)
        runs = {"sdpa": lambda: sdpa(q, k, v, is_causal=causal)}
        fits = {name: [] for name in kernels}  # a candidate that fails its check here is timed but never chosen
        for name, (kernel, cands, suffix) in kernels.items():
            for cfg in cands:
                o.fill_(float("nan"))
                kernel(q, k, v, o, causal, cfg)
                # batch 0 only (every query block of 16 heads): a full check copies 64 M elements to the host
                if tutor_lab.check("flash_attention", shape_name(cfg) + suffix + tag + "_bench", size, o[0], ref[0],
                                   seed, atol=atol, rtol=rtol):
                    fits[name].append(cfg)
                runs[shape_name(cfg) + suffix] = lambda kernel=kernel, cfg=cfg: kernel(q, k, v, o, causal, cfg)
        runs["naive"] = lambda: naive_attention(q, k, v, causal)
        # One interleaved sweep: SDPA, every candidate and eager PyTorch in each round. The best candidate's
        # own times are its kernel's record, so the choice and the number come from the same runs.
        sweep = interleaved_ms(runs)
        ceiling = {"name": f"scaled_dot_product_attention bf16{' causal' if causal else ''}",
                   "value": flops / (sweep["sdpa"] * 1e9), "unit": "TFLOP/s"}
        for name, (kernel, cands, suffix) in kernels.items():
            best = min(fits[name] or cands, key=lambda c: sweep[shape_name(c) + suffix])
            if not causal and name == "flash":
                BEST = best
            if not causal and name == "flash_tma":
                BEST_TMA = best
            for cfg in cands:
                ms = sweep[shape_name(cfg) + suffix]
                print(f"flash_attention{tag}: {shape_name(cfg) + suffix} {ms:.3f} ms ({flops / (ms * 1e9):.1f} "
                      f"TFLOP/s)", file=sys.stderr)
                tutor_lab.measure("flash_attention", shape_name(cfg) + suffix + tag, "throughput",
                                  flops / (ms * 1e9), "TFLOP/s", ceiling, ms=ms)
            ms = sweep[shape_name(best) + suffix]
            print(f"flash_attention{tag}: {name} = {shape_name(best) + suffix}", file=sys.stderr)
            tutor_lab.measure("flash_attention", name + tag, "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling,
                              ms=ms)
            o.fill_(float("nan"))
            kernel(q, k, v, o, causal, best)
            tutor_lab.check("flash_attention", name + tag + "_bench", size, o, ref, seed, atol=atol, rtol=rtol)
        for name in ("sdpa", "naive"):
            ms = sweep[name]
            tutor_lab.measure("flash_attention", name + tag, "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, ms=ms)
        del ref


def main() -> int:
    def extra(p):
        p.add_argument("--batch", type=int, default=8)
        p.add_argument("--heads", type=int, default=16)
        p.add_argument("--seq", type=int, default=4096)
        p.add_argument("--dim", type=int, default=128)

    args = tutor_lab.parse_args(extra=extra)
    # S = 97 and 1000 are not multiples of any block: the last block of keys and of queries is ragged.
    shapes = [(1, 1, 1, 64), (2, 3, 97, 64), (1, 2, 1000, 128), (2, 2, 256, 128), (1, 1, 4099, 64)]
    if args.quick:
        shapes = [(1, 1, 1, 64), (1, 2, 97, 64), (1, 1, 1000, 32), (1, 1, 128, 16)]
    # the candidates on one ragged length with the bench's head dimension (on the CPU, the quick one)
    ragged = {(1, 2, 1000, 128), (1, 2, 97, 64)}
    for batch, heads, seq, dim in shapes:
        verify(batch, heads, seq, dim, args.seed, candidates=(batch, heads, seq, dim) in ragged)
    if args.bench:
        bench(args.batch, args.heads, args.seq, args.dim, args.seed)
    return tutor_lab.finish("flash_attention")


if __name__ == "__main__":
    sys.exit(main())
