/* Player 8 model (B03): HBM bytes of naive vs tiled attention. Mirrors attention_io.py. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function blockRows(d, sram, b) {
    var m = sram / b, x = Math.floor(-2 * d + Math.sqrt(4 * d * d + m));
    while (x > 0 && 4 * x * d + x * x > m) x -= 1;
    while (4 * (x + 1) * d + (x + 1) * (x + 1) <= m) x += 1;
    return Math.max(x, 0);
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.attention_io, raw), v = c.values;
    var n = Math.pow(2, v.log2_seq), d = v.head_dim, b = v.bytes_per_element, h = v.batch_heads;
    var naive = b * (4 * n * d + 4 * n * n) * h;
    var blk = Math.min(blockRows(d, v.sram_kib * 1024, b), n);
    if (blk < 1) return { inputs: v, clamped: c.clamped, seq: n, naive_bytes: naive, block: 0, query_blocks: 0,
      tiled_bytes: null, ratio: null, note: "the on-chip memory cannot hold one row of Q, K, V and O" };
    var tr = Math.ceil(n / blk), tiled = b * (2 * n * d + 2 * n * d * tr) * h;
    return { inputs: v, clamped: c.clamped, seq: n, naive_bytes: naive, block: blk, query_blocks: tr,
      tiled_bytes: tiled, ratio: naive / tiled, note: "" };
  }
  var api = { compute: compute };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).attention_io = api;
})(typeof window !== "undefined" ? window : this);
