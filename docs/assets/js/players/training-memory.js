/* Player 10 model (B06/B08): training bytes per GPU by kind. Mirrors training_memory.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.training_memory, raw), v = c.values;
    var psi = v.params_b * 1e9, nd = v.dp, z = v.zero_stage;
    var weights = 2 * psi / (z >= 3 ? nd : 1), grads = 2 * psi / (z >= 2 ? nd : 1), optim = 12 * psi / (z >= 1 ? nd : 1);
    var sbh = v.seq * v.micro_batch * v.hidden;
    var perLayer = { none: sbh * (34 + 5 * v.heads * v.seq / v.hidden), selective: 34 * sbh, full: 2 * sbh };
    var acts = v.layers * perLayer[v.recompute], total = weights + grads + optim + acts;
    var hbm = P.devices[v.device].hbm_bytes;
    return { inputs: v, clamped: c.clamped, weights: weights, gradients: grads, optimizer: optim,
      activations: acts, total: total, hbm: hbm, fits: total <= hbm, hbm_share: total / hbm };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).training_memory = api;
})(typeof window !== "undefined" ? window : this);
