/* Player 1 model (A01): where a vector add's wall-clock time goes. Mirrors where_time_goes.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.where_time_goes, raw), v = c.values;
    var n = Math.pow(2, v.log2_n), nbytes = n * v.bytes_per_element;
    var hbm = P.devices[v.device].hbm_bw;
    var context = v.context === "reuse" ? 0 : v.context_ms * 1e-3, alloc = 3 * v.alloc_us * 1e-6;
    /* pageable copies are staged through a pinned buffer: never faster than the link */
    var gbps = v.host_memory === "pinned" ? v.link_gbps : Math.min(v.pageable_gbps, v.link_gbps);
    var copies = 3 * nbytes / (gbps * 1e9);
    var kernel = v.launch_us * 1e-6 + 3 * nbytes / hbm;
    var total = context + alloc + copies + kernel;
    return { inputs: v, clamped: c.clamped, elements: n, bytes_moved: 3 * nbytes, copy_gbps: gbps,
      context_s: context, alloc_s: alloc, copies_s: copies, kernel_s: kernel, total_s: total,
      kernel_share: total > 0 ? kernel / total : 0 };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).where_time_goes = api;
})(typeof window !== "undefined" ? window : this);
