/* Player 5 model (A06/A07): GEMM tile intensity, residency and wave quantization. Mirrors gemm_tiling.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.gemm_tiling, raw), v = c.values;
    var d = P.devices[v.device], bm = v.bm, bn = v.bn, bk = v.bk, b = v.bytes_per_element;
    var intensity = 2 * bm * bn / ((bm + bn) * b);
    var smem = v.stages * (bm + bn) * bk * b;
    var acc = bm * bn / v.threads;
    var tiles = Math.ceil(v.m / bm) * Math.ceil(v.n / bn);
    var regfile = d.vendor === "nvidia" ? d.regs_per_unit : d.vgprs_per_simd_lane * d.lanes * d.simds_per_unit;
    var resident, limit;
    if (smem > d.shared_per_block_max) { resident = 0; limit = "shared memory (one tile does not fit)"; }
    else if (acc > d.max_regs_per_thread) { resident = 0; limit = "registers (accumulators exceed the per-thread limit)"; }
    else {
      var bySmem = Math.floor(d.shared_per_unit / smem), byRegs = Math.floor(regfile / (bm * bn));
      if (bySmem <= byRegs) { resident = bySmem; limit = "shared memory"; } else { resident = byRegs; limit = "registers"; }
    }
    var slots = resident * d.units;
    var waves = slots ? Math.ceil(tiles / slots) : 0;
    var flops = 2 * v.m * v.n * v.k, minBytes = (v.m * v.k + v.k * v.n + v.m * v.n) * b;
    return { inputs: v, clamped: c.clamped, tile_intensity: intensity, shared_bytes: smem,
      acc_registers: acc, tiles: tiles, resident_per_unit: resident, residency_limit: limit,
      units: d.units, waves: waves, wave_efficiency: slots ? tiles / (waves * slots) : 0,
      gemm_flops: flops, gemm_min_bytes: minBytes, gemm_intensity: flops / minBytes };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).gemm_tiling = api;
})(typeof window !== "undefined" ? window : this);
