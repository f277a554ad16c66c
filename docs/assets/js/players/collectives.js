/* Player 9 model (B05): alpha-beta time and bus bandwidth of ring/tree collectives. Mirrors collectives.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.collectives, raw), v = c.values;
    var p = v.gpus, n = Math.pow(2, v.log2_bytes), alpha = v.alpha_us * 1e-6, bw = v.link_gbps * 1e9;
    var op = v.operation, algo = v.algorithm, note = "", factor, latency, transfer;
    if (algo === "tree" && op !== "all-reduce") { algo = "ring"; note = "tree is modelled for all-reduce only; ring shown"; }
    if (op === "all-reduce") {
      factor = 2 * (p - 1) / p;
      if (algo === "ring") { latency = 2 * (p - 1) * alpha; transfer = factor * n / bw; }
      else { latency = 2 * Math.ceil(Math.log2(p)) * alpha; transfer = 2 * n / bw; }
    } else { factor = (p - 1) / p; latency = (p - 1) * alpha; transfer = factor * n / bw; }
    var t = latency + transfer, algbw = t > 0 ? n / t : 0;
    return { inputs: v, clamped: c.clamped, algorithm_used: algo, note: note, bytes: n,
      latency_s: latency, transfer_s: transfer, time_s: t, algbw: algbw, busbw: algbw * factor,
      bus_factor: factor, latency_share: t > 0 ? latency / t : 0 };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).collectives = api;
})(typeof window !== "undefined" ? window : this);
