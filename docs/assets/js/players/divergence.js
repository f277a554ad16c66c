/* Player 6 model (A03/A05): SIMT efficiency of a branch for 32 and 64 lanes. Mirrors divergence.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function efficiency(pattern, k, p, a, b, threads, lanes) {
    var warps = Math.ceil(threads / lanes), useful = 0, issued = 0, mixed = 0, w, active;
    if (pattern === "random") {
      useful = threads * (p * a + (1 - p) * b);
      for (w = 0; w < warps; w++) {
        active = Math.min(lanes, threads - w * lanes);
        issued += lanes * (a * (1 - Math.pow(1 - p, active)) + b * (1 - Math.pow(p, active)));
        mixed += 1 - Math.pow(p, active) - Math.pow(1 - p, active);
      }
      return { efficiency: issued > 0 ? useful / issued : 1, mixed_warps: mixed, warps: warps };
    }
    for (w = 0; w < warps; w++) {
      var hasA = false, hasB = false;
      for (var i = w * lanes; i < Math.min((w + 1) * lanes, threads); i++) {
        var takeA = pattern === "threshold" ? i < k : i % k === 0;
        if (takeA) { hasA = true; useful += a; } else { hasB = true; useful += b; }
      }
      issued += lanes * ((hasA ? a : 0) + (hasB ? b : 0));
      if (hasA && hasB) mixed += 1;
    }
    return { efficiency: issued > 0 ? useful / issued : 1, mixed_warps: mixed, warps: warps };
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.divergence, raw), v = c.values;
    return { inputs: v, clamped: c.clamped,
      lanes32: efficiency(v.pattern, v.k, v.p, v.cost_a, v.cost_b, v.threads, 32),
      lanes64: efficiency(v.pattern, v.k, v.p, v.cost_a, v.cost_b, v.threads, 64) };
  }
  var api = { compute: compute, efficiency: efficiency };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).divergence = api;
})(typeof window !== "undefined" ? window : this);
