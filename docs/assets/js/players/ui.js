/* Concept players: builds labelled controls from the model's input spec, keeps the state in the
   URL hash, recomputes and renders on every change. No framework, no network. Drawing helpers
   are in chart.js (window.TutorChart). */
(function () {
  "use strict";
  var P = window.TutorPresets, M = window.TutorPlayers || {}, C = window.TutorChart;

  function si(x, unit) {
    if (x === null || x === undefined || typeof x !== "number" || !isFinite(x)) return "n/a";
    var a = Math.abs(x), pre = [[1e24, "Y"], [1e21, "Z"], [1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    if (a >= 1e27) return C.num(x) + " " + (unit || "");
    for (var i = 0; i < pre.length; i++) if (a >= pre[i][0]) return trim((x / pre[i][0]).toPrecision(4)) + " " + pre[i][1] + (unit || "");
    return (a !== 0 && a < 1e-3 ? C.num(x) : trim(x.toPrecision(4))) + (unit ? " " + unit : "");
  }
  function trim(s) { return s.indexOf(".") < 0 ? s : s.replace(/\.?0+$/, ""); }
  function secs(x) {
    if (typeof x !== "number" || !isFinite(x)) return "n/a";
    if (x === 0) return "0 s";
    if (x >= 1) return C.num(x, 4) + " s";
    if (x >= 1e-3) return trim((x * 1e3).toPrecision(4)) + " ms";
    if (x >= 1e-6) return trim((x * 1e6).toPrecision(4)) + " µs";
    return trim((x * 1e9).toPrecision(4)) + " ns";
  }
  /* 0.5 -> "50.0 %", 11.5 -> "1,150 %", never an exponent */
  function pct(x) {
    if (typeof x !== "number" || !isFinite(x)) return "n/a";
    var v = x * 100;
    if (v !== 0 && Math.abs(v) < 0.01) return "< 0.01 %";
    return (Math.abs(v) >= 1000 ? C.num(v) : v.toPrecision(3)) + " %";
  }
  function times(x) { return C.num(x) + "×"; }
  function bytes(x) { return si(x, "B"); }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
  function dev(k) { return P.devices[k] ? P.devices[k].name : k; }
  /* An fp value as the course writes it: -0 keeps its sign, NaN and infinities by name. */
  function fpv(x) {
    if (x === "NaN") return "NaN";
    if (x === "inf") return "+inf";
    if (x === "-inf") return "-inf";
    if (typeof x === "number" && Object.is(x, -0)) return "-0";
    return String(x);
  }
  function bin(k) { /* 2^k bytes, binary prefixes */
    var u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = Math.min(5, Math.floor(k / 10));
    return Math.pow(2, k - 10 * i) + " " + u[i];
  }
  function tickSi(v) { return si(v).replace(" ", ""); }

  var E = C.el, T = C.text;

  /* Horizontal bar (x, y, w, h) with a hover title. */
  function bar(g, x, y, w, h, cls, tip) {
    var r = E("rect", { x: +x.toFixed(1), y: +y.toFixed(1), width: Math.max(0, +w.toFixed(1)), height: h, "class": cls }, g);
    if (tip) C.title(r, tip);
    return r;
  }

  function valueLabel(g, xEnd, y, label, W) {
    var inside = xEnd + 6 + String(label).length * 7 > W;
    return T(g, inside ? xEnd - 4 : xEnd + 4, y, label, inside ? "tp-tick tp-on-bar" : "tp-tick", inside ? "end" : null);
  }

  /* ---------------------------------------------------------------- the twelve visuals */
  var V = {};

  V.where_time_goes = function (o, W) {
    var parts = [["context", o.context_s, "tp-c0"], ["allocations", o.alloc_s, "tp-c1"], ["copies", o.copies_s, "tp-c2"], ["kernel", o.kernel_s, "tp-c3"]];
    var s = C.svg(W, 300, "Where the time goes: share of the total and seconds per part on a log axis"), ml = 86, mr = 14;
    /* 1: the parts as shares of the whole run */
    var sx = C.lin(0, 1, 20, W - 24), x = 20;
    parts.forEach(function (p) { var w = sx(p[1] / o.total_s) - 20; bar(s, x, 10, w, 26, p[2], p[0] + ": " + pct(p[1] / o.total_s)); x += w; });
    C.axisX(s, sx, 36, [0, 0.25, 0.5, 0.75, 1], function (t) { return (t * 100) + " %"; }, "share of the program's wall-clock time");
    var y = 80 + C.legend(s, 10, 80, W - 20, parts.map(function (p) { return [p[0] + " " + pct(p[1] / o.total_s), p[2]]; }));
    /* 2: each part in seconds on a log axis, so that the kernel's sliver stays visible */
    var pos = parts.map(function (p) { return p[1]; }).filter(function (v) { return v > 0; });
    var lo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, pos)))), hi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, pos)) + 1e-9));
    if (hi / lo < 100) lo = hi / 100;
    var lx = C.log(lo, hi, ml, W - mr), y0 = y + 8;
    parts.forEach(function (p, i) {
      var yy = y0 + i * 24;
      T(s, ml - 6, yy + 14, p[0], "tp-tick", "end");
      if (p[1] > 0) bar(s, ml, yy + 2, lx(p[1]) - ml, 16, p[2], p[0] + ": " + secs(p[1]));
      valueLabel(s, p[1] > 0 ? lx(p[1]) : ml, yy + 14, p[1] > 0 ? secs(p[1]) : (p[0] === "context" ? "0 (reused)" : "0"), W);
    });
    var ya = y0 + 4 * 24 + 2;
    C.axisX(s, lx, ya, lx.ticks(Math.floor((W - ml) / 56)), secs, "time per part (log scale)", y0);
    C.fit(s, ya + 40);
    return s;
  };

  V.coalescing = function (o, W) {
    var v = o.inputs, m = M.coalescing, s = C.svg(W, 400, "Coalescing: the 32 lanes of a warp, the 32-byte sectors they touch, and the shared-memory banks of a column read");
    var ml = 10, mr = 10, lw = (W - ml - mr) / 32, lanes = m.laneSectors(v.stride, v.bytes_per_element);
    var top = C.wrap(s, ml, 14, "32 lanes of one warp: lane i loads element i × " + v.stride + " (" + v.bytes_per_element + " B each)", "tp-field", W - 20) - 15;
    s = C.el("g", { transform: "translate(0," + top + ")" }, s);
    [0, 8, 16, 24, 31].forEach(function (i) { T(s, ml + (i + 0.5) * lw, 32, i, "tp-tick", "middle"); });
    for (var i = 0; i < 32; i++) bar(s, ml + i * lw + 0.5, 36, lw - 1, 18, "tp-lane tp-c0", "lane " + i + ": sectors " + lanes[i][0] + "-" + lanes[i][1]);
    /* 128-byte lines that hold touched sectors; contiguous when the span is short */
    var touched = {}, lines = {}, list = [];
    lanes.forEach(function (r) { for (var q = r[0]; q <= r[1]; q++) { touched[q] = true; lines[Math.floor(q / 4)] = true; } });
    var keys = Object.keys(lines).map(Number).sort(function (a, b) { return a - b; });
    if (keys[keys.length - 1] - keys[0] < 8) { for (var L = keys[0]; L <= keys[keys.length - 1]; L++) list.push(L); } else list = keys;
    var gap = 4, lineW = (W - ml - mr - gap * (list.length - 1)) / list.length, sx = {}, ys = 104;
    list.forEach(function (L, j) {
      var x0 = ml + j * (lineW + gap);
      E("rect", { x: +x0.toFixed(1), y: ys - 2, width: +lineW.toFixed(1), height: 26, "class": "tp-line" }, s);
      for (var q = 0; q < 4; q++) {
        var id = L * 4 + q, sxq = x0 + q * lineW / 4;
        sx[id] = sxq + lineW / 8;
        bar(s, sxq + 0.5, ys, lineW / 4 - 1, 22, "tp-sector " + (touched[id] ? "tp-c2" : "tp-empty"), "sector " + id + " (bytes " + id * 32 + "-" + (id * 32 + 31) + ")" + (touched[id] ? ", moved" : ", not needed"));
      }
    });
    lanes.forEach(function (r, i) { E("line", { x1: +(ml + (i + 0.5) * lw).toFixed(1), y1: 54, x2: +sx[r[0]].toFixed(1), y2: ys - 2, "class": "tp-link" }, s); });
    var every = Math.max(1, Math.ceil(list.length * 64 / (W - ml - mr)));
    list.forEach(function (L, j) { if (j % every === 0) T(s, ml + j * (lineW + gap), ys + 38, C.num(L * 128) + " B", "tp-tick"); });
    var yt = ys + 56 + C.wrap(s, ml, ys + 56, "global memory: " + o.sectors + " sectors moved (" + o.bytes_moved + " B) for " + o.bytes_requested + " B asked", "tp-axis-title", W - 20) - 5;
    var y = yt + C.legend(s, ml, yt, W - 20, [["32-byte sector moved", "tp-c2"], ["sector not needed", "tp-empty"], ["128-byte line", "tp-line"]]);
    /* shared memory: which bank each lane's word falls in, stacked by conflict */
    var acc = m.bankAccess(v.tile, v.padding, v.bytes_per_element), byBank = {}, deg = o.conflict_degree;
    var y1 = y + 14, bl = 40, bw = (W - bl - mr) / 32, rowH = Math.max(5, Math.min(16, 160 / deg));
    y1 += C.wrap(s, ml, y1, "Shared memory: lane i reads tile[i][0] of a " + v.tile + " × " + (v.tile + v.padding) + " tile (row pitch " + (v.tile + v.padding) + ")", "tp-field", W - 20) + 4;
    acc.forEach(function (a) {
      var list2 = byBank[a.bank] || (byBank[a.bank] = []), k = list2.indexOf(a.word);
      if (k < 0) { list2.push(a.word); k = list2.length - 1; }
      var r = bar(s, bl + a.bank * bw + 0.5, y1 + k * rowH + 0.5, bw - 1, rowH - 1, "tp-bank tp-c" + (deg > 1 ? "3" : "0"), "lane " + a.lane + ": word " + a.word + ", bank " + a.bank + ", shared-memory pass " + (k + 1));
      r.setAttribute("data-lane", a.lane);
    });
    var sy = C.lin(0.5, deg + 0.5, y1, y1 + deg * rowH);
    C.axisY(s, sy, bl - 2, C.niceTicks(1, deg, Math.min(deg, 5)).filter(function (t) { return t >= 1 && t % 1 === 0; }), String, "pass");
    var bx = C.lin(-0.5, 31.5, bl, W - mr);
    C.axisX(s, bx, y1 + deg * rowH + 2, [0, 8, 16, 24, 31], String, "bank (of 32, 4-byte words)");
    C.fit(s.ownerSVGElement, top + y1 + deg * rowH + 44);
    return s.ownerSVGElement;
  };

  function launchProblem(r, d, v, unit) {
    if (r.blocks > 0) return "";
    var lim = r.limit.split(" (")[0];
    if (lim === "registers" && v.registers > d.max_regs_per_thread) return v.registers + " registers per thread exceed the " + unit + "'s limit of " + d.max_regs_per_thread;
    if (lim === "shared memory" && v.shared_kib * 1024 > d.shared_per_block_max) return v.shared_kib + " KiB of shared memory exceeds the most one block may use (" + C.num(d.shared_per_block_max / 1024) + " KiB)";
    if (lim === "registers") return "one block's registers (" + v.registers + " × " + v.threads + " threads, rounded to the allocation unit) exceed the " + unit + "'s register file";
    if (lim === "shared memory") return "one block's shared memory exceeds the " + unit + "'s";
    return "one block needs more " + lim + " than the " + unit + " has";
  }
  var OCC = [["hopper", "H100/H200 SM", "h200", "SM", { warps: "warp slots", registers: "registers", "shared memory": "shared memory", blocks: "block slots" }],
    ["cdna3", "MI300X CU", "mi300x", "CU", { warps: "wave slots", registers: "registers", "shared memory": "LDS" }]];

  V.occupancy = function (o, W) {
    var s = C.svg(W, 300, "Occupancy: resident blocks allowed by each resource on an H100/H200 SM and an MI300X CU"), ml = 104, mr = 40, y = 4, max = 1;
    OCC.forEach(function (g) { var L = o[g[0]].limits; Object.keys(L).forEach(function (k) { max = Math.max(max, L[k]); }); });
    max = Math.min(max, 64);  /* a resource that allows hundreds of blocks is drawn clipped */
    var sx = C.lin(0, max, ml, W - mr), top = y;
    OCC.forEach(function (g) {
      var r = o[g[0]], why = launchProblem(r, P.devices[g[2]], o.inputs, g[3]);
      T(s, 6, y + 14, g[1] + ": " + (why ? "cannot launch" : r.blocks + (r.blocks === 1 ? " block, " : " blocks, ") + pct(r.occupancy) + " occupancy"), "tp-field" + (why ? " tp-warn" : ""));
      y += 20;
      if (why) { y += C.wrap(s, 6, y + 14, why, "tp-tick tp-warn", W - 12) + 8; return; }
      Object.keys(r.limits).forEach(function (k) {
        T(s, ml - 6, y + 13, g[4][k] || k, "tp-tick", "end");
        bar(s, ml, y + 2, sx(Math.min(r.limits[k], max)) - ml, 14, k === r.limit ? "tp-c3" : "tp-c0", g[4][k] + ": " + r.limits[k] + " blocks");
        valueLabel(s, sx(Math.min(r.limits[k], max)), y + 13, r.limits[k] > max ? r.limits[k] + " (clipped)" : r.limits[k], W);
        y += 20;
      });
      y += 8;
    });
    C.axisX(s, sx, y, sx.ticks(Math.max(2, Math.floor((W - ml) / 50))), String, "resident blocks allowed");
    y += 44;
    y += C.legend(s, 6, y, W - 12, [["the limiting resource", "tp-c3"], ["other limits", "tp-c0"]]);
    C.fit(s, y + 4);
    return s;
  };

  V.roofline = function (o, W) {
    var H = Math.round(Math.min(340, Math.max(240, W * 0.55))), ml = 56, mr = 12, mt = 10, mb = 48;
    var s = C.svg(W, H + 60, "Roofline, log-log: attainable rate against arithmetic intensity, with the ridge point and this kernel");
    var pk = o.peak_flops / 1e12, ymax = Math.pow(10, Math.ceil(Math.log10(pk) + 0.05)), ymin = ymax / 1e5;
    var sx = C.log(0.01, 10000, ml, W - mr), sy = C.log(ymin, ymax, H - mb, mt);
    var nx = Math.max(3, Math.floor((W - ml) / 38));
    C.axisX(s, sx, H - mb, sx.ticks(nx), tickSi, "arithmetic intensity (FLOP/byte, log)", mt);
    C.axisY(s, sy, ml, sy.ticks(6), tickSi, "attainable (TFLOP/s, log)", W - mr);
    var pts = [];
    /* the roof starts where it enters the plotted range */
    var e0 = Math.max(-2, Math.log10(ymin * 1e12 / o.bandwidth));
    for (var e = e0; e <= 4.0001; e += 0.05) { var I = Math.pow(10, e), f = Math.min(pk, I * o.bandwidth / 1e12); pts.push(sx(I).toFixed(1) + "," + sy(f).toFixed(1)); }
    E("polyline", { points: pts.join(" "), "class": "tp-roof" }, s);
    var rx = sx(Math.min(1e4, o.ridge));
    E("line", { x1: rx, x2: rx, y1: sy(pk), y2: H - mb, "class": "tp-ridge" }, s);
    T(s, rx + 4 > W - 90 ? rx - 4 : rx + 4, sy(pk) + 16, "ridge " + si(o.ridge) + " FLOP/B", "tp-tick", rx + 4 > W - 90 ? "end" : null);
    T(s, W - mr - 2, sy(pk) - 4, "peak " + si(pk) + " TFLOP/s", "tp-tick", "end");
    var ix = sx(o.inputs.intensity), iy = sy(o.attainable_flops / 1e12);
    C.title(E("circle", { cx: +ix.toFixed(1), cy: +iy.toFixed(1), r: 5, "class": "tp-c0 tp-dot" }, s), "attainable " + si(o.attainable_flops, "FLOP/s"));
    var items = [["roof: min(peak, I × bandwidth)", "tp-roof-key", "line"], ["this intensity, " + o.bound + "-bound", "tp-c0", "dot"]];
    if (o.measured_fraction !== null) {
      var my = sy(Math.max(ymin, Math.min(ymax, o.inputs.measured_tflops)));
      C.title(E("circle", { cx: +ix.toFixed(1), cy: +my.toFixed(1), r: 5, "class": "tp-c3 tp-dot" }, s), "measured " + o.inputs.measured_tflops + " TFLOP/s");
      items.push(["measured", "tp-c3", "dot"]);
    }
    C.fit(s, H + 4 + C.legend(s, 8, H + 4, W - 16, items));
    return s;
  };

  V.gemm_tiling = function (o, W) {
    var s = C.svg(W, 150, "GEMM tiling: tiles over waves of SM/CU slots, with the idle slots of the last wave"), ml = 10, mr = 14;
    if (!o.resident_per_unit) {
      T(s, ml, 20, "No tile can be resident: " + o.residency_limit, "tp-field tp-warn");
      T(s, ml, 40, "shared memory per tile " + bytes(o.shared_bytes) + ", " + si(o.acc_registers) + " accumulators per thread", "tp-tick");
      C.fit(s, 50); return s;
    }
    var slots = o.resident_per_unit * o.units, sx = C.lin(0, o.waves, ml, W - mr), full = o.tiles / slots;
    T(s, ml, 14, o.tiles + " tiles on " + o.units + " units × " + o.resident_per_unit + " resident = " + slots + " slots per wave", "tp-field");
    bar(s, ml, 24, sx(full) - ml, 30, "tp-c0", o.tiles + " tiles");
    bar(s, sx(full), 24, sx(o.waves) - sx(full), 30, "tp-empty", "idle slots: " + (o.waves * slots - o.tiles));
    var ticks = o.waves <= 12 ? Array.apply(null, Array(o.waves + 1)).map(function (_, i) { return i; }) : C.niceTicks(0, o.waves, 6);
    ticks.forEach(function (t) { if (t > 0 && t < o.waves) E("line", { x1: sx(t), x2: sx(t), y1: 22, y2: 56, "class": "tp-wave" }, s); });
    C.axisX(s, sx, 56, ticks, String, "waves (" + o.waves + "; last wave " + pct(o.wave_efficiency * o.waves - (o.waves - 1)) + " full)");
    C.fit(s, 100 + C.legend(s, ml, 100, W - 20, [["tiles (work)", "tp-c0"], ["idle slots in the last wave", "tp-empty"]]));
    return s;
  };

  V.divergence = function (o, W) {
    var v = o.inputs, s = C.svg(W, 260, "Divergence: the path each of the first 64 threads takes, grouped into 32-lane warps and a 64-lane wavefront, and the SIMT efficiency of each"), ml = 10, mr = 10;
    var cw = (W - ml - mr) / 64, seed = 12345;
    function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
    function takesA(i) { return v.pattern === "threshold" ? i < v.k : v.pattern === "modulo" ? i % v.k === 0 : rnd() < v.p; }
    T(s, ml, 14, "Threads 0-63: the path each takes" + (v.pattern === "random" ? " (one random draw, p = " + v.p + ")" : ""), "tp-field");
    [0, 16, 32, 48, 63].forEach(function (i) { T(s, ml + (i + 0.5) * cw, 32, i, "tp-tick", "middle"); });
    var path = [];
    for (var i = 0; i < 64; i++) {
      var a = takesA(i), live = i < v.threads; path.push(live ? a : null);
      bar(s, ml + i * cw + 0.5, 36, cw - 1, 20, "tp-lane " + (!live ? "tp-empty" : a ? "tp-c0" : "tp-c1"), "thread " + i + (live ? (a ? ": path A" : ": path B") : ": no thread"));
    }
    function group(a, b, y, name) {
      var sub = path.slice(a, b).filter(function (x) { return x !== null; });
      var both = sub.indexOf(true) >= 0 && sub.indexOf(false) >= 0, x0 = ml + a * cw, x1 = ml + b * cw;
      E("path", { d: "M" + (x0 + 1).toFixed(1) + " " + y + "v6H" + (x1 - 1).toFixed(1) + "v-6", "class": "tp-bracket" }, s);
      T(s, (x0 + x1) / 2, y + 20, sub.length ? name + (both ? ": both paths" : ": one path") : name + ": no threads", "tp-tick" + (both ? " tp-warn" : ""), "middle");
    }
    group(0, 32, 60, "warp 0"); group(32, 64, 60, "warp 1"); group(0, 64, 90, "64-lane wavefront 0");
    var y = 122 + C.legend(s, ml, 122, W - 20, [["path A", "tp-c0"], ["path B", "tp-c1"], ["no thread", "tp-empty"]]);
    var bl = 70, sx = C.lin(0, 1, bl, W - 20), rows = [["32 lanes", o.lanes32], ["64 lanes", o.lanes64]];
    y += 10;
    rows.forEach(function (r, j) {
      T(s, bl - 6, y + j * 24 + 14, r[0], "tp-tick", "end");
      bar(s, bl, y + j * 24 + 3, sx(r[1].efficiency) - bl, 16, "tp-c2", r[0] + ": " + pct(r[1].efficiency));
    });
    C.axisX(s, sx, y + 50, [0, 0.25, 0.5, 0.75, 1], function (t) { return t * 100 + " %"; }, "SIMT efficiency, all " + v.threads + " threads", y);
    C.fit(s, y + 92);
    return s;
  };

  var FMT = [["e4m3", "OCP E4M3", 4, 7], ["e4m3fnuz", "E4M3FNUZ", 4, 8], ["e5m2", "OCP E5M2", 5, 15], ["e5m2fnuz", "E5M2FNUZ", 5, 16]];
  V.number_formats = function (o, W) {
    var b = o.inputs.bits, hex = "0x" + ("0" + b.toString(16)).slice(-2);
    var s = C.svg(W, 300, "The byte " + hex + " read in four fp8 formats: its sign, exponent and mantissa bits and the value"), ml = 8;
    var two = W >= 640, colW = two ? W / 2 : W;  /* two columns of formats on a wide screen */
    var cw = Math.min(34, Math.floor((colW - ml - 100) / 8)), vx = ml + 8 * cw + 12;
    FMT.forEach(function (f, i) {
      var g = E("g", { "class": "tp-format", "data-format": f[0], transform: two && i % 2 ? "translate(" + colW + ",0)" : null }, s);
      var y0 = 4 + (two ? Math.floor(i / 2) : i) * 70, eb = f[2];
      T(g, ml, y0 + 12, f[1] + " (exponent bias " + f[3] + ")", "tp-tick");
      var fields = [["sign", 7, 7, "tp-sign"], ["exponent", 6, 7 - eb, "tp-exp"], ["mantissa", 6 - eb, 0, "tp-man"]];
      fields.forEach(function (fd) {
        var x0 = ml + (7 - fd[1]) * cw, x1 = ml + (8 - fd[2]) * cw, val = (b >> fd[2]) & ((1 << (fd[1] - fd[2] + 1)) - 1);
        T(g, (x0 + x1) / 2, y0 + 30, fd[0], "tp-field", "middle");
        E("rect", { x: x0 + 1, y: y0 + 34, width: x1 - x0 - 2, height: 26, "class": "tp-fieldbox " + fd[3] }, g);
        for (var k = fd[1]; k >= fd[2]; k--) {
          var cx = ml + (7 - k) * cw;
          if (k !== fd[1]) E("line", { x1: cx, x2: cx, y1: y0 + 36, y2: y0 + 58, "class": "tp-bitsep" }, g);
          C.title(T(g, cx + cw / 2, y0 + 52, (b >> k) & 1, "tp-bit", "middle"), "bit " + k + " (" + fd[0] + " = " + val + ")");
        }
      });
      T(g, vx, y0 + 52, "= " + fpv(o.decoded[f[0]]), "tp-value");
    });
    C.fit(s, (two ? 2 : 4) * 70 + 4);
    return s;
  };

  V.attention_io = function (o, W) {
    var H = 240, ml = 66, mr = 12, mt = 8, mb = 46, pts = { naive: [], tiled: [] }, lo = Infinity, hi = 0;
    for (var k = 6; k <= 20; k++) {
      var r = M.attention_io.compute(Object.assign({}, o.inputs, { log2_seq: k }));
      pts.naive.push([k, r.naive_bytes]); lo = Math.min(lo, r.naive_bytes); hi = Math.max(hi, r.naive_bytes);
      if (r.tiled_bytes !== null) { pts.tiled.push([k, r.tiled_bytes]); lo = Math.min(lo, r.tiled_bytes); }
    }
    var s = C.svg(W, H + 60, "Attention IO: HBM bytes of naive and tiled attention against sequence length, log-log");
    var sx = C.lin(6, 20, ml, W - mr), sy = C.log(Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(hi))), H - mb, mt);
    var step = W < 420 ? 4 : 2, xt = [];
    for (k = 6; k <= 20; k += step) xt.push(k);
    C.axisX(s, sx, H - mb, xt, function (t) { var n = Math.pow(2, t); return n < 1024 ? String(n) : n < 1048576 ? n / 1024 + "K" : n / 1048576 + "M"; }, "sequence length N (tokens; K = 1024)", mt);
    C.axisY(s, sy, ml, sy.ticks(6), function (t) { return tickSi(t) + "B"; }, "HBM traffic (bytes, log)", W - mr);
    [["naive", "tp-s0"], ["tiled", "tp-s1"]].forEach(function (sr) {
      if (!pts[sr[0]].length) return;
      E("polyline", { points: pts[sr[0]].map(function (p) { return sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1); }).join(" "), "class": "tp-series " + sr[1] }, s);
    });
    var cx = sx(o.inputs.log2_seq);
    E("circle", { cx: cx, cy: sy(o.naive_bytes), r: 5, "class": "tp-dot tp-c0" }, s);
    if (o.tiled_bytes !== null) E("circle", { cx: cx, cy: sy(o.tiled_bytes), r: 5, "class": "tp-dot tp-c1" }, s);
    var items = [["naive (scores in HBM)", "tp-s0", "line"], ["tiled (scores on chip)", "tp-s1", "line"], ["N = " + o.seq, "tp-c0", "dot"]];
    if (o.tiled_bytes === null) items[1][0] = "tiled: cannot run";
    C.fit(s, H + 4 + C.legend(s, 8, H + 4, W - 16, items));
    return s;
  };

  V.collectives = function (o, W) {
    var H = 240, ml = 56, mr = 12, mt = 10, mb = 46, v = o.inputs, algos = v.operation === "all-reduce" ? ["ring", "tree"] : ["ring"];
    var s = C.svg(W, H + 60, "Collectives: bus bandwidth against message size for the ring" + (algos.length > 1 ? " and the tree" : "") + ", with this message marked");
    var ymax = v.link_gbps * 1.1, sx = C.lin(0, 36, ml, W - mr), sy = C.lin(0, ymax, H - mb, mt);
    var xt = W < 420 ? [0, 12, 24, 36] : [0, 6, 12, 18, 24, 30, 36];
    C.axisX(s, sx, H - mb, xt, bin, "message size (bytes, log)", mt);
    C.axisY(s, sy, ml, sy.ticks(5), function (t) { return C.num(t); }, "bus bandwidth (GB/s)", W - mr);
    E("line", { x1: ml, x2: W - mr, y1: sy(v.link_gbps), y2: sy(v.link_gbps), "class": "tp-ridge" }, s);
    algos.forEach(function (a, j) {
      var pts = [];
      for (var k = 0; k <= 36; k++) { var r = M.collectives.compute(Object.assign({}, v, { algorithm: a, log2_bytes: k })); pts.push(sx(k).toFixed(1) + "," + sy(r.busbw / 1e9).toFixed(1)); }
      E("polyline", { points: pts.join(" "), "class": "tp-series tp-s" + j }, s);
    });
    C.title(E("circle", { cx: sx(v.log2_bytes), cy: sy(o.busbw / 1e9), r: 5, "class": "tp-dot tp-c3" }, s), "this message: " + si(o.busbw, "B/s"));
    var items = algos.map(function (a, j) { return [a, "tp-s" + j, "line"]; }).concat([["this message (" + bin(v.log2_bytes) + ")", "tp-c3", "dot"], ["link " + C.num(v.link_gbps) + " GB/s", "tp-ridge-key", "line"]]);
    C.fit(s, H + 4 + C.legend(s, 8, H + 4, W - 16, items));
    return s;
  };

  V.training_memory = function (o, W) {
    var parts = [["weights", o.weights, "tp-c0"], ["gradients", o.gradients, "tp-c1"], ["optimizer state", o.optimizer, "tp-c2"], ["activations", o.activations, "tp-c4"]];
    var s = C.svg(W, 200, "Training memory per GPU: bytes by kind against the GPU's HBM"), ml = 12, mr = 16;
    var max = Math.max(o.total, o.hbm) * 1.06, unit = max >= 2e13 ? [1e12, "TB"] : [1e9, "GB"];
    var sx = C.lin(0, max / unit[0], ml, W - mr), x = ml, y = 30;
    parts.forEach(function (p) { var w = sx(p[1] / unit[0]) - ml; bar(s, x, y, w, 30, p[2], p[0] + ": " + bytes(p[1])); x += w; });
    var hx = sx(o.hbm / unit[0]);
    E("line", { x1: hx, x2: hx, y1: y - 8, y2: y + 38, "class": "tp-cap" }, s);
    var ht = dev(o.inputs.device).replace("NVIDIA ", "").replace("AMD ", "") + " HBM " + bytes(o.hbm), right = hx > W / 2;
    T(s, right ? hx - 4 : hx + 4, y - 12, ht, "tp-tick", right ? "end" : null);
    C.axisX(s, sx, y + 38, sx.ticks(Math.max(2, Math.floor(W / 80))), function (t) { return C.num(t); }, "bytes per GPU (" + unit[1] + ")", y - 4);
    var ly = y + 84;
    if (!o.fits) { T(s, ml, ly + 2, "total " + bytes(o.total) + ": over by " + times(o.hbm_share) + " the HBM", "tp-field tp-warn"); ly += 14; }
    C.fit(s, ly + C.legend(s, ml, ly, W - 20, parts.map(function (p) { return [p[0] + " " + bytes(p[1]), p[2]]; })) + 4);
    return s;
  };

  V.pipeline_schedules = function (o, W) {
    var S = o.timeline.length, rowH = Math.max(14, Math.min(24, Math.floor(300 / S))), ml = 62, mr = 12, mt = 22;
    var s = C.svg(W, S * rowH + 100, "Pipeline timeline, " + o.schedule + ": one row per stage, forward and backward micro-batches over time");
    var sx = C.lin(0, o.makespan, ml, W - mr), H = mt + S * rowH, inter = o.virtual > 1;
    T(s, 6, 14, "Rows: stages; numbers: micro-batches", "tp-field");
    E("rect", { x: ml, y: mt, width: W - mr - ml, height: S * rowH, "class": "tp-idle" }, s);
    o.timeline.forEach(function (slots, st) {
      var y = mt + st * rowH, d = {};
      T(s, ml - 6, y + rowH / 2 + 4, "stage " + (st + 1), "tp-tick tp-stage", "end");
      slots.forEach(function (sl) { var k = sl.kind + (inter ? sl.chunk % 2 : 0); (d[k] = d[k] || []).push(sl); });
      Object.keys(d).forEach(function (k) {
        var cls = (k[0] === "F" ? "tp-c0" : "tp-c1") + (k[1] === "1" ? " tp-alt" : "");
        /* back-to-back slots narrower than a few pixels merge into one run: thousands of sub-pixel
           rectangles cost time and show nothing more */
        var runs = [];
        d[k].forEach(function (sl) {
          var a = sx(sl.start), b = sx(sl.end), r = runs[runs.length - 1];
          if (r && a - r[1] < 0.5 && b - a < 3) r[1] = b; else runs.push([a, b]);
        });
        var p = E("path", { d: runs.map(function (r) { var w = Math.max(0.5, r[1] - r[0] - 1); return "M" + r[0].toFixed(1) + " " + (y + 1) + "h" + w.toFixed(1) + "v" + (rowH - 2) + "h" + (-w).toFixed(1) + "z"; }).join(""), "class": cls }, s);
        C.title(p, "stage " + (st + 1) + (k[0] === "F" ? " forward" : " backward") + (inter ? ", chunk " + (Number(k[1]) + 1) + (o.virtual > 2 ? " (and every other)" : "") : ""));
        if (runs.length < d[k].length) return;  /* merged: too narrow for numbers */
        d[k].forEach(function (sl) {
          var w = sx(sl.end) - sx(sl.start), lab = String(sl.micro + 1);
          if (w >= lab.length * 6.5 + 0.5 && rowH >= 14) T(s, (sx(sl.start) + sx(sl.end)) / 2 - 0.5, y + rowH / 2 + 4, lab, "tp-mb " + (k[0] === "F" ? "tp-on-c0" : "tp-on-c1"), "middle");
        });
      });
    });
    C.axisX(s, sx, H, sx.ticks(Math.max(3, Math.floor((W - ml) / 60))), function (t) { return C.num(t); }, "time (t_f = " + o.t_f + ", t_b = " + o.t_b + ")");
    var items = [["forward", "tp-c0"], ["backward", "tp-c1"], ["idle (bubble)", "tp-idle"]];
    if (inter) items.splice(2, 0, ["alternate chunks lighter", "tp-c0 tp-alt"]);
    C.fit(s, H + 44 + C.legend(s, 8, H + 44, W - 16, items));
    return s;
  };

  V.serving_sizing = function (o, W) {
    var s = C.svg(W, 200, "Serving sizing: tokens the KV pool holds against tokens the latency SLO allows, with the binding one marked"), ml = 78, mr = 16;
    var pool = o.kv_pool_tokens, cap = o.slo_tokens, lo = Math.min(pool, cap), hi = Math.max(pool, cap);
    var clip = lo > 0 && hi > 1.6 * lo, max = clip ? 1.5 * lo : Math.max(1, hi) * 1.06;
    var sx = C.lin(0, max, ml, W - mr), y = 8, rows = [["KV pool", pool, "capacity"], ["SLO cap", cap, "latency"]];
    rows.forEach(function (r, j) {
      var yy = y + j * 30, over = r[1] > max, w = sx(Math.min(r[1], max)) - ml;
      T(s, ml - 6, yy + 16, r[0], "tp-tick", "end");
      bar(s, ml, yy + 4, w, 18, o.binds === r[2] ? "tp-c3" : "tp-c0", r[0] + ": " + C.num(r[1]) + " tokens");
      if (over) {
        E("path", { d: "M" + (ml + w - 8) + " " + (yy + 2) + "l6 11l-6 11", "class": "tp-clip" }, s);
        T(s, ml + w - 12, yy + 17, "over by " + times(r[1] / lo), "tp-tick tp-on-bar", "end");
      } else valueLabel(s, ml + w, yy + 17, si(r[1]), W);
    });
    var ya = y + 62;
    C.axisX(s, sx, ya, sx.ticks(Math.max(2, Math.floor((W - ml) / 70))), function (t) { return si(t); }, "tokens in flight (KV-cache entries)", y);
    C.fit(s, ya + 42 + C.legend(s, 8, ya + 42, W - 16, [["the one that binds: " + o.binds, "tp-c3"], ["the other bound", "tp-c0"]]) + 4);
    return s;
  };

  /* ---------------------------------------------------------------- text of each output */
  function occLine(t, r, unit, why) {
    if (why) return "<li><strong>" + t + ": the block cannot launch</strong>: " + esc(why) + ".</li>";
    return "<li><strong>" + t + ": " + pct(r.occupancy) + "</strong>, " + r.blocks + " blocks × " + r.warps_per_block + " " + unit +
      " = " + r.warps + " of " + r.max_warps + " (" + r.lanes + " lanes); limited by <strong>" + esc(r.limit) + "</strong> (blocks allowed by " +
      Object.keys(r.limits).map(function (k) { return k + " " + r.limits[k]; }).join(", ") + ")</li>";
  }
  var R = {
    where_time_goes: function (o) {
      var v = o.inputs;
      return "<p><strong>Kernel share: " + pct(o.kernel_share) + "</strong> of " + secs(o.total_s) + " for " + si(o.elements) + " elements (" +
        bytes(o.bytes_moved) + " moved). Copies from " + v.host_memory + " memory at " + C.num(o.copy_gbps) + " GB/s; context " +
        (v.context === "reuse" ? "reused (no creation cost)" : "created (" + secs(o.context_s) + ")") + ".</p>";
    },
    coalescing: function (o) {
      return "<p><strong>" + o.sectors + " sectors per request</strong> (ideal " + o.ideal_sectors + "), load efficiency " + pct(o.efficiency) +
        ": " + o.bytes_requested + " B asked, " + o.bytes_moved + " B moved. <strong>Bank conflict degree " + o.conflict_degree +
        "</strong>: the column read takes " + o.shared_wavefronts + " shared-memory pass" + (o.shared_wavefronts === 1 ? "" : "es") +
        " (Nsight Compute counts them as shared-memory wavefronts, not AMD's 64-lane wavefronts), " + pct(1 / o.conflict_degree) + " of the shared bandwidth.</p>";
    },
    occupancy: function (o) {
      return "<ul>" + OCC.map(function (g) { return occLine(g[1], o[g[0]], g[0] === "hopper" ? "warps" : "wavefronts", launchProblem(o[g[0]], P.devices[g[2]], o.inputs, g[3])); }).join("") + "</ul>";
    },
    roofline: function (o) {
      var h = "<p><strong>Attainable " + si(o.attainable_flops, "FLOP/s") + "</strong> (" + o.bound + "-bound); ridge point " + si(o.ridge) +
        " FLOP/byte; peak " + si(o.peak_flops, "FLOP/s") + ", " + si(o.bandwidth, "B/s") + ".";
      if (o.measured_fraction !== null) h += " Measured point: " + pct(o.measured_fraction) + " of the roof" + (o.measured_above_roof ? " (above the roof: check the byte or FLOP count)" : "") + ".";
      return h + "</p>";
    },
    gemm_tiling: function (o) {
      return "<p><strong>Tile intensity " + si(o.tile_intensity) + " FLOP/byte</strong>; shared/LDS " + bytes(o.shared_bytes) + " per block; " +
        si(o.acc_registers) + " accumulator registers per thread. <strong>" + o.tiles + " tiles</strong>, " + o.resident_per_unit + " per SM/CU (" +
        esc(o.residency_limit) + ") on " + o.units + " units: <strong>" + o.waves + " wave(s), " + pct(o.wave_efficiency) +
        " of the slots used</strong>. Whole GEMM: " + si(o.gemm_intensity) + " FLOP/byte at best.</p>";
    },
    divergence: function (o) {
      return "<p><strong>SIMT efficiency: " + pct(o.lanes32.efficiency) + " with 32 lanes, " + pct(o.lanes64.efficiency) + " with 64 lanes</strong>; warps running both paths: " +
        si(o.lanes32.mixed_warps) + " of " + o.lanes32.warps + " (32) and " + si(o.lanes64.mixed_warps) + " of " + o.lanes64.warps + " (64).</p>";
    },
    number_formats: function (o) {
      var n = { e4m3: "OCP E4M3", e4m3fnuz: "E4M3FNUZ", e5m2: "OCP E5M2", e5m2fnuz: "E5M2FNUZ" }, b = o.inputs.bits;
      var rows = Object.keys(n).map(function (k) {
        return "<tr><th scope='row'>" + n[k] + "</th><td>" + esc(fpv(o.decoded[k])) + "</td><td>0x" + ("0" + o.encoded[k].code.toString(16)).slice(-2) +
          " = " + esc(fpv(o.encoded[k].value)) + "</td></tr>";
      }).join("");
      return "<p>Byte <code>" + ("00000000" + b.toString(2)).slice(-8) + "</code> (0x" + ("0" + b.toString(16)).slice(-2) + "); " + esc(String(o.inputs.value)) +
        " in bf16: <strong>" + esc(fpv(o.bf16)) + "</strong>, in fp16: <strong>" + esc(fpv(o.fp16)) + "</strong></p>" +
        "<table class='tp-table'><thead><tr><th scope='col'>format</th><th scope='col'>the byte</th><th scope='col'>" + esc(String(o.inputs.value)) +
        " encoded</th></tr></thead><tbody>" + rows + "</tbody></table>";
    },
    attention_io: function (o) {
      return "<p><strong>Naive " + bytes(o.naive_bytes) + ", tiled " + (o.tiled_bytes === null ? "cannot run" : bytes(o.tiled_bytes)) + "</strong>" +
        (o.ratio === null ? "" : " (" + si(o.ratio) + "× less)") + " at N = " + C.num(o.seq) + "; block " + o.block + " rows, " + o.query_blocks + " query blocks." +
        (o.note ? " " + esc(o.note) + "." : "") + "</p>";
    },
    collectives: function (o) {
      return "<p><strong>" + secs(o.time_s) + "</strong> (latency " + secs(o.latency_s) + ", transfer " + secs(o.transfer_s) + "), algorithm bandwidth " +
        si(o.algbw, "B/s") + ", <strong>bus bandwidth " + si(o.busbw, "B/s") + "</strong> (" + o.algorithm_used + (o.note ? "; " + esc(o.note) : "") + ").</p>";
    },
    training_memory: function (o) {
      return "<p><strong>" + bytes(o.total) + " per GPU</strong>, " + (o.fits ? pct(o.hbm_share) + " of the " + bytes(o.hbm) + " HBM: fits" :
        "<strong>" + times(o.hbm_share) + " the GPU's " + bytes(o.hbm) + " of HBM: does not fit</strong>") + ".</p>";
    },
    pipeline_schedules: function (o) {
      return "<p><strong>Bubble " + pct(o.bubble_fraction) + "</strong> of the makespan " + si(o.makespan) + " (idle/compute " + si(o.bubble_ratio) +
        "); peak micro-batch activations in flight per stage: <strong>" + o.peak_stage_units.map(function (x) { return si(x); }).join(", ") + "</strong>." +
        (o.notes.length ? " " + esc(o.notes.join(" ")) + "." : "") + "</p>";
    },
    serving_sizing: function (o) {
      var batch = Math.min(o.slo_batch, o.pool_batch), tps = o.step_ms > 0 ? batch / (o.step_ms * 1e-3) : 0;
      if (!(o.kv_pool_tokens > 0)) return "<p><strong>No batch fits</strong>: " + esc(o.note) + ".</p>";
      return "<p><strong>Batch " + C.num(batch) + " sequences</strong> of " + C.num(o.inputs.context) + " tokens, <strong>" + C.num(tps) +
        " output tokens/s</strong> (one token per sequence every " + si(o.step_ms) + " ms step). KV pool " + si(o.kv_pool_tokens) +
        " tokens, SLO cap " + si(o.slo_tokens) + " tokens: <strong>" + o.binds + " binds</strong>. Decode is <strong>" + o.regime +
        "</strong> (GEMMs " + o.gemm_bound + "-bound, attention " + o.attn_bound + "-bound).</p>";
    }
  };

  /* Presets: real hardware and models; sources are cited on each player's page. */
  var PRESETS = {
    where_time_goes: [["H200, 4 MiB fp32 vectors", { device: "h200", log2_n: 20 }], ["same, pinned memory, warm context", { device: "h200", log2_n: 20, host_memory: "pinned", context: "reuse" }], ["MI300X, 1 GiB fp32 vectors", { device: "mi300x", log2_n: 28 }]],
    coalescing: [["transpose read, naive", { stride: 32, tile: 32, padding: 0 }], ["tile[32][33]", { stride: 1, tile: 32, padding: 1 }]],
    occupancy: [["256 threads, 32 registers", { threads: 256, registers: 32, shared_kib: 0 }], ["GEMM-like: 128 threads, 128 registers, 48 KiB", { threads: 128, registers: 128, shared_kib: 48 }]],
    roofline: [["H200 bf16", { device: "h200", precision: "bf16" }], ["H100 SXM fp8", { device: "h100-sxm", precision: "fp8" }], ["MI300X bf16", { device: "mi300x", precision: "bf16" }], ["vector add fp32 (1/12 FLOP/B)", { precision: "fp32", intensity: 0.0833 }]],
    gemm_tiling: [["H200, 128x128x32 bf16", { device: "h200", bm: 128, bn: 128, bk: 32, bytes_per_element: 2 }], ["MI300X, 256x128x64 bf16", { device: "mi300x", bm: 256, bn: 128, bk: 64, stages: 1 }]],
    divergence: [["odd/even lanes", { pattern: "modulo", k: 2 }], ["boundary at 48", { pattern: "threshold", k: 48 }], ["random 1%", { pattern: "random", p: 0.01 }]],
    number_formats: [["0x38 (0_0111_000)", { bits: 56 }], ["0x80", { bits: 128 }], ["max OCP E4M3", { bits: 126 }]],
    attention_io: [["H100/H200 SM (227 KiB)", { sram_kib: 227 }], ["MI300X CU LDS (64 KiB)", { sram_kib: 64 }]],
    collectives: [["8x H200 NVLink", { gpus: 8, link_gbps: 450 }], ["8x MI300X Infinity Fabric (one peer link)", { gpus: 8, link_gbps: 64 }]],
    training_memory: Object.keys(P.training_models).map(function (k) {
      var m = P.training_models[k];
      return [m.name, { params_b: m.params / 1e9, layers: m.layers, hidden: m.hidden, heads: m.heads }];
    }),
    pipeline_schedules: [["GPipe S=4 M=8", { schedule: "gpipe", stages: 4, micro_batches: 8 }], ["1F1B S=4 M=8", { schedule: "1f1b", stages: 4, micro_batches: 8 }], ["interleaved S=4 M=8 v=2", { schedule: "interleaved", stages: 4, micro_batches: 8, virtual: 2 }]],
    serving_sizing: [["Llama 3.1 70B, 8x H200, bf16", { model: "llama3-70b", device: "h200", weights: "bf16", kv: "bf16" }], ["same, fp8", { model: "llama3-70b", device: "h200", weights: "fp8", kv: "fp8" }], ["Llama 3.1 70B, 8x MI300X", { model: "llama3-70b", device: "mi300x" }]]
  };

  function readHash() {
    var h = location.hash.replace(/^#/, ""), out = {};
    if (!h) return out;
    new URLSearchParams(h).forEach(function (v, k) { out[k] = v; });
    return out;
  }

  function setup(root) {
    var name = root.getAttribute("data-player"), spec = P.inputs[name], model = M[name];
    if (!spec || !model) return;
    var uid = "tp-" + name + "-", form = document.createElement("form");
    form.className = "tp-controls"; form.setAttribute("aria-label", "controls");
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    var controls = {}, sliders = [];
    Object.keys(spec).forEach(function (k) {
      var s = spec[k], wrap = document.createElement("div"), label = document.createElement("label"), el;
      wrap.className = "tp-field"; label.htmlFor = uid + k; label.textContent = s.label || k;
      if (s.kind === "choice") {
        el = document.createElement("select");
        s.choices.forEach(function (c) { var o = document.createElement("option"); o.value = String(c); o.textContent = (k === "device" || k === "model") ? (k === "device" ? dev(c) : (P.serving_models[c] || {}).name || c) : String(c); el.appendChild(o); });
      } else {
        el = document.createElement("input"); el.type = "number"; el.min = s.min; el.max = s.max;
        el.step = s.kind === "int" ? "1" : "any"; el.inputMode = "decimal";
      }
      el.id = uid + k; el.name = k; el.setAttribute("data-control", k);
      wrap.appendChild(label);
      if (s.kind !== "choice" && C.wantsSlider(s)) {
        var pair = document.createElement("div"), sl = C.slider(el, s, uid + k + "-slider", s.label || k, function () { update(); });
        pair.className = "tp-pair"; pair.appendChild(sl.node); pair.appendChild(el); wrap.appendChild(pair); wrap.classList.add("tp-has-slider");
        sliders.push(sl);
      } else wrap.appendChild(el);
      form.appendChild(wrap); controls[k] = el;
    });
    var bitBoxes = [];
    if (name === "number_formats") {
      var fs = document.createElement("fieldset"), lg = document.createElement("legend");
      fs.className = "tp-bits"; lg.textContent = "Bits of the byte: bit 7 is the sign in every format; then exponent, then mantissa"; fs.appendChild(lg);
      for (var b = 7; b >= 0; b--) {
        var l = document.createElement("label"), cb = document.createElement("input");
        cb.type = "checkbox"; cb.id = uid + "bit" + b; cb.setAttribute("data-bit", b);
        l.htmlFor = cb.id; l.textContent = b === 7 ? "7 sign" : String(b);
        l.insertBefore(cb, l.firstChild); if (b === 7) l.className = "tp-bit-sign";
        fs.appendChild(l); bitBoxes.push(cb);
      }
      form.appendChild(fs);
    }
    var presetSel = null;
    if (PRESETS[name]) {
      var pw = document.createElement("div"), pl = document.createElement("label");
      pw.className = "tp-field"; presetSel = document.createElement("select"); presetSel.id = uid + "preset";
      pl.htmlFor = presetSel.id; pl.textContent = "Preset";
      var o0 = document.createElement("option"); o0.value = ""; o0.textContent = "(choose)"; presetSel.appendChild(o0);
      PRESETS[name].forEach(function (p, i) { var o = document.createElement("option"); o.value = String(i); o.textContent = p[0]; presetSel.appendChild(o); });
      pw.appendChild(pl); pw.appendChild(presetSel); form.insertBefore(pw, form.firstChild);
    }
    var out = root.querySelector("[data-testid=player-output]") || document.createElement("output");
    out.setAttribute("data-testid", "player-output"); out.className = "tp-output";
    var fig = document.createElement("div"); fig.className = "tp-figure";
    var msg = document.createElement("p"); msg.className = "tp-note"; msg.setAttribute("role", "status");
    var link = document.createElement("a"); link.className = "tp-share"; link.textContent = "Link to this setting";
    /* result first (output, then the visual) so that it is on the first screen of a phone */
    root.innerHTML = ""; root.appendChild(out); root.appendChild(fig); root.appendChild(msg); root.appendChild(form); root.appendChild(link);

    function values() { var v = {}; Object.keys(controls).forEach(function (k) { v[k] = controls[k].value; }); return v; }
    function show(v) {
      Object.keys(controls).forEach(function (k) { if (k in v) controls[k].value = String(v[k]); });
      bitBoxes.forEach(function (cb) { cb.checked = ((v.bits >> Number(cb.getAttribute("data-bit"))) & 1) === 1; });
      sliders.forEach(function (sl) { sl.sync(); });
    }
    var clampKey = null, last = null, lastW = 0;
    /* the width is measured once and on resize: reading it on every update forces a layout */
    function measure() { return Math.max(280, Math.floor(fig.clientWidth || 600)); }
    function draw() { fig.innerHTML = ""; fig.appendChild(V[name](last, lastW)); }
    lastW = measure();
    function update() {
      var t0 = performance.now();
      var res = model.compute(values());
      last = res; out.innerHTML = R[name](res); draw();
      var key = JSON.stringify(res.inputs);
      if (res.clamped.length) {
        msg.textContent = "Out of range, set to the nearest allowed value: " + res.clamped.map(function (k) { return spec[k].label || k; }).join(", ") + ".";
        clampKey = key;
      } else if (key !== clampKey) { msg.textContent = ""; clampKey = null; }
      show(res.inputs);
      var qs = new URLSearchParams(); Object.keys(res.inputs).forEach(function (k) { qs.set(k, String(res.inputs[k])); });
      var h = "#" + qs.toString();
      if (location.hash !== h) history.replaceState(null, "", h);
      link.href = h;
      var dt = performance.now() - t0;
      root.setAttribute("data-update-ms", dt.toFixed(3));
      (window.TutorPlayerTimings = window.TutorPlayerTimings || []).push(dt);
    }
    Object.keys(controls).forEach(function (k) { controls[k].addEventListener("change", update); if (controls[k].tagName === "INPUT") controls[k].addEventListener("input", function () { if (controls[k].value !== "") update(); }); });
    bitBoxes.forEach(function (cb) {
      cb.addEventListener("change", function () {
        var x = 0; bitBoxes.forEach(function (c) { if (c.checked) x |= 1 << Number(c.getAttribute("data-bit")); });
        controls.bits.value = String(x); update();
      });
    });
    if (presetSel) presetSel.addEventListener("change", function () {
      if (presetSel.value === "") return;
      var p = PRESETS[name][Number(presetSel.value)][1];
      Object.keys(p).forEach(function (k) { if (controls[k]) controls[k].value = String(p[k]); });
      update();
    });
    var init = model.compute(readHash()).inputs;
    show(init); update();
    window.addEventListener("hashchange", function () { show(model.compute(readHash()).inputs); update(); });
    /* redraw at the new width (text stays 12px instead of shrinking with the svg) */
    var pending = false;
    window.addEventListener("resize", function () {
      if (pending) return; pending = true;
      requestAnimationFrame(function () { pending = false; var w = measure(); if (last && Math.abs(w - lastW) > 2) { lastW = w; draw(); } });
    });
  }

  function boot() {
    if (window.self !== window.top) document.documentElement.classList.add("tp-embedded");
    Array.prototype.forEach.call(document.querySelectorAll(".tp-player[data-player]"), setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();
