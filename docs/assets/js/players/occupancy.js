/* Player 3 model (A03): occupancy on a Hopper SM and a CDNA 3 CU. Mirrors occupancy.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  var cd = function (a, b) { return Math.ceil(a / b); };
  var SUB_PARTITIONS = 4;  // SM sub-partitions of a Hopper SM (occupancy.py's SUB_PARTITIONS)
  function pick(limits) {
    var best = null;
    Object.keys(limits).forEach(function (k) { if (best === null || limits[k] < limits[best]) best = k; });
    return best;
  }
  function dead(reason, w, maxWarps, lanes) {
    return { blocks: 0, warps_per_block: w, warps: 0, max_warps: maxWarps, lanes: lanes, occupancy: 0,
      limit: reason + " (one block does not fit)", limits: {} };
  }
  function hopper(d, threads, registers, shared) {
    var lanes = d.lanes, w = cd(threads, lanes), maxWarps = d.max_warps_per_unit;
    if (registers > d.max_regs_per_thread) return dead("registers", w, maxWarps, lanes);
    if (shared > d.shared_per_block_max) return dead("shared memory", w, maxWarps, lanes);
    var regsPerWarp = cd(registers * lanes, d.reg_alloc_unit) * d.reg_alloc_unit;
    // registers come from the warp's own SM sub-partition (a quarter of the file): count per quarter, times 4
    var warpsByRegs = SUB_PARTITIONS * Math.floor(Math.floor(d.regs_per_unit / SUB_PARTITIONS) / regsPerWarp);
    var smemBlock = cd(Math.ceil(shared) + d.shared_reserved_per_block, d.shared_alloc_unit) * d.shared_alloc_unit;
    var limits = { "warps": Math.floor(maxWarps / w), "registers": Math.floor(warpsByRegs / w),
      "shared memory": Math.floor(d.shared_per_unit / smemBlock), "blocks": d.max_blocks_per_unit };
    var limit = pick(limits), n = limits[limit];
    return { blocks: n, warps_per_block: w, warps: n * w, max_warps: maxWarps, lanes: lanes,
      occupancy: n * w / maxWarps, limit: limit, limits: limits };
  }
  function cdna3(d, threads, registers, shared) {
    var lanes = d.lanes, w = cd(threads, lanes), slots = d.max_waves_per_simd, simds = d.simds_per_unit;
    var maxWaves = slots * simds;
    if (registers > d.max_regs_per_thread) return dead("registers", w, maxWaves, lanes);
    if (shared > d.shared_per_block_max) return dead("shared memory", w, maxWaves, lanes);
    var alloc = cd(registers, d.vgpr_alloc_unit) * d.vgpr_alloc_unit;
    var wavesByRegs = simds * Math.min(slots, Math.floor(d.vgprs_per_simd_lane / alloc));
    var limits = { "warps": Math.floor(maxWaves / w), "registers": Math.floor(wavesByRegs / w),
      "shared memory": shared > 0 ? Math.floor(d.shared_per_unit / shared) : maxWaves };
    var limit = pick(limits), n = limits[limit];
    return { blocks: n, warps_per_block: w, warps: n * w, max_warps: maxWaves, lanes: lanes,
      occupancy: n * w / maxWaves, limit: limit, limits: limits };
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.occupancy, raw), v = c.values;
    var shared = v.shared_kib * 1024;
    return { inputs: v, clamped: c.clamped,
      hopper: hopper(P.devices.h200, v.threads, v.registers, shared),
      cdna3: cdna3(P.devices.mi300x, v.threads, v.registers, shared) };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).occupancy = api;
})(typeof window !== "undefined" ? window : this);
