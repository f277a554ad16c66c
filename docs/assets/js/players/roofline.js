/* Player 4 model (A04): roofline, ridge point and a measured point. Mirrors roofline.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.roofline, raw), v = c.values;
    var d = P.devices[v.device], p = d.peak[v.precision], b = d.hbm_bw, i = v.intensity;
    var att = Math.min(p, i * b), ridge = p / b, meas = v.measured_tflops * 1e12;
    return { inputs: v, clamped: c.clamped, peak_flops: p, bandwidth: b, ridge: ridge,
      attainable_flops: att, bound: i < ridge ? "memory" : "compute",
      measured_fraction: meas > 0 ? meas / att : null, measured_above_roof: meas > att };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).roofline = api;
})(typeof window !== "undefined" ? window : this);
