"""C07 calibration (exercise: complete TODO 1 and TODO 2): time a real decode step and set it beside a model of it.

A stack of transformer layers at the true size of one GPU's share of Llama 3.1 70B under
8-way tensor parallelism (hidden 8192; 8 query heads and 1 KV head of 128; SwiGLU MLP of
28672 / 8 = 3584), random weights, a KV cache of `ctx` tokens for each of `batch` sequences.
One decode step: RMSNorm, QKV projection, attention of the new token over the cache, O
projection, residual, RMSNorm, gate/up, SiLU, down, residual; in bf16, or with fp8 GEMMs
(W8A8, torch._scaled_mm) where the GPU has fp8 tensor cores. With per-tensor scales, the fp8 path
quantizes each activation either with nine PyTorch operations (`quantize`) or with one or two
Triton launches (`quantize_fused`), which give the same bytes; with a scale per token (row) of the
activation and per output channel of the weight (`quantize_rows`), one Triton launch of one program
per row (`quantize_rows_fused`) needs no grid-wide maximum.

  python labs/C07/python/calibration_exercise.py           checks the layer math against float64 and the
                                                  fused quantizer bit for bit against `quantize`
  python labs/C07/python/calibration_exercise.py --quick   the same on tiny sizes (CPU is fine)
  python labs/C07/python/calibration_exercise.py --bench   on a GPU: the launch floors, the GEMM rates, the
                                                  step's own floors and the step time vs batch and context,
                                                  eager (with the host's issue time) and replayed from a
                                                  CUDA graph, each beside the calibrated model's prediction
The all-reduces that tensor parallelism adds after O and down are not part of this step.
"""

import math
import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "common", "python"))
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

import tutor_lab  # noqa: E402  (imported before triton: without a GPU it selects the interpreter)

try:
    import triton
    import triton.language as tl
except ImportError:  # the bf16 and unfused fp8 paths need only PyTorch
    triton = None

LAB = "calibration"
# One GPU's shard of a Llama 3.1 70B layer under TP=8, and a tiny shape for CPU checks.
SHARD = dict(hidden=8192, heads=8, kv_heads=1, head_dim=128, inter=3584)
TINY = dict(hidden=64, heads=4, kv_heads=2, head_dim=16, inter=96)
FP8 = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn  # FNUZ on CDNA 3
FP8_MAX = torch.finfo(FP8).max
FP8_BIAS, FP8_FNUZ = (8, True) if FP8 == torch.float8_e4m3fnuz else (7, False)


# ---------------------------------------------------------------- weights and quantization
def quantize(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-tensor fp8: scale so that the largest magnitude maps to the format's maximum.
    Nine PyTorch operations, so nine kernels: abs, amax, cast, multiply, clamp; cast, divide, clamp, cast.
    The scale multiplies by the fp32 reciprocal of the maximum: PyTorch's CUDA division by a Python number
    is exactly that, and writing it out gives the same bits on a CPU, a GPU and in the fused kernel."""
    scale = (t.abs().amax().float() * (1.0 / FP8_MAX)).clamp(min=1e-12)
    return (t.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8), scale


def quantize_rows(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row fp8 (a scale per token of an activation, per output channel of a weight): each row's
    largest magnitude maps to the format's maximum. The scale is [rows, 1] float32."""
    scale = (t.abs().amax(dim=-1, keepdim=True).float() * (1.0 / FP8_MAX)).clamp(min=1e-12)
    return (t.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8), scale


if triton is not None:
    # The same arithmetic as `quantize`, in the same order: the scale as a multiply by the fp32 reciprocal
    # of the maximum, the element division correctly rounded (div_rn; a plain `/` on fp32 may compile to an
    # approximate one) and the fp32 -> E4M3 rounding written out in
    # integers (round to nearest, ties to even, subnormals included), so that the bytes match `quantize`
    # on a GPU and under the interpreter alike.
    @triton.jit
    def _e4m3_bits(v, BIAS: tl.constexpr, FNUZ: tl.constexpr):
        """The E4M3 code (exponent bias BIAS, 3 mantissa bits) of each fp32 v, |v| <= the format's maximum."""
        bits = v.to(tl.uint32, bitcast=True)
        sign = bits >> 31
        mag = bits & 0x7FFFFFFF
        e = ((mag >> 23) & 0xFF).to(tl.int32) - 127  # unbiased fp32 exponent
        # normal: keep 3 of 23 mantissa bits, rounding to nearest even; a carry moves into the exponent
        normal = ((mag + 0x7FFFF + ((mag >> 20) & 1)) >> 20) - ((127 - BIAS) << 3)
        # subnormal: the 24-bit significand in units of 2^(-2-BIAS), shifted right with the same rounding
        sig = (mag & 0x7FFFFF) | 0x800000
        sh = tl.minimum(tl.maximum(21 - BIAS - e, 1), 31).to(tl.uint32)
        half = (tl.full(sig.shape, 1, tl.uint32) << (sh - 1))
        rest = sig & ((half << 1) - 1)
        sub = sig >> sh
        sub = sub + ((rest > half) | ((rest == half) & ((sub & 1) == 1))).to(tl.uint32)
        code = tl.where(e >= 1 - BIAS, normal, tl.where(e >= -127 + 1, sub, 0))
        if FNUZ:
            return tl.where(code == 0, 0, code | (sign << 7)).to(tl.uint8)  # FNUZ has no negative zero
        return (code | (sign << 7)).to(tl.uint8)

    @triton.jit
    def _quant_one_program(x_ptr, q_ptr, scale_ptr, n, FMAX: tl.constexpr, BIAS: tl.constexpr,
                           FNUZ: tl.constexpr, BLOCK: tl.constexpr):
        """The whole activation in one program's registers: one read, the max, the scale, the cast."""
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=0)
        scale = tl.maximum(amax * (1.0 / FMAX), 1e-12)
        v = tl.minimum(tl.maximum(tl.math.div_rn(x, scale), -FMAX), FMAX)
        tl.store(q_ptr + offs, _e4m3_bits(v, BIAS, FNUZ), mask=mask)
        tl.store(scale_ptr, scale)

    @triton.jit
    def _quant_rows(x_ptr, q_ptr, scale_ptr, cols, FMAX: tl.constexpr, BIAS: tl.constexpr, FNUZ: tl.constexpr,
                    BLOCK: tl.constexpr):
        """One program per row: its read, its max, its scale, its cast. No row waits for another."""
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        scale = tl.maximum(tl.max(tl.abs(x), axis=0) * (1.0 / FMAX), 1e-12)
        v = tl.minimum(tl.maximum(tl.math.div_rn(x, scale), -FMAX), FMAX)
        tl.store(q_ptr + row * cols + offs, _e4m3_bits(v, BIAS, FNUZ), mask=mask)
        tl.store(scale_ptr + row, scale)

    @triton.jit
    def _block_amax(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
        """Phase 1: each program writes the largest magnitude of its block."""
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        tl.store(part_ptr + tl.program_id(0), tl.max(tl.abs(x), axis=0))

    @triton.jit
    def _scale_cast(x_ptr, part_ptr, q_ptr, scale_ptr, n, n_parts, FMAX: tl.constexpr, BIAS: tl.constexpr,
                    FNUZ: tl.constexpr, BLOCK: tl.constexpr, PARTS: tl.constexpr):
        """Phase 2: each program reduces the partial maxima itself (a few hundred floats), then casts
        its block; program 0 stores the scale. No atomics, no zeroed buffer, the same bytes every run."""
        pid = tl.program_id(0)
        p = tl.arange(0, PARTS)
        amax = tl.max(tl.load(part_ptr + p, mask=p < n_parts, other=0.0), axis=0)
        scale = tl.maximum(amax * (1.0 / FMAX), 1e-12)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        v = tl.minimum(tl.maximum(tl.math.div_rn(x, scale), -FMAX), FMAX)
        tl.store(q_ptr + offs, _e4m3_bits(v, BIAS, FNUZ), mask=mask)
        tl.store(scale_ptr, scale, mask=pid == 0)

    @triton.jit
    def _touch(x_ptr):
        """A kernel that moves one value: what every kernel pays before it moves its own bytes."""
        tl.store(x_ptr, tl.load(x_ptr) + 1.0)


ONE_PROGRAM = 16384  # elements one program holds in registers: a whole activation up to batch 2 x 8192
QBLOCK = 4096  # elements per program in the two-phase path


def quant_launches(numel: int) -> int:
    """Triton launches `quantize_fused` makes for an activation of `numel` elements."""
    return 1 if numel <= ONE_PROGRAM else 2


def quantize_fused(t: torch.Tensor, q: torch.Tensor | None = None,
                   scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """`quantize` in one Triton launch when one program can hold the activation, else two: the block
    maxima, then every program finishes the reduction from them and casts its block. A grid-wide max
    needs every block read before any cast, so one launch over many programs would need a grid barrier."""
    x = t.contiguous()
    n = x.numel()
    q = torch.empty(x.shape, dtype=FP8, device=x.device) if q is None else q
    scale = torch.empty((), dtype=torch.float32, device=x.device) if scale is None else scale
    if _LEDGER:  # counted by construction: Triton launches are no ATen operations
        _LEDGER[-1].note_quant(n, x.element_size())
    if x.device.type == "meta":
        return q, scale
    if n <= ONE_PROGRAM:
        block = max(16, triton.next_power_of_2(n))
        _quant_one_program[(1,)](x, q.view(torch.uint8), scale, n, FMAX=FP8_MAX, BIAS=FP8_BIAS, FNUZ=FP8_FNUZ,
                                 BLOCK=block, num_warps=8 if block >= 4096 else 4)
    else:
        parts = triton.cdiv(n, QBLOCK)
        part = torch.empty(parts, dtype=torch.float32, device=x.device)
        _block_amax[(parts,)](x, part, n, BLOCK=QBLOCK)
        _scale_cast[(parts,)](x, part, q.view(torch.uint8), scale, n, parts, FMAX=FP8_MAX, BIAS=FP8_BIAS,
                              FNUZ=FP8_FNUZ, BLOCK=QBLOCK, PARTS=max(16, triton.next_power_of_2(parts)))
    return q, scale


def quantize_rows_fused(t: torch.Tensor, q: torch.Tensor | None = None,
                        scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """`quantize_rows` in one Triton launch, one program per row."""
    x = t.contiguous()
    cols = x.shape[-1]
    rows = x.numel() // cols
    q = torch.empty(x.shape, dtype=FP8, device=x.device) if q is None else q
    scale = torch.empty((rows, 1), dtype=torch.float32, device=x.device) if scale is None else scale
    if _LEDGER:
        _LEDGER[-1].note_rows(x.numel(), rows, x.element_size())
    if x.device.type == "meta":
        return q, scale
    block = max(16, triton.next_power_of_2(cols))
    _quant_rows[(rows,)](x, q.view(torch.uint8), scale, cols, FMAX=FP8_MAX, BIAS=FP8_BIAS, FNUZ=FP8_FNUZ,
                         BLOCK=block, num_warps=8 if block >= 4096 else 4)
    return q, scale


def make_layer(cfg: dict, dtype: torch.dtype, fp8: bool, rows: bool = False) -> dict:
    """Random weights stored [out, in] like nn.Linear, scaled 1/sqrt(in) to keep O(1) activations; fp8
    weights with one scale per tensor, or with `rows`, one per output channel."""
    h, d, q, kv, f = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["inter"]
    shapes = {"qkv": ((q + 2 * kv) * d, h), "o": (h, q * d), "gate_up": (2 * f, h), "down": (h, f)}
    layer = {"norm1": 1 + 0.1 * tutor_lab.rand(h, dtype=dtype), "norm2": 1 + 0.1 * tutor_lab.rand(h, dtype=dtype)}
    for name, (n_out, n_in) in shapes.items():
        w = tutor_lab.rand(n_out, n_in, dtype=dtype) * math.sqrt(3.0 / n_in)
        layer[name] = (quantize_rows(w) if rows else quantize(w)) if fp8 else w
    return layer


def dequant(w) -> torch.Tensor:
    """The float64 value of a weight (fp8 pair or plain tensor), for the reference."""
    if isinstance(w, tuple):
        return w[0].double() * w[1].double()
    return w.double()


# ---------------------------------------------------------------- one decode step
def linear(x: torch.Tensor, w, quant=quantize) -> torch.Tensor:
    if not isinstance(w, tuple):
        return x @ w.t()
    wq, sw = w
    xq, sx = quant(x)
    if x.device.type != "cpu":  # fp8 x fp8 on the tensor cores, bf16 out; wq.t() is column-major as required
        # per-tensor scales are scalars; per-row ones are [M, 1] for x and [1, N] for w (sw.t() of [N, 1])
        return torch._scaled_mm(xq, wq.t(), scale_a=sx, scale_b=sw.t() if sw.dim() else sw, out_dtype=x.dtype)
    return ((xq.float() * sx) @ (wq.float() * sw).t()).to(x.dtype)  # CPU: same numbers, slowly


def rmsnorm(x: torch.Tensor, g: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * g


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q: [B, kv_heads, group, d]; k, v: [B, kv_heads, ctx, d]. Every query head of a group
    reads the same K and V, so the cache is read once per sequence (GQA)."""
    # TODO 1: scaled dot-product attention of each query head over its group's ctx cached tokens,
    #         the softmax taken in float32, the result [B, kv_heads, group, d] in v's dtype. Use batched
    #         matmuls, so that each group's K and V are read once for all of its query heads.
    return torch.zeros_like(q)


def layer_step(x: torch.Tensor, w: dict, k: torch.Tensor, v: torch.Tensor, cfg: dict,
               quant=quantize) -> torch.Tensor:
    B, d, kvh = x.shape[0], cfg["head_dim"], cfg["kv_heads"]
    group = cfg["heads"] // kvh
    qkv = linear(rmsnorm(x, w["norm1"]), w["qkv"], quant)
    q = qkv[:, : cfg["heads"] * d].reshape(B, kvh, group, d)
    # The new token's own K and V (qkv[:, heads*d:]) would be appended to the cache; the
    # cache here already holds ctx tokens, which is what the step reads.
    a = attention(q, k, v).reshape(B, cfg["heads"] * d)
    x = x + linear(a, w["o"], quant)
    gu = linear(rmsnorm(x, w["norm2"]), w["gate_up"], quant)
    gate, up = gu[:, : cfg["inter"]], gu[:, cfg["inter"]:]
    return x + linear(torch.nn.functional.silu(gate) * up, w["down"], quant)


def decode_step(x, layers, caches, cfg, quant=quantize):
    for w, (k, v) in zip(layers, caches):
        x = layer_step(x, w, k, v, cfg, quant)
    return x


# ---------------------------------------------------------------- float64 reference
def reference(x, layers, caches, cfg, quant=None) -> torch.Tensor:
    """The same step in float64 with explicit loops over heads; fp8 activations (quant given) are rounded
    through the same quantizer so that only accumulation order differs."""
    def lin(t, w):
        if quant is not None:
            tq, st = quant(t)
            t = tq.double() * st.double()
        return t @ dequant(w).t()

    def norm(t, g):
        return t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + 1e-5) * g.double()

    d, group = cfg["head_dim"], cfg["heads"] // cfg["kv_heads"]
    x = x.double()
    for w, (k, v) in zip(layers, caches):
        qkv = lin(norm(x, w["norm1"]), w["qkv"])
        heads = []
        for h in range(cfg["heads"]):
            qh = qkv[:, h * d:(h + 1) * d]  # [B, d]
            kh, vh = k[:, h // group].double(), v[:, h // group].double()  # [B, ctx, d]
            s = torch.einsum("bd,bcd->bc", qh, kh) / math.sqrt(d)
            p = torch.exp(s - s.max(-1, keepdim=True).values)
            heads.append(torch.einsum("bc,bcd->bd", p / p.sum(-1, keepdim=True), vh))
        x = x + lin(torch.cat(heads, dim=1), w["o"])
        gu = lin(norm(x, w["norm2"]), w["gate_up"])
        g, u = gu[:, : cfg["inter"]], gu[:, cfg["inter"]:]
        x = x + lin(g * torch.sigmoid(g) * u, w["down"])
    return x


def make_inputs(cfg, batch, ctx, n_layers, dtype, fp8, rows=False):
    layers = [make_layer(cfg, dtype, fp8, rows) for _ in range(n_layers)]
    return tutor_lab.rand(batch, cfg["hidden"], dtype=dtype), layers, make_caches(cfg, batch, ctx, n_layers, dtype)


def make_caches(cfg, batch, ctx, n_layers, dtype):
    shape = (batch, cfg["kv_heads"], ctx, cfg["head_dim"])
    return [(tutor_lab.rand(*shape, dtype=dtype), tutor_lab.rand(*shape, dtype=dtype)) for _ in range(n_layers)]


def fp8_support() -> str | None:
    """None if fp8 GEMMs run here, else the reason they do not."""
    if tutor_lab.DEVICE == "cpu":
        return None  # the CPU path emulates them
    try:
        a, sa = quantize(torch.ones(16, 32, device="cuda", dtype=torch.bfloat16))
        torch._scaled_mm(a, a.t(), scale_a=sa, scale_b=sa, out_dtype=torch.bfloat16)
        r, sr = quantize_rows(torch.ones(16, 32, device="cuda", dtype=torch.bfloat16))
        torch._scaled_mm(r, r.t(), scale_a=sr, scale_b=sr.t(), out_dtype=torch.bfloat16)  # per-row scales
        return None
    except Exception as exc:  # no fp8 tensor cores (pre-Ada / pre-CDNA 3) or no kernel
        return f"torch._scaled_mm unavailable: {type(exc).__name__}: {str(exc)[:120]}"


def check_quantizer(args) -> None:
    """quantize_fused against quantize, bit for bit: the fp8 bytes and the fp32 scale. Sizes below and
    above ONE_PROGRAM, not multiples of a block, a wide dynamic range (e4m3 subnormals, saturation) and
    an all-zero tensor (the clamped scale)."""
    shapes = [(1, 1), (1, 7), (3, 37), (2, 8192), (5, 4100), (129, 1000)]
    if not args.quick and tutor_lab.DEVICE == "cuda":
        shapes += [(16, 8192), (256, 3584), (257, 8191)]
    for i, shape in enumerate(shapes):
        for dtype in (torch.bfloat16, torch.float32) if i % 2 else (torch.bfloat16,):
            x = tutor_lab.rand(*shape, dtype=torch.float32)
            x = x * torch.exp(6 * tutor_lab.rand(*shape, dtype=torch.float32))  # magnitudes over 2^17
            x = tutor_lab.guarded(x.to(dtype)) if i != 2 else tutor_lab.guarded(torch.zeros(shape, dtype=dtype, device=tutor_lab.DEVICE))
            want_q, want_s = quantize(x)
            q, s = tutor_lab.output(*shape, dtype=FP8, name="q"), tutor_lab.output(1, dtype=torch.float32, name="scale")
            quantize_fused(x, q, s.view(()))
            size = f"{shape[0]}x{shape[1]}_{str(dtype).split('.')[-1]}"
            tutor_lab.check(LAB, "quant_fused_bytes", size, q.view(torch.uint8), want_q.view(torch.uint8), args.seed)
            tutor_lab.check(LAB, "quant_fused_scale", size, s, want_s.reshape(1), args.seed)
            want_q, want_s = quantize_rows(x)
            q, s = tutor_lab.output(*shape, dtype=FP8, name="q"), tutor_lab.output(shape[0], 1, dtype=torch.float32, name="scale")
            quantize_rows_fused(x, q, s)
            tutor_lab.check(LAB, "quant_rows_bytes", size, q.view(torch.uint8), want_q.view(torch.uint8), args.seed)
            tutor_lab.check(LAB, "quant_rows_scale", size, s, want_s, args.seed)


def run_checks(args) -> None:
    cfg = TINY if (args.quick or tutor_lab.DEVICE == "cpu") else SHARD
    n_layers = 2
    cases = [(3, 37), (5, 129)] if cfg is TINY else [(3, 37), (16, 1000)]
    variants = [("fp32", torch.float32, False, 1e-4), ("bf16", torch.bfloat16, False, 3e-2)]
    reason = fp8_support()
    if reason is None:
        # e4m3 keeps 3 mantissa bits: one activation rounded to the neighbouring fp8 code (the
        # bf16 pipeline and the float64 reference see slightly different inputs) moves outputs
        # by a few percent. fp32 checks the layer math tightly; fp8 checks the scaling.
        variants.append(("fp8", torch.bfloat16, True, 0.15))
        variants.append(("fp8row", torch.bfloat16, True, 0.15))
    else:
        tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "fp8", "reason": reason})
    fused = reason is None and triton is not None
    if reason is None and triton is None:
        tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "fp8fused", "reason": "Triton is not installed"})
    if fused:
        check_quantizer(args)
    for name, dtype, fp8, tol in variants:
        rows = name == "fp8row"
        for batch, ctx in cases:
            x, layers, caches = make_inputs(cfg, batch, ctx, n_layers, dtype, fp8, rows)
            want = reference(x, layers, caches, cfg, (quantize_rows if rows else quantize) if fp8 else None)
            got = tutor_lab.poison(torch.empty_like(x))
            got.copy_(decode_step(x, layers, caches, cfg, quantize_rows if rows else quantize))
            scale = float(want.abs().max())
            size = f"b{batch}_ctx{ctx}_h{cfg['hidden']}"
            tutor_lab.check(LAB, name, size, got, want, args.seed, atol=tol * scale, rtol=tol)
            if fp8 and fused:  # the same bytes into the same GEMMs: the same step, exactly
                again = tutor_lab.poison(torch.empty_like(x))
                again.copy_(decode_step(x, layers, caches, cfg, quantize_rows_fused if rows else quantize_fused))
                tutor_lab.check(LAB, "fp8rowfused" if rows else "fp8fused", size, again, got, args.seed)
    check_memory_bound(cfg, n_layers, args.seed)


def check_memory_bound(cfg: dict, n_layers: int, seed: int) -> None:
    """predicted_ms against the bytes of the tensors themselves: the weights make_layer builds (bf16, and
    fp8 at one byte each) and the caches make_caches builds, at a random batch and context."""
    bw = 1e12  # any bandwidth: the prediction is bytes over it
    for fmt, w_bytes in (("bf16", 2), ("fp8", 1)):
        batch, ctx = int(torch.randint(1, 40, ())), int(torch.randint(1, 300, ()))
        layers = [make_layer(cfg, torch.bfloat16, fmt == "fp8") for _ in range(n_layers)]
        weights = sum((w[0] if isinstance(w, tuple) else w).numel() * w_bytes
                      for layer in layers for name, w in layer.items() if not name.startswith("norm"))
        cache = sum(t.numel() * t.element_size() for kv in make_caches(cfg, batch, ctx, n_layers, torch.bfloat16) for t in kv)
        want = torch.tensor([(weights + cache) / bw * 1e3], dtype=torch.float64)
        got = torch.tensor([predicted_ms(cfg, batch, ctx, n_layers, w_bytes, 2, bw)], dtype=torch.float64)
        tutor_lab.check(LAB, "memory_bound_ms", f"{fmt}_b{batch}_ctx{ctx}", got, want, seed, rtol=1e-12)


# ---------------------------------------------------------------- the kernels of one step
@dataclass(frozen=True)
class Kernel:
    name: str
    bytes: int  # every input and output tensor once
    flops: int  # the multiply-adds of a matmul, 2 per; 0 for element-wise work
    kind: str  # "torch" (one ATen operation) or "triton" (one launch)
    math: str  # the tensor-core format of a matmul ("bf16", "fp8"), else ""


NO_KERNEL = {"_unsafe_view", "view", "_reshape_alias", "alias", "detach", "empty", "empty_strided", "empty_like"}
_LEDGER: list["Ledger"] = []


class Ledger(TorchDispatchMode):
    """Records every kernel a function launches, by construction: each ATen operation that is not a view
    (or an allocation) is one kernel, and `quantize_fused` notes its own Triton launches. cuBLAS can add
    a split-K reduction kernel to a GEMM; that one is not counted."""

    def __init__(self):
        super().__init__()
        self.kernels: list[Kernel] = []

    def __enter__(self):
        _LEDGER.append(self)
        return super().__enter__()

    def __exit__(self, *exc):
        _LEDGER.remove(self)
        return super().__exit__(*exc)

    def note_quant(self, numel: int, item: int) -> None:
        if quant_launches(numel) == 1:
            self.kernels.append(Kernel("quant_one_program", numel * (item + 1) + 4, 0, "triton", ""))
        else:
            parts = -(-numel // QBLOCK)
            self.kernels.append(Kernel("block_amax", numel * item + 4 * parts, 0, "triton", ""))
            self.kernels.append(Kernel("scale_cast", numel * (item + 1) + 4 * parts + 4, 0, "triton", ""))

    def note_rows(self, numel: int, rows: int, item: int) -> None:
        self.kernels.append(Kernel("quant_rows", numel * (item + 1) + 4 * rows, 0, "triton", ""))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func._schema.name.split("::")[-1]
        if name in NO_KERNEL or any(r.alias_info for r in func._schema.returns):
            return out
        tensors = [t for t in tree_leaves((args, kwargs or {}, out)) if isinstance(t, torch.Tensor)]
        nbytes = sum(t.numel() * t.element_size() for t in tensors)
        flops, math_ = 0, ""
        if name in ("mm", "bmm", "_scaled_mm"):
            a, b = args[0], args[1]
            flops = 2 * a.numel() * b.shape[-1]  # (batch x) M x K times K x N
            math_ = "bf16"
            if name == "_scaled_mm":  # per-row scales ([M, 1], [1, N]) select another kernel than per-tensor ones
                scales = [(kwargs or {}).get(k, args[i] if len(args) > i else None) for i, k in ((2, "scale_a"), (3, "scale_b"))]
                math_ = "fp8row" if any(t is not None and t.numel() > 1 for t in scales) else "fp8"
        self.kernels.append(Kernel(name, nbytes, flops, "torch", math_))
        return out


def _meta_layer(cfg: dict, fp8: bool, rows: bool = False) -> dict:
    h, d, q, kv, f = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["inter"]
    shapes = {"qkv": ((q + 2 * kv) * d, h), "o": (h, q * d), "gate_up": (2 * f, h), "down": (h, f)}
    meta = dict(device="meta", dtype=torch.bfloat16)
    layer = {"norm1": torch.empty(h, **meta), "norm2": torch.empty(h, **meta)}
    for name, shape in shapes.items():
        w = torch.empty(shape, **meta)
        scale = torch.empty((shape[0], 1) if rows else (), device="meta")
        layer[name] = (w.to(FP8), scale) if fp8 else w
    return layer


def layer_kernels(cfg: dict, batch: int, ctx: int, fmt: str) -> list[Kernel]:
    """The kernels of one layer's decode step (fmt: one of FORMATS), traced on meta tensors:
    shapes only, no memory, no GPU, the same code path a GPU runs."""
    w = _meta_layer(cfg, fmt != "bf16", fmt == "fp8row")
    x = torch.empty(batch, cfg["hidden"], device="meta", dtype=torch.bfloat16)
    k = torch.empty(batch, cfg["kv_heads"], ctx, cfg["head_dim"], device="meta", dtype=torch.bfloat16)
    v = torch.empty_like(k)
    with torch.no_grad(), Ledger() as ledger:
        layer_step(x, w, k, v, cfg, QUANT[fmt])
    return ledger.kernels


# ---------------------------------------------------------------- predictions
def predicted_ms(cfg, batch, ctx, n_layers, w_bytes, kv_bytes, bw_bytes_s):
    """Memory-bound model: every weight byte and every cached K/V byte read once."""
    # TODO 2: the milliseconds n_layers take if a step does nothing but read, at bw_bytes_s, every weight
    #         of the four GEMMs (w_bytes each) and every cached K and V value (kv_bytes each) once.
    #         Count both from cfg: what shape has each of QKV, O, gate/up and down in one layer?
    return 0.0


GEMMS = ("mm", "_scaled_mm")  # the weight GEMMs (and attention's batched matmuls, "bmm", are not)


def calibrated_ms(kernels: list[Kernel], batch: int, bw: float, rates: dict, floor: float, graph: bool,
                  issue_s: float = 0.0) -> float:
    """The calibrated model, kernel by kernel. A weight GEMM takes its FLOPs at the rate the same GEMMs
    reach at M = batch, `rates[math, batch]` (FLOP/s, measured with their launches, replayed from a
    graph). Every other kernel takes its roofline time, the larger of its bytes at the copy bandwidth
    `bw` (bytes/s) and its matmul FLOPs at the M = 4,096 rate, plus `floor`, the time one of the step's
    own kernels takes when it has almost nothing to move (seconds). Replayed from a graph, the
    kernels run back to back: the step is the sum. Eager, the CPU issues the step's kernels in
    `issue_s` seconds, evenly, and the GPU starts kernel i no earlier than the CPU has issued it: a queue."""
    host = end = 0.0
    for k in kernels:
        if k.name in GEMMS:
            run = k.flops / rates[k.math, batch]
        else:
            work = max(k.bytes / bw, k.flops / rates[k.math, max(GEMM_M)] if k.flops else 0.0)
            run = work + floor
        if not graph:
            host += issue_s / len(kernels)
            end = max(host, end)
        end += run
    return end * 1e3


# ---------------------------------------------------------------- timing
def timed_graph(fn, reps: int = 30) -> float:
    """Median ms of one replay of fn captured in a CUDA graph: warmed up on a side stream first
    (allocations, kernel selection, Triton compiles), every input a static buffer fn closes over."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    ms = tutor_lab.median_ms(graph.replay, warmup=3, reps=reps)
    del graph
    return ms


def timed_eager(fn, reps: int = 30) -> float:
    """Median ms of fn called back to back: the host's issue time is part of an eager step, so the stream
    is not held while the host queues the runs."""
    return tutor_lab.median_ms(fn, warmup=3, reps=reps, queue_ahead=False)


def measure_floors(n: int = 256) -> dict:
    """The per-kernel floors, eager and replayed: n dependent kernels that move one value each, timed as
    a whole and divided by n. A PyTorch add (the dispatcher's cost) and a Triton launch (its launcher's)."""
    a = torch.zeros(1, device="cuda")

    def torch_chain():
        y = a
        for _ in range(n):
            y = y + 1.0
        return y

    def triton_chain():
        for _ in range(n):
            _touch[(1,)](a)

    floors = {}
    for kind, fn in (("torch", torch_chain), ("triton", triton_chain)):
        floors[kind, "eager"] = timed_eager(fn) / n * 1e-3
        floors[kind, "graph"] = timed_graph(fn) / n * 1e-3
    return floors


def measure_step_floors(formats: list[str], n_layers: int, layers_of) -> dict:
    """Per kernel, the graph replay of the step itself at a tiny hidden size (FLOOR_CFG, batch 1, 16
    cached tokens), where no kernel has anything to move: the floor of the step's own kernels, its
    reductions, casts and matmuls, rather than of a one-value add. Seconds per kernel, by format."""
    floors = {}
    for fmt in formats:
        x, caches = tutor_lab.rand(1, FLOOR_CFG["hidden"], dtype=torch.bfloat16), make_caches(FLOOR_CFG, 1, 16, n_layers, torch.bfloat16)
        layers = layers_of(FLOOR_CFG, fmt)
        kernels = layer_kernels(FLOOR_CFG, 1, 16, fmt) * n_layers
        ms = timed_graph(lambda: decode_step(x, layers, caches, FLOOR_CFG, QUANT[fmt]))
        floors[fmt] = ms * 1e-3 / len(kernels)
    return floors


def issue_ms(fn, reps: int = 30) -> float:
    """Median ms the CPU takes to issue one eager call of fn, timed on the host without waiting for the
    GPU (which runs behind; a step's few hundred kernels fit in the launch queue)."""
    import time
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return sorted(times)[len(times) // 2]


GEMM_M = (1, 16, 64, 256, 4096)  # the sweep's batches, and one prefill-sized M for the compute roof
FLOOR_CFG = dict(hidden=128, heads=8, kv_heads=1, head_dim=16, inter=64)  # the shard's shape, nothing to move


def layer_gemms(cfg: dict) -> list[tuple[str, int, int]]:
    """(name, N, K) of the four weight GEMMs of one layer's shard."""
    h, d, q, kv, f = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["inter"]
    return [("qkv", (q + 2 * kv) * d, h), ("o", h, q * d), ("gate_up", 2 * f, h), ("down", h, f)]


def bench_gemms(cfg: dict, layers: dict) -> dict:
    """The four GEMMs of one layer at M = each batch of the sweep (and 4096), bf16 and fp8 with
    activations quantized beforehand, replayed from a graph. Returns the rates by (format, M), FLOP/s."""
    rates, recs = {}, []
    for fmt in layers:
        w = layers[fmt]
        for m in sorted(GEMM_M, reverse=True):  # 4096 first: it is the roof of the others
            xs = {name: tutor_lab.rand(m, k, dtype=torch.bfloat16) for name, _, k in layer_gemms(cfg)}
            if fmt != "bf16":
                xq = {name: (quantize_rows if fmt == "fp8row" else quantize)(x) for name, x in xs.items()}

                def fn():
                    for name, wq in w.items():
                        torch._scaled_mm(xq[name][0], wq[0].t(), scale_a=xq[name][1],
                                         scale_b=wq[1].t() if wq[1].dim() else wq[1], out_dtype=torch.bfloat16)
            else:
                def fn():
                    for name, wt in w.items():
                        xs[name] @ wt.t()
            ms = timed_graph(fn)
            flops = sum(2 * m * n * k for _, n, k in layer_gemms(cfg))
            wb = 2 if fmt == "bf16" else 1
            nbytes = sum(n * k * wb + m * k * wb + m * n * 2 for _, n, k in layer_gemms(cfg))
            rate = rates[fmt, m] = flops / (ms * 1e-3)
            recs.append((m, {"event": "measure", "lab": LAB, "variant": f"gemm_{fmt}_m{m}", "metric": "gemm_rate",
                             "value": rate / 1e12, "unit": "TFLOP/s",
                             "ceiling": {"name": "the same GEMMs at M = 4096", "value": rates[fmt, max(GEMM_M)] / 1e12,
                                         "unit": "TFLOP/s"},
                             "bytes": nbytes, "flops": flops, "ms": ms}))
        for _, rec in sorted(recs, key=lambda r: r[0]):
            tutor_lab.emit(rec)
        recs.clear()
    return rates


GRID = [(1, 4096), (16, 4096), (64, 1024), (64, 4096), (64, 16384), (256, 4096)]
MODES = [("bf16", "eager"), ("bf16", "graph"), ("fp8", "graph"), ("fp8fused", "eager"), ("fp8fused", "graph"),
         ("fp8row", "graph")]


def count_profiled(fn) -> int | None:
    """The GPU kernels one eager call of fn launches, from the PyTorch profiler (None if it cannot)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:
        return None


def run_bench(args) -> None:
    cfg, n_layers = SHARD, args.layers
    bw = tutor_lab.copy_ceiling()["value"] * 1e9  # bytes/s, read + write counted, as the copy ceiling reports
    tutor_lab.emit({"event": "measure", "lab": LAB, "variant": "copy_bandwidth", "metric": "bandwidth", "value": bw / 1e9,
             "unit": "GB/s", "ceiling": {"name": "device-to-device copy", "value": bw / 1e9, "unit": "GB/s"}})
    reason = fp8_support()
    formats = ["bf16"] if reason is not None else list(FORMATS)
    if reason is not None:
        tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "fp8", "reason": reason})
    if triton is None:
        tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "fp8fused", "reason": "Triton is not installed"})
        formats = [f for f in formats if f not in ("fp8fused", "fp8row")]
        floors = None
    else:
        floors = measure_floors()
        for (kind, mode), sec in floors.items():
            other = floors[kind, "graph" if mode == "eager" else "eager"]
            tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"floor_{kind}_{mode}", "metric": "kernel_floor",
                     "value": sec * 1e6, "unit": "µs",
                     "ceiling": {"name": f"the same kernel {'replayed from a graph' if mode == 'eager' else 'eager'}",
                                 "value": other * 1e6, "unit": "µs"}})
    layers = {f: [make_layer(cfg, torch.bfloat16, f != "bf16", f == "fp8row") for _ in range(n_layers)]
              for f in formats if f != "fp8fused"}
    rates = bench_gemms(cfg, {f: {n: layers[f][0][n] for n, _, _ in layer_gemms(cfg)} for f in layers})
    step_floors = {}
    if floors is not None:
        step_floors = measure_step_floors(formats, n_layers, lambda c, f: [make_layer(c, torch.bfloat16, f != "bf16", f == "fp8row")
                                                                           for _ in range(n_layers)])
        for fmt, sec in step_floors.items():
            tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"floor_step_{fmt}", "metric": "kernel_floor",
                            "value": sec * 1e6, "unit": "µs",
                            "ceiling": {"name": "a one-value kernel, replayed from a graph",
                                        "value": floors["torch" if fmt in ("bf16", "fp8") else "triton", "graph"] * 1e6, "unit": "µs"}})
    quant = QUANT
    for batch, ctx in GRID:
        x = tutor_lab.rand(batch, cfg["hidden"], dtype=torch.bfloat16)
        caches = make_caches(cfg, batch, ctx, n_layers, torch.bfloat16)
        for fmt, mode in MODES:
            if fmt not in formats or floors is None:
                continue
            w = layers["fp8" if fmt == "fp8fused" else fmt]

            def step():
                return decode_step(x, w, caches, cfg, quant[fmt])
            variant = f"step_{fmt}_{mode}_b{batch}_ctx{ctx}"
            try:
                ms = timed_graph(step) if mode == "graph" else timed_eager(step)
            except RuntimeError as exc:  # a capture that fails is reported, not hidden behind an eager time
                tutor_lab.emit({"event": "skip", "lab": LAB, "variant": variant, "reason": str(exc)[:200]})
                continue
            kernels = layer_kernels(cfg, batch, ctx, fmt) * n_layers
            issue = 0.0
            if mode == "eager":
                issue = issue_ms(step)
                tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"issue_{fmt}_b{batch}_ctx{ctx}",
                                "metric": "host_issue_time", "value": issue, "unit": "ms",
                                "ceiling": {"name": "the eager step it issues", "value": ms, "unit": "ms"}})
            pred = calibrated_ms(kernels, batch, bw, rates, step_floors[fmt], graph=mode == "graph", issue_s=issue * 1e-3)
            memory_ms = predicted_ms(cfg, batch, ctx, n_layers, 2 if fmt == "bf16" else 1, 2, bw)
            tutor_lab.emit({"event": "measure", "lab": LAB, "variant": variant,
                            "metric": "step_time", "value": ms, "unit": "ms",
                            "ceiling": {"name": "predicted (calibrated model)", "value": pred, "unit": "ms"},
                            "bytes": sum(k.bytes for k in kernels), "flops": sum(k.flops for k in kernels), "ms": ms,
                            "note": f"memory-bound prediction {memory_ms:.4f} ms; {len(kernels)} kernels"})
        del x, caches
        torch.cuda.empty_cache()
    # Last, so that the profiler cannot disturb a timing: the kernels of one eager step at the first point.
    batch, ctx = GRID[0]
    x = tutor_lab.rand(batch, cfg["hidden"], dtype=torch.bfloat16)
    caches = make_caches(cfg, batch, ctx, n_layers, torch.bfloat16)
    for fmt in formats:
        w = layers["fp8" if fmt == "fp8fused" else fmt]
        got = count_profiled(lambda: decode_step(x, w, caches, cfg, quant[fmt]))
        built = len(layer_kernels(cfg, batch, ctx, fmt)) * n_layers
        if got is None:
            tutor_lab.emit({"event": "skip", "lab": LAB, "variant": f"kernels_{fmt}", "reason": "no CUDA profiler"})
            continue
        tutor_lab.emit({"event": "measure", "lab": LAB, "variant": f"kernels_{fmt}_b{batch}", "metric": "kernels",
                        "value": got, "unit": "kernel", "kind": "counter",
                        "ceiling": {"name": "kernels counted by construction", "value": built, "unit": "kernel"}})


FORMATS = ("bf16", "fp8", "fp8fused", "fp8row")  # fp8row: per-row scales, one fused launch per activation
QUANT = {"bf16": quantize, "fp8": quantize, "fp8fused": quantize_fused, "fp8row": quantize_rows_fused}


def main() -> int:
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument("--layers", type=int, default=8))
    with torch.no_grad():
        run_checks(args)
        if args.bench:
            if tutor_lab.DEVICE == "cpu":
                tutor_lab.emit({"event": "skip", "lab": LAB, "variant": "bench", "reason": "no GPU: timing needs one"})
            else:
                run_bench(args)
    return tutor_lab.finish(LAB)


if __name__ == "__main__":
    sys.exit(main())
