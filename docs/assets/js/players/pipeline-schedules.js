/* Player 11 model (B07): GPipe / 1F1B / interleaved 1F1B timelines, bubble, in-flight activations.
   Mirrors tutor_build/models/pipeline.py (simulate) and players.pipeline_schedules. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  function deviceOrder(schedule, S, M, s, v) {
    var order = [], m, k;
    if (schedule === "gpipe") {
      for (m = 0; m < M; m++) order.push(["F", m, 0]);
      for (m = 0; m < M; m++) order.push(["B", m, 0]);
      return order;
    }
    if (schedule === "1f1b") {
      var warm = Math.min(S - s - 1, M), f = warm, b = 0;
      for (m = 0; m < warm; m++) order.push(["F", m, 0]);
      while (f < M) { order.push(["F", f, 0]); f++; order.push(["B", b, 0]); b++; }
      for (m = b; m < M; m++) order.push(["B", m, 0]);
      return order;
    }
    var total = M * v;
    var fwd = function (k) { var g = Math.floor(k / (S * v)); return [g * S + (k % S), Math.floor((k % (S * v)) / S)]; };
    var bwd = function (k) { var x = fwd(k); return [x[0], v - 1 - x[1]]; };
    var warmup = (M === S) ? total : Math.min((S - s - 1) * 2 + (v - 1) * S, total), x;
    for (k = 0; k < warmup; k++) { x = fwd(k); order.push(["F", x[0], x[1]]); }
    for (var i = 0; i < total - warmup; i++) {
      x = fwd(warmup + i); order.push(["F", x[0], x[1]]);
      x = bwd(i); order.push(["B", x[0], x[1]]);
    }
    for (k = (warmup < total ? total - warmup : 0); k < total; k++) { x = bwd(k); order.push(["B", x[0], x[1]]); }
    return order;
  }
  function simulate(schedule, S, M, v, tf, tb) {
    var V = S * v, orders = [], s, dur = { F: tf / v, B: tb / v };
    var done = new Float64Array(2 * M * V).fill(-1); /* end time of (kind, micro, virtual stage); -1 = not yet */
    var key = function (kind, m, j) { return ((kind === "F" ? 0 : 1) * M + m) * V + j; };
    var ptr = [], free = [], slots = [], remaining = 0;
    for (s = 0; s < S; s++) { orders.push(deviceOrder(schedule, S, M, s, v)); ptr.push(0); free.push(0); slots.push([]); remaining += orders[s].length; }
    while (remaining) {
      var progressed = false;
      for (s = 0; s < S; s++) {
        while (ptr[s] < orders[s].length) {
          var o = orders[s][ptr[s]], kind = o[0], m = o[1], c = o[2], j = c * S + s, dk;
          if (kind === "F") dk = j > 0 ? key("F", m, j - 1) : -1;
          else dk = j < V - 1 ? key("B", m, j + 1) : key("F", m, j);
          if (dk >= 0 && done[dk] < 0) break;
          var ready = dk >= 0 ? done[dk] : 0;
          var start = Math.max(free[s], ready), end = start + dur[kind];
          done[key(kind, m, j)] = end;
          free[s] = end;
          slots[s].push({ kind: kind, micro: m, chunk: c, start: start, end: end });
          ptr[s]++; remaining--; progressed = true;
        }
      }
      if (!progressed) throw new Error("the device orders deadlock");
    }
    var makespan = Math.max.apply(null, free), busy = M * (tf + tb), peaks = [];
    for (s = 0; s < S; s++) {
      var alive = 0, peak = -Infinity;
      orders[s].forEach(function (o) { alive += o[0] === "F" ? 1 : -1; if (alive > peak) peak = alive; });
      peaks.push(peak);
    }
    var idle = makespan - busy;
    return { schedule: schedule, stages: S, micro_batches: M, virtual: v, t_f: tf, t_b: tb, makespan: makespan,
      bubble_fraction: idle / makespan, bubble_ratio: idle / busy, peak_in_flight: peaks,
      peak_stage_units: peaks.map(function (p) { return p / v; }), timeline: slots };
  }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.pipeline_schedules, raw), v = c.values;
    var notes = [], virtual = v.virtual, m = v.micro_batches;
    if (v.schedule !== "interleaved") virtual = 1;
    else if (m % v.stages) {
      m = Math.min(64 - 64 % v.stages, m + v.stages - m % v.stages);
      notes.push("interleaved needs M divisible by S: M = " + m);
    }
    var out = simulate(v.schedule, v.stages, m, virtual, v.t_f, v.t_b);
    out.inputs = v; out.clamped = c.clamped; out.notes = notes;
    return out;
  }
  var api = { compute: compute, simulate: simulate, deviceOrder: deviceOrder };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).pipeline_schedules = api;
})(typeof window !== "undefined" ? window : this);
