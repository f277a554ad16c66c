"""Sizing model of an LLM decode (serving) node, pure Python, no dependencies.

One decode step of a dense decoder-only transformer under tensor parallelism over
``n_gpus`` GPUs does two kinds of work:

* the weight GEMMs (QKV, O, gate/up/down, LM head): every weight byte is read once
  per step, whatever the batch ``B``; they cost ``2 * matmul_params * B`` FLOP;
* attention over the KV cache: every cached token of every running sequence is read
  once per step (``kv_bytes_per_token`` bytes each) and costs
  ``4 * layers * heads * head_dim`` FLOP per cached token.

Each kind is timed with its own roofline, ``max(bytes / (eta * BW), FLOP / F)``, and
the two are added (they run as separate kernels, one after the other). ``eta`` is the
fraction of the datasheet HBM bandwidth the kernels achieve (one definition: achieved
bytes/s over the datasheet peak, never over a measured copy rate). The weight GEMMs run
on the tensor cores (bf16, or fp8 for W8A8). Attention runs on the roof ``attn_roof``
names: ``"tensor_tile"`` (tensor cores, the ``heads/kv_heads`` query rows of one KV head
filling that many of the 64 rows of a Hopper wgmma tile), ``"tensor"`` (tensor cores at
their full bf16 rate) or ``"cuda"`` (FP32 FMA on the CUDA cores).

Tensor parallelism divides bytes and FLOPs evenly over the GPUs. It adds two all-reduces
per layer of ``B * hidden`` bf16 activations; over a ring each GPU sends
``2 (N-1)/N`` of the message per all-reduce, so their bandwidth time grows with the
batch: ``2 L * 2 (N-1)/N * B * hidden * 2 / link_bw`` (charged only when ``link_bw`` is
given), plus a fixed ``allreduce_latency_s`` per all-reduce and a fixed ``overhead_s``
per step.

Chunked prefill: ``prefill_ratio`` prompt tokens ride along per decode token (a steady
state in which every request's prompt is prefilled in chunks inside decode steps). Each
prompt token costs the GEMM FLOP of a decode token and its all-reduce share; its
attention over its own prefix is neglected.

Capacity: HBM holds ``mem_util * n_gpus * hbm_bytes`` for weights plus KV; what the
weights leave, divided by ``kv_bytes_per_token``, is the KV pool in tokens.
Latency: the largest batch whose step fits in the SLO, times the context per
sequence, is the number of KV tokens the scheduler may keep running. The smaller of
the two binds.

Used by the claims test of module C07, by its text, and by the "Serving sizing"
concept player (through :meth:`Sizing.to_dict`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from tutor_build.models import hardware


@dataclass(frozen=True)
class ModelConfig:
    """A dense decoder-only transformer (Llama-style: SwiGLU MLP, GQA)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    params: float  # resident parameters (all weights, embeddings included)
    tied_embeddings: bool = False

    @property
    def group(self) -> int:
        """Query heads per KV head (GQA group size)."""
        return self.heads // self.kv_heads

    @property
    def layer_matmul_params(self) -> int:
        """Weights of one layer's GEMMs: Q, K, V, O and the three SwiGLU matrices."""
        q = self.hidden * self.heads * self.head_dim
        kv = 2 * self.hidden * self.kv_heads * self.head_dim
        o = self.heads * self.head_dim * self.hidden
        mlp = 3 * self.hidden * self.intermediate
        return q + kv + o + mlp

    @property
    def matmul_params(self) -> int:
        """Weights read by the GEMMs of one decode step (all layers plus the LM head).

        The input embedding is a gather of B rows, not a GEMM: it is not counted.
        """
        return self.layers * self.layer_matmul_params + self.vocab * self.hidden

    @property
    def counted_params(self) -> int:
        """All parameters from the config (GEMMs, embeddings, RMSNorm weights)."""
        norms = (2 * self.layers + 1) * self.hidden
        emb = 0 if self.tied_embeddings else self.vocab * self.hidden
        return self.matmul_params + emb + norms


@dataclass(frozen=True)
class GPU:
    name: str
    hbm_bytes: float  # bytes of HBM per GPU
    hbm_bw: float  # peak HBM bandwidth per GPU, bytes/s
    bf16_flops: float  # dense bf16 tensor FLOP/s per GPU
    fp8_flops: float  # dense fp8 tensor FLOP/s per GPU
    fp32_flops: float = 0.0  # FP32 FMA rate per GPU (CUDA cores on NVIDIA)
    link_bw: float = 0.0  # GPU-to-GPU link bandwidth per direction per GPU, bytes/s


# Llama 3 / 3.1 70B: meta-llama config.json and the Llama 3 paper (Table 3).
LLAMA3_70B = ModelConfig(
    name="Llama 3.1 70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
    intermediate=28672, vocab=128256, params=70_553_706_496,
)
# Llama 3.1 405B: meta-llama config.json and the Llama 3 paper (Table 3).
LLAMA3_405B = ModelConfig(
    name="Llama 3.1 405B", layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128,
    intermediate=53248, vocab=128256, params=405_853_388_800,
)
# Llama 3 / 3.1 8B: same sources.
LLAMA3_8B = ModelConfig(
    name="Llama 3.1 8B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
    intermediate=14336, vocab=128256, params=8_030_261_248,
)

def gpu_from_table(key: str) -> GPU:
    """A GPU from the course's cited hardware table (dense peak rates)."""
    return GPU(
        name=hardware.DEVICES[key]["name"],
        hbm_bytes=hardware.value(key, "hbm_bytes"),
        hbm_bw=hardware.value(key, "hbm_bw"),
        bf16_flops=hardware.peak(key, "bf16"),
        fp8_flops=hardware.peak(key, "fp8"),
        fp32_flops=hardware.peak(key, "fp32"),
        link_bw=hardware.value(key, "link_bw"),
    )


# NVIDIA H200 SXM datasheet: 141 GB HBM3e, 4.8 TB/s; 989.5 / 1,979 TFLOP/s dense bf16 / fp8.
H200 = gpu_from_table("h200")
# AMD Instinct MI300X datasheet: 192 GB HBM3, 5.3 TB/s; 1,307.4 / 2,614.9 TFLOP/s dense.
MI300X = gpu_from_table("mi300x")


@dataclass(frozen=True)
class Scenario:
    model: ModelConfig
    gpu: GPU
    n_gpus: int = 8
    weight_bytes: float = 2.0  # bytes per weight (2 bf16, 1 fp8)
    kv_bytes: float = 2.0  # bytes per cached K or V element
    context: int = 4096  # cached tokens per running sequence (mean)
    slo_s: float = 0.030  # time per output token = decode step time budget
    # vLLM's gpu_memory_utilization; its activations and buffers come out of it too and are not
    # subtracted here, so the KV pool is an upper bound
    mem_util: float = 0.90
    bw_eff: float = 1.0  # achieved / datasheet peak HBM bandwidth
    gemm_fp8: bool = False  # weight GEMMs run on fp8 tensor cores (W8A8)
    overhead_s: float = 0.0  # fixed per-step time (launch gaps), not counting all-reduces
    attn_roof: str = "tensor_tile"  # "tensor_tile" | "tensor" | "cuda": the compute roof of attention
    link_bw: float = 0.0  # per direction per GPU; 0 charges no all-reduce
    allreduce_latency_s: float = 0.0  # fixed time of one all-reduce
    prefill_ratio: float = 0.0  # prompt tokens prefilled (in chunks) per decode token

    def with_(self, **kw) -> "Scenario":
        return replace(self, **kw)


# ---------------------------------------------------------------- capacity


def kv_bytes_per_token(m: ModelConfig, kv_bytes: float) -> float:
    """K and V, every layer, every KV head: 2 * L * H_kv * d * bytes."""
    return 2 * m.layers * m.kv_heads * m.head_dim * kv_bytes


def weight_bytes_resident(s: Scenario) -> float:
    return s.model.params * s.weight_bytes


def kv_pool_tokens(s: Scenario) -> int:
    """Tokens of KV the HBM left over by the weights can hold."""
    free = s.mem_util * s.n_gpus * s.gpu.hbm_bytes - weight_bytes_resident(s)
    return max(0, math.floor(free / kv_bytes_per_token(s.model, s.kv_bytes)))


# ---------------------------------------------------------------- one decode step


def _bw(s: Scenario) -> float:
    return s.bw_eff * s.gpu.hbm_bw * s.n_gpus


def _gemm_flops_rate(s: Scenario) -> float:
    return (s.gpu.fp8_flops if s.gemm_fp8 else s.gpu.bf16_flops) * s.n_gpus


def attention_flops_per_token(m: ModelConfig) -> float:
    """q.k and p.v for one cached token, every layer, every query head."""
    return 4 * m.layers * m.heads * m.head_dim


WGMMA_M = 64  # rows of one Hopper wgmma tile (PTX ISA, wgmma.mma_async shapes m64nNk16)
ATTN_ROOFS = ("tensor_tile", "tensor", "cuda")


def attention_flops_rate_per_gpu(s: Scenario) -> float:
    """FLOP/s decode attention can reach on one GPU, on the roof the scenario names.

    Decode has one query token per sequence; the rows of an MMA tile are filled by the
    ``group`` query heads that share one KV head, so a 64-row wgmma tile runs at
    ``group / 64`` of the tensor-core rate.
    """
    g = s.gpu
    if s.attn_roof == "tensor":
        return g.bf16_flops
    if s.attn_roof == "tensor_tile":
        return g.bf16_flops * min(1.0, s.model.group / WGMMA_M)
    if s.attn_roof == "cuda":
        return g.fp32_flops
    raise ValueError(f"unknown attention roof {s.attn_roof!r}")


def attention_ridge(s: Scenario) -> float:
    """FLOP per KV byte at which attention turns compute-bound (achieved bandwidth)."""
    return attention_flops_rate_per_gpu(s) / (s.bw_eff * s.gpu.hbm_bw)


def allreduce_count(s: Scenario) -> int:
    """Two all-reduces per layer (after attention's O and the MLP's down projection)."""
    return 2 * s.model.layers if s.n_gpus > 1 else 0


def allreduce_per_seq_s(s: Scenario) -> float:
    """Ring all-reduce bandwidth time per decode sequence (per token in the step), seconds.

    Each all-reduce carries hidden bf16 values per token; a ring sends 2 (N-1)/N of the
    message from each GPU.
    """
    if s.n_gpus <= 1 or s.link_bw <= 0:
        return 0.0
    n = s.n_gpus
    return allreduce_count(s) * 2 * (n - 1) / n * s.model.hidden * 2 / s.link_bw


def fixed_step_s(s: Scenario) -> float:
    """Time of a step that does not grow with the batch (besides the weight read)."""
    lat = allreduce_count(s) * s.allreduce_latency_s if (s.link_bw > 0 and s.n_gpus > 1) else 0.0
    return s.overhead_s + lat


@dataclass(frozen=True)
class Step:
    batch: float
    weight_read_s: float
    gemm_compute_s: float
    attn_read_s: float
    attn_compute_s: float
    overhead_s: float
    allreduce_s: float = 0.0

    @property
    def gemm_s(self) -> float:
        return max(self.weight_read_s, self.gemm_compute_s)

    @property
    def attn_s(self) -> float:
        return max(self.attn_read_s, self.attn_compute_s)

    @property
    def total_s(self) -> float:
        return self.gemm_s + self.attn_s + self.overhead_s + self.allreduce_s

    @property
    def gemm_bound(self) -> str:
        return "compute" if self.gemm_compute_s > self.weight_read_s else "memory"

    @property
    def attn_bound(self) -> str:
        return "compute" if self.attn_compute_s > self.attn_read_s else "memory"

    @property
    def compute_bound_share(self) -> float:
        """Fraction of the step spent in kernels limited by FLOP/s, not bytes."""
        c = (self.gemm_s if self.gemm_bound == "compute" else 0.0) + (
            self.attn_s if self.attn_bound == "compute" else 0.0)
        return c / self.total_s if self.total_s else 0.0

    @property
    def regime(self) -> str:
        return "compute-bound" if self.compute_bound_share > 0.5 else "memory-bound"


def step(s: Scenario, batch: float) -> Step:
    m = s.model
    bw = _bw(s)
    tokens = batch * s.context
    rows = batch * (1 + s.prefill_ratio)  # decode tokens plus the prompt tokens riding along
    return Step(
        batch=batch,
        weight_read_s=m.matmul_params * s.weight_bytes / bw,
        gemm_compute_s=2 * m.matmul_params * rows / _gemm_flops_rate(s),
        attn_read_s=tokens * kv_bytes_per_token(m, s.kv_bytes) / bw,
        attn_compute_s=tokens * attention_flops_per_token(m) / (attention_flops_rate_per_gpu(s) * s.n_gpus),
        overhead_s=s.overhead_s,
        allreduce_s=fixed_step_s(s) - s.overhead_s + rows * allreduce_per_seq_s(s),
    )


def slo_batch(s: Scenario) -> float:
    """Largest (real-valued) batch whose step time equals the SLO.

    The step time is piecewise linear and increasing in B; invert each piece.
    """
    m = s.model
    bw = _bw(s)
    budget = s.slo_s - fixed_step_s(s)
    a = m.matmul_params * s.weight_bytes / bw  # weight read, s
    g = 2 * m.matmul_params * (1 + s.prefill_ratio) / _gemm_flops_rate(s)  # GEMM compute, s per sequence
    per_seq = max(
        s.context * kv_bytes_per_token(m, s.kv_bytes) / bw,
        s.context * attention_flops_per_token(m) / (attention_flops_rate_per_gpu(s) * s.n_gpus),
    ) + (1 + s.prefill_ratio) * allreduce_per_seq_s(s)
    if budget <= a:
        return 0.0
    b = (budget - a) / per_seq  # GEMMs still memory-bound
    if g * b <= a:
        return b
    return budget / (g + per_seq)  # GEMMs compute-bound


def slo_tokens(s: Scenario) -> int:
    """KV tokens the scheduler may keep running without breaking the SLO."""
    return math.floor(slo_batch(s) * s.context)


# ---------------------------------------------------------------- intensities


def gemm_intensity(s: Scenario, batch: float) -> float:
    """FLOP per weight byte of the weight GEMMs (activations neglected): 2B / b_w."""
    return 2 * batch / s.weight_bytes


def attention_intensity(m: ModelConfig, kv_bytes: float) -> float:
    """FLOP per KV byte of decode attention: 2 * (heads / kv_heads) / b_kv, any batch."""
    return attention_flops_per_token(m) / kv_bytes_per_token(m, kv_bytes)


def step_intensity(s: Scenario, batch: float) -> float:
    """FLOP per byte of the whole step (GEMMs and attention lumped together).

    A misleading number: it averages two kernels that sit on opposite sides of
    the ridge. Kept because comparing it with the bf16 ridge is the classic trap.
    """
    m = s.model
    flops = 2 * m.matmul_params * batch + batch * s.context * attention_flops_per_token(m)
    byts = m.matmul_params * s.weight_bytes + batch * s.context * kv_bytes_per_token(m, s.kv_bytes)
    return flops / byts


def ridge_point(s: Scenario, fp8: bool | None = None) -> float:
    """FLOP/byte where compute time equals memory time (achieved bandwidth)."""
    use_fp8 = s.gemm_fp8 if fp8 is None else fp8
    f = s.gpu.fp8_flops if use_fp8 else s.gpu.bf16_flops
    return f / (s.bw_eff * s.gpu.hbm_bw)


def gemm_crossover_batch(s: Scenario) -> float:
    """Batch at which the weight GEMMs turn compute-bound: ridge * b_w / 2."""
    return ridge_point(s) * s.weight_bytes / 2


def kv_quant_payoff_context(s: Scenario) -> float:
    """Context at which attention read time per sequence equals GEMM compute time.

    Below it, a step at the SLO is mostly GEMM compute and shrinking the KV
    cache buys little; above it, KV bytes dominate and KV quantization pays.
    """
    g = 2 * s.model.matmul_params / _gemm_flops_rate(s)
    per_token = kv_bytes_per_token(s.model, s.kv_bytes) / _bw(s)
    return g / per_token


# ---------------------------------------------------------------- summary


@dataclass(frozen=True)
class Sizing:
    scenario: Scenario
    kv_bytes_per_token: float
    weight_bytes: float
    kv_pool_tokens: int
    slo_tokens: int
    slo_batch: float
    pool_batch: float
    binds: str  # "latency" or "capacity"
    running_tokens: int
    step_at_cap: Step
    gemm_intensity: float
    attention_intensity: float
    ridge_point: float
    gemm_crossover_batch: float

    def to_dict(self) -> dict:
        st = self.step_at_cap
        return {
            "model": self.scenario.model.name,
            "gpu": self.scenario.gpu.name,
            "n_gpus": self.scenario.n_gpus,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "weight_bytes": self.weight_bytes,
            "kv_pool_tokens": self.kv_pool_tokens,
            "slo_tokens": self.slo_tokens,
            "slo_batch": self.slo_batch,
            "pool_batch": self.pool_batch,
            "binds": self.binds,
            "running_tokens": self.running_tokens,
            "step_ms": st.total_s * 1e3,
            "weight_read_ms": st.weight_read_s * 1e3,
            "gemm_compute_ms": st.gemm_compute_s * 1e3,
            "attn_read_ms": st.attn_read_s * 1e3,
            "attn_compute_ms": st.attn_compute_s * 1e3,
            "allreduce_ms": st.allreduce_s * 1e3,
            "attention_ridge": attention_ridge(self.scenario),
            "gemm_bound": st.gemm_bound,
            "attn_bound": st.attn_bound,
            "regime": st.regime,
            "compute_bound_share": st.compute_bound_share,
            "gemm_intensity": self.gemm_intensity,
            "attention_intensity": self.attention_intensity,
            "ridge_point": self.ridge_point,
            "gemm_crossover_batch": self.gemm_crossover_batch,
            "scenario": {k: v for k, v in asdict(self.scenario).items()
                         if k not in ("model", "gpu")},
        }


def size(s: Scenario) -> Sizing:
    pool = kv_pool_tokens(s)
    cap_tok = slo_tokens(s)
    b_slo = slo_batch(s)
    b_pool = pool / s.context
    binds = "latency" if cap_tok < pool else "capacity"
    b_run = min(b_slo, b_pool)
    return Sizing(
        scenario=s,
        kv_bytes_per_token=kv_bytes_per_token(s.model, s.kv_bytes),
        weight_bytes=weight_bytes_resident(s),
        kv_pool_tokens=pool,
        slo_tokens=cap_tok,
        slo_batch=b_slo,
        pool_batch=b_pool,
        binds=binds,
        running_tokens=min(pool, cap_tok),
        step_at_cap=step(s, b_run),
        gemm_intensity=gemm_intensity(s, b_run),
        attention_intensity=attention_intensity(s.model, s.kv_bytes),
        ridge_point=ridge_point(s),
        gemm_crossover_batch=gemm_crossover_batch(s),
    )


def bw_eff_where_latency_binds(s: Scenario) -> float:
    """Largest bandwidth efficiency at which the SLO cap is below the KV pool (bisection)."""
    lo, hi = 1e-4, 4.0
    if slo_tokens(s.with_(bw_eff=hi)) < kv_pool_tokens(s):
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if slo_tokens(s.with_(bw_eff=mid)) < kv_pool_tokens(s):
            lo = mid
        else:
            hi = mid
    return lo


def hbm_sweep_time(g: GPU) -> float:
    """Seconds to read a GPU's whole HBM once at peak bandwidth."""
    return g.hbm_bytes / g.hbm_bw


def context_where_binding_flips(s: Scenario, lo: int = 16, hi: int = 1 << 21) -> float | None:
    """Context (tokens per sequence) above which capacity, not latency, binds.

    ``None`` when latency binds at every context up to ``hi``.
    """
    def lat(c: float) -> bool:
        return slo_batch(s.with_(context=c)) * c < kv_pool_tokens(s)

    if lat(hi):
        return None
    if not lat(lo):
        return float(lo)
    a, b = float(lo), float(hi)
    for _ in range(200):
        mid = (a + b) / 2
        if lat(mid):
            a = mid
        else:
            b = mid
    return a


def context_for_slo_tokens(s: Scenario, target_tokens: float) -> float:
    """Context per sequence at which the SLO cap equals ``target_tokens`` (bisection)."""
    a, b = 1.0, float(1 << 22)
    for _ in range(200):
        mid = (a + b) / 2
        if slo_batch(s.with_(context=mid)) * mid < target_tokens:
            a = mid
        else:
            b = mid
    return a


# ---------------------------------------------------------------- beyond one operating point


def throughput_curve(s: Scenario, batches) -> list[tuple[float, float, float]]:
    """(batch, step time s, node output tokens/s) along the latency-throughput curve."""
    out = []
    for b in batches:
        t = step(s, b).total_s
        out.append((b, t, b / t))
    return out


def replicas_slo_batch(s: Scenario, replicas: int) -> float:
    """Sequences the node runs within the SLO when split into ``replicas`` independent
    tensor-parallel groups of ``n_gpus / replicas`` GPUs each (every group holds all weights)."""
    return replicas * slo_batch(s.with_(n_gpus=s.n_gpus // replicas))


def replicas_pool_tokens(s: Scenario, replicas: int) -> int:
    return replicas * kv_pool_tokens(s.with_(n_gpus=s.n_gpus // replicas))


def prefill_compute_s(s: Scenario, prompt_tokens: float) -> float:
    """GEMM compute time of prefilling one prompt alone on the node (a lower bound on TTFT)."""
    return 2 * s.model.matmul_params * prompt_tokens / _gemm_flops_rate(s)


def bw_eff_from_measured(achieved_bytes_per_s: float, g: GPU) -> float:
    """The one definition of bandwidth efficiency: achieved over the datasheet peak."""
    return achieved_bytes_per_s / g.hbm_bw


# The record whose bandwidth gives the module's measured efficiency: the paged KV read with a
# shuffled block table and vLLM's default 16-token blocks.
ETA_RECORD = "C07/kv_read/shuffled_b16/cuda"


# Search space of :func:`scenarios_reproducing`.
SEARCH_MODELS = (LLAMA3_8B, LLAMA3_70B, LLAMA3_405B)
SEARCH_GPUS = ("h100-sxm", "h200", "mi300x")
SEARCH_GPU_COUNTS = (1, 2, 4, 8)
SEARCH_FORMATS = ((2.0, 2.0, False), (1.0, 2.0, False), (2.0, 1.0, False), (1.0, 1.0, True),
                  (1.0, 2.0, True))  # (weight bytes, KV bytes, W8A8)
SEARCH_MEM_UTIL = tuple(round(0.80 + 0.01 * i, 2) for i in range(21))
SEARCH_BW_EFF = tuple(round(0.60 + 0.05 * i, 2) for i in range(9))


def scenarios_reproducing(pool: float, cap: float, tol: float = 0.02, context: int = 4096,
                          slo_s: float = 0.030, need: str = "both") -> list[Scenario]:
    """Every scenario of the search space whose KV pool and SLO cap are within ``tol`` of
    ``pool`` and ``cap`` (``need="pool"``: the pool alone)."""
    found = []
    for m in SEARCH_MODELS:
        for key in SEARCH_GPUS:
            g = gpu_from_table(key)
            for n in SEARCH_GPU_COUNTS:
                for wb, kb, w8a8 in SEARCH_FORMATS:
                    for u in SEARCH_MEM_UTIL:
                        s = Scenario(model=m, gpu=g, n_gpus=n, weight_bytes=wb, kv_bytes=kb,
                                     gemm_fp8=w8a8, context=context, slo_s=slo_s, mem_util=u)
                        p = kv_pool_tokens(s)
                        if abs(p - pool) > tol * pool:
                            continue
                        if need == "pool":
                            found.append(s)
                            continue
                        for e in SEARCH_BW_EFF:
                            se = s.with_(bw_eff=e)
                            if abs(slo_tokens(se) - cap) <= tol * cap:
                                found.append(se)
    return found


# The scenario the module is built on.
SCENARIO = Scenario(model=LLAMA3_70B, gpu=H200, n_gpus=8, weight_bytes=2.0, kv_bytes=2.0,
                    context=4096, slo_s=0.030, mem_util=0.90, bw_eff=1.0, gemm_fp8=False)
# The four formats of the module, on the same node:
# bf16 weights with an fp8 KV cache (the most common fp8 deployment),
SCENARIO_KV8 = SCENARIO.with_(kv_bytes=1.0)
# W8A8 weight GEMMs on fp8 tensor cores plus an fp8 KV cache,
SCENARIO_FP8 = SCENARIO.with_(weight_bytes=1.0, kv_bytes=1.0, gemm_fp8=True)
# weight-only fp8 (fp8 storage, bf16 tensor-core math) with a bf16 KV cache.
SCENARIO_WO8 = SCENARIO.with_(weight_bytes=1.0)
VARIANTS = {"bf16": SCENARIO, "kv8": SCENARIO_KV8, "w8a8": SCENARIO_FP8, "wo8": SCENARIO_WO8}


def with_node_costs(s: Scenario, bw_eff: float) -> Scenario:
    """The same scenario at a measured bandwidth efficiency, charging the ring all-reduces over
    the GPU's link bandwidth."""
    return s.with_(bw_eff=bw_eff, link_bw=s.gpu.link_bw)
