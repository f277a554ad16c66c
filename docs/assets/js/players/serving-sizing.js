/* Player 12 model (C02-C07): KV pool, SLO-capped tokens, binding bound, decode regime.
   Mirrors tutor_build/models/serving.py (size) and players.serving_sizing. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function matmulParams(m) {
    var layer = m.hidden * m.heads * m.head_dim + 2 * m.hidden * m.kv_heads * m.head_dim +
      m.heads * m.head_dim * m.hidden + 3 * m.hidden * m.intermediate;
    return m.layers * layer + m.vocab * m.hidden;
  }
  function kvPerToken(m, kvb) { return 2 * m.layers * m.kv_heads * m.head_dim * kvb; }
  function attnFlops(m) { return 4 * m.layers * m.heads * m.head_dim; }
  function attnRate(s) {
    var g = s.gpu, grp = Math.floor(s.model.heads / s.model.kv_heads);
    if (s.attn_roof === "tensor") return g.bf16;
    if (s.attn_roof === "cuda") return g.fp32;
    return g.bf16 * Math.min(1, grp / 64);
  }
  function size(s) {
    var m = s.model, g = s.gpu, mp = matmulParams(m), kvpt = kvPerToken(m, s.kv_bytes);
    var bw = s.bw_eff * g.hbm_bw * s.n_gpus, rate = (s.gemm_fp8 ? g.fp8 : g.bf16) * s.n_gpus;
    var arate = attnRate(s) * s.n_gpus, pr = s.prefill_ratio || 0;
    var nar = s.n_gpus > 1 ? 2 * m.layers : 0, link = (s.n_gpus > 1 && s.link_bw > 0);
    var arSeq = link ? nar * 2 * (s.n_gpus - 1) / s.n_gpus * m.hidden * 2 / s.link_bw : 0;
    var fixed = s.overhead_s + (link ? nar * (s.allreduce_latency_s || 0) : 0);
    var wbytes = m.params * s.weight_bytes;
    var pool = Math.max(0, Math.floor((s.mem_util * s.n_gpus * g.hbm_bytes - wbytes) / kvpt));
    var budget = s.slo_s - fixed, a = mp * s.weight_bytes / bw, gg = 2 * mp * (1 + pr) / rate;
    var perSeq = Math.max(s.context * kvpt / bw, s.context * attnFlops(m) / arate) + (1 + pr) * arSeq;
    var bslo;
    if (budget <= a) bslo = 0;
    else { var b = (budget - a) / perSeq; bslo = (gg * b <= a) ? b : budget / (gg + perSeq); }
    var capTok = Math.floor(bslo * s.context), bpool = pool / s.context, brun = Math.min(bslo, bpool);
    var tokens = brun * s.context, rows = brun * (1 + pr);
    var wr = mp * s.weight_bytes / bw, gc = 2 * mp * rows / rate;
    var ar = tokens * kvpt / bw, ac = tokens * attnFlops(m) / arate;
    var allr = (fixed - s.overhead_s) + rows * arSeq;
    var gemmS = Math.max(wr, gc), attnS = Math.max(ar, ac), total = gemmS + attnS + s.overhead_s + allr;
    var gemmBound = gc > wr ? "compute" : "memory", attnBound = ac > ar ? "compute" : "memory";
    var cshare = total ? ((gemmBound === "compute" ? gemmS : 0) + (attnBound === "compute" ? attnS : 0)) / total : 0;
    var ridge = (s.gemm_fp8 ? g.fp8 : g.bf16) / (s.bw_eff * g.hbm_bw);
    return { model: m.name, gpu: g.name, n_gpus: s.n_gpus, kv_bytes_per_token: kvpt, weight_bytes: wbytes,
      kv_pool_tokens: pool, slo_tokens: capTok, slo_batch: bslo, pool_batch: bpool,
      binds: capTok < pool ? "latency" : "capacity", running_tokens: Math.min(pool, capTok),
      step_ms: total * 1e3, weight_read_ms: wr * 1e3, gemm_compute_ms: gc * 1e3, attn_read_ms: ar * 1e3,
      attn_compute_ms: ac * 1e3, allreduce_ms: allr * 1e3, attention_ridge: attnRate(s) / (s.bw_eff * g.hbm_bw),
      gemm_bound: gemmBound, attn_bound: attnBound, regime: cshare > 0.5 ? "compute-bound" : "memory-bound",
      compute_bound_share: cshare, gemm_intensity: 2 * brun / s.weight_bytes,
      attention_intensity: attnFlops(m) / kvpt, ridge_point: ridge, gemm_crossover_batch: ridge * s.weight_bytes / 2,
      scenario: { n_gpus: s.n_gpus, weight_bytes: s.weight_bytes, kv_bytes: s.kv_bytes, context: s.context,
        slo_s: s.slo_s, mem_util: s.mem_util, bw_eff: s.bw_eff, gemm_fp8: s.gemm_fp8, overhead_s: s.overhead_s,
        attn_roof: s.attn_roof, link_bw: s.link_bw, allreduce_latency_s: s.allreduce_latency_s || 0,
        prefill_ratio: pr } };
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.serving_sizing, raw), v = c.values, d = P.devices[v.device];
    var s = { model: P.serving_models[v.model],
      gpu: { name: d.name, hbm_bytes: d.hbm_bytes, hbm_bw: d.hbm_bw, bf16: d.peak.bf16, fp8: d.peak.fp8,
        fp32: d.peak.fp32 },
      n_gpus: v.n_gpus, weight_bytes: v.weights === "bf16" ? 2 : 1, kv_bytes: v.kv === "fp8" ? 1 : 2,
      context: v.context, slo_s: v.slo_ms * 1e-3, mem_util: v.mem_util, bw_eff: v.bw_eff,
      gemm_fp8: v.weights === "fp8", overhead_s: 0, attn_roof: v.attention,
      link_bw: v.allreduce === "ring" ? d.link_bw : 0, allreduce_latency_s: 0, prefill_ratio: 0 };
    var out = size(s);
    out.inputs = v; out.clamped = c.clamped;
    out.note = out.kv_pool_tokens > 0 ? "" : "the weights do not fit in the HBM share: no KV pool";
    return out;
  }
  var api = { compute: compute, size: size };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).serving_sizing = api;
})(typeof window !== "undefined" ? window : this);
