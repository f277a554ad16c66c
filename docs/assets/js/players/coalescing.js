/* Player 2 model (A02): sectors per warp request and shared-memory bank conflicts. Mirrors coalescing.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  var LANES = 32, SECTOR = 32, BANKS = 32, WORD = 4;
  function sectors(stride, elem) {
    var seen = {}, count = 0;
    for (var i = 0; i < LANES; i++) {
      var start = i * stride * elem;
      for (var s = Math.floor(start / SECTOR); s <= Math.floor((start + elem - 1) / SECTOR); s++) {
        if (!seen[s]) { seen[s] = true; count++; }
      }
    }
    return count;
  }
  function conflictDegree(tile, padding, elem) {
    var perBank = {}, pitch = (tile + padding) * elem, worst = 0;
    for (var i = 0; i < Math.min(LANES, tile); i++) {
      var start = i * pitch;
      for (var w = Math.floor(start / WORD); w <= Math.floor((start + elem - 1) / WORD); w++) {
        var b = w % BANKS, set = perBank[b] || (perBank[b] = {});
        if (!set[w]) { set[w] = true; set.n = (set.n || 0) + 1; if (set.n > worst) worst = set.n; }
      }
    }
    return worst;
  }
  /* For the drawing: the sectors [first, last] each lane touches, and each lane's shared-memory
     words with their banks (the same arithmetic as sectors and conflictDegree). */
  function laneSectors(stride, elem) {
    var out = [];
    for (var i = 0; i < LANES; i++) { var a = i * stride * elem; out.push([Math.floor(a / SECTOR), Math.floor((a + elem - 1) / SECTOR)]); }
    return out;
  }
  function bankAccess(tile, padding, elem) {
    var out = [], pitch = (tile + padding) * elem;
    for (var i = 0; i < Math.min(LANES, tile); i++) {
      var a = i * pitch;
      for (var w = Math.floor(a / WORD); w <= Math.floor((a + elem - 1) / WORD); w++) out.push({ lane: i, word: w, bank: w % BANKS });
    }
    return out;
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.coalescing, raw), v = c.values;
    var s = v.stride, b = v.bytes_per_element, sec = sectors(s, b);
    var asked = s === 0 ? b : LANES * b;
    var degree = conflictDegree(v.tile, v.padding, b);
    return { inputs: v, clamped: c.clamped, sectors: sec, ideal_sectors: Math.ceil(asked / SECTOR),
      bytes_requested: asked, bytes_moved: sec * SECTOR, efficiency: asked / (sec * SECTOR),
      conflict_degree: degree, shared_wavefronts: degree };
  }
  var api = { compute: compute, sectors: sectors, conflictDegree: conflictDegree, laneSectors: laneSectors, bankAccess: bankAccess };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).coalescing = api;
})(typeof window !== "undefined" ? window : this);
