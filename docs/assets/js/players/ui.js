/* Concept players: builds labelled controls from the model's input spec, keeps the state in the
   URL hash, recomputes and renders on every change. No framework, no network. */
(function () {
  "use strict";
  var P = window.TutorPresets, M = window.TutorPlayers || {};
  var SVGNS = "http://www.w3.org/2000/svg";

  function si(x, unit) {
    if (x === null || x === undefined || typeof x !== "number" || !isFinite(x)) return "n/a";
    var a = Math.abs(x), pre = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < pre.length; i++) if (a >= pre[i][0]) return (x / pre[i][0]).toPrecision(4).replace(/\.?0+$/, "") + " " + pre[i][1] + (unit || "");
    return (a !== 0 && a < 1e-3 ? x.toExponential(3) : x.toPrecision(4).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "")) + (unit ? " " + unit : "");
  }
  function secs(x) {
    if (typeof x !== "number" || !isFinite(x)) return "n/a";
    if (x >= 1) return x.toPrecision(4) + " s";
    if (x >= 1e-3) return (x * 1e3).toPrecision(4) + " ms";
    if (x >= 1e-6) return (x * 1e6).toPrecision(4) + " µs";
    return (x * 1e9).toPrecision(4) + " ns";
  }
  function pct(x) { return (typeof x === "number" && isFinite(x)) ? (x * 100).toPrecision(3) + " %" : "n/a"; }
  function bytes(x) { return si(x, "B"); }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
  function dev(k) { return P.devices[k] ? P.devices[k].name : k; }

  /* A horizontal stacked bar (parts: [[label, value, cssClass]]) as SVG. */
  function stacked(parts, title) {
    var total = parts.reduce(function (s, p) { return s + Math.max(0, p[1]); }, 0) || 1;
    var svg = document.createElementNS(SVGNS, "svg"), x = 0;
    svg.setAttribute("viewBox", "0 0 100 8"); svg.setAttribute("class", "tp-bar");
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", title);
    parts.forEach(function (p, i) {
      var w = Math.max(0, p[1]) / total * 100, r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("x", x); r.setAttribute("y", 0); r.setAttribute("width", w); r.setAttribute("height", 8);
      r.setAttribute("class", "tp-c" + (i % 6));
      var t = document.createElementNS(SVGNS, "title"); t.textContent = p[0]; r.appendChild(t);
      svg.appendChild(r); x += w;
    });
    return svg;
  }
  function legend(parts, fmt) {
    return "<ul class='tp-legend'>" + parts.map(function (p, i) {
      return "<li><span class='tp-swatch tp-c" + (i % 6) + "'></span>" + esc(p[0]) + ": " + fmt(p[1]) + "</li>";
    }).join("") + "</ul>";
  }
  function meter(label, frac) {
    var f = (typeof frac === "number" && isFinite(frac)) ? Math.max(0, Math.min(1, frac)) : 0;
    return "<div class='tp-meter'><span>" + esc(label) + "</span><span class='tp-meter-track'><span class='tp-meter-fill' style='width:" +
      (f * 100).toFixed(1) + "%'></span></span><span>" + pct(frac) + "</span></div>";
  }

  /* Renderers: output -> {html (main result), figure (optional SVG/HTML node)} */
  var R = {
    where_time_goes: function (o) {
      var parts = [["context", o.context_s], ["allocation", o.alloc_s], ["copies", o.copies_s], ["kernel", o.kernel_s]];
      return { html: "<p><strong>Kernel share: " + pct(o.kernel_share) + "</strong> of " + secs(o.total_s) +
        " for " + si(o.elements) + " elements (" + bytes(o.bytes_moved) + " moved).</p>" + legend(parts, secs),
        figure: stacked(parts, "time by part") };
    },
    coalescing: function (o) {
      return { html: "<p><strong>" + o.sectors + " sectors per request</strong> (ideal " + o.ideal_sectors + "), load efficiency " +
        pct(o.efficiency) + ": " + o.bytes_requested + " B asked, " + o.bytes_moved + " B moved.</p><p><strong>Bank conflict degree " +
        o.conflict_degree + "</strong>: the column read of the tile takes " + o.shared_wavefronts + " shared-memory wavefront(s).</p>" +
        meter("load efficiency", o.efficiency) + meter("shared bandwidth", 1 / o.conflict_degree) };
    },
    occupancy: function (o) {
      function one(t, r, unit) {
        return "<li><strong>" + t + ": " + pct(r.occupancy) + "</strong>, " + r.blocks + " blocks × " + r.warps_per_block + " " + unit +
          " = " + r.warps + " of " + r.max_warps + " (" + r.lanes + " lanes); limited by <strong>" + esc(r.limit) + "</strong>" +
          (Object.keys(r.limits).length ? " (blocks allowed by " + Object.keys(r.limits).map(function (k) { return k + " " + r.limits[k]; }).join(", ") + ")" : "") + "</li>";
      }
      return { html: "<ul>" + one("H100/H200 SM", o.hopper, "warps") + one("MI300X CU", o.cdna3, "wavefronts") + "</ul>" +
        meter("H100/H200", o.hopper.occupancy) + meter("MI300X", o.cdna3.occupancy) };
    },
    roofline: function (o) {
      var h = "<p><strong>Attainable " + si(o.attainable_flops, "FLOP/s") + "</strong> (" + o.bound + "-bound); ridge point " +
        si(o.ridge) + " FLOP/byte; peak " + si(o.peak_flops, "FLOP/s") + ", " + si(o.bandwidth, "B/s") + ".</p>";
      if (o.measured_fraction !== null) h += "<p>Measured point: " + pct(o.measured_fraction) + " of the roof" +
        (o.measured_above_roof ? " (above the roof: check the byte or FLOP count)" : "") + ".</p>";
      return { html: h, figure: rooflineSvg(o) };
    },
    gemm_tiling: function (o) {
      return { html: "<p><strong>Tile intensity " + si(o.tile_intensity) + " FLOP/byte</strong>; shared/LDS " + bytes(o.shared_bytes) +
        " per block; " + si(o.acc_registers) + " accumulator registers per thread.</p><p><strong>" + o.tiles + " tiles</strong>, " +
        o.resident_per_unit + " per SM/CU (" + esc(o.residency_limit) + ") on " + o.units + " units: <strong>" + o.waves +
        " wave(s), " + pct(o.wave_efficiency) + " of the last-wave slots used</strong>. Whole GEMM: " + si(o.gemm_intensity) +
        " FLOP/byte at best.</p>" + meter("wave efficiency", o.wave_efficiency) };
    },
    divergence: function (o) {
      return { html: "<p><strong>SIMT efficiency: " + pct(o.lanes32.efficiency) + " with 32 lanes, " + pct(o.lanes64.efficiency) +
        " with 64 lanes</strong>; warps running both paths: " + si(o.lanes32.mixed_warps) + " of " + o.lanes32.warps + " (32) and " +
        si(o.lanes64.mixed_warps) + " of " + o.lanes64.warps + " (64).</p>" + meter("32 lanes", o.lanes32.efficiency) +
        meter("64 lanes", o.lanes64.efficiency) };
    },
    number_formats: function (o) {
      var n = { e4m3: "OCP E4M3", e4m3fnuz: "E4M3FNUZ", e5m2: "OCP E5M2", e5m2fnuz: "E5M2FNUZ" };
      var bits = ("00000000" + o.inputs.bits.toString(2)).slice(-8);
      var rows = Object.keys(n).map(function (k) {
        return "<tr><th scope='row'>" + n[k] + "</th><td>" + esc(String(o.decoded[k])) + "</td><td>0x" +
          ("0" + o.encoded[k].code.toString(16)).slice(-2) + " = " + esc(String(o.encoded[k].value)) + "</td></tr>";
      }).join("");
      return { html: "<p>Byte <code>" + bits + "</code> (0x" + ("0" + o.inputs.bits.toString(16)).slice(-2) + ")</p>" +
        "<table><thead><tr><th scope='col'>format</th><th scope='col'>value of the byte</th><th scope='col'>" + esc(String(o.inputs.value)) +
        " encoded</th></tr></thead><tbody>" + rows + "</tbody></table><p>" + esc(String(o.inputs.value)) + " in bf16: <strong>" +
        esc(String(o.bf16)) + "</strong>; in fp16: <strong>" + esc(String(o.fp16)) + "</strong></p>" };
    },
    attention_io: function (o) {
      var parts = [["naive", o.naive_bytes], ["tiled", o.tiled_bytes || 0]];
      return { html: "<p><strong>Naive " + bytes(o.naive_bytes) + ", tiled " + (o.tiled_bytes === null ? "cannot run" : bytes(o.tiled_bytes)) +
        "</strong>" + (o.ratio === null ? "" : " (" + si(o.ratio) + "× less)") + " at N = " + o.seq + "; block " + o.block + " rows, " +
        o.query_blocks + " query blocks. " + esc(o.note) + "</p>" + meter("tiled / naive", o.tiled_bytes === null ? 0 : o.tiled_bytes / o.naive_bytes) };
    },
    collectives: function (o) {
      var parts = [["latency (alpha)", o.latency_s], ["transfer (beta)", o.transfer_s]];
      return { html: "<p><strong>" + secs(o.time_s) + "</strong>, algorithm bandwidth " + si(o.algbw, "B/s") + ", <strong>bus bandwidth " +
        si(o.busbw, "B/s") + "</strong> (" + o.algorithm_used + "; " + esc(o.note) + ")</p>" + legend(parts, secs), figure: stacked(parts, "time split") };
    },
    training_memory: function (o) {
      var parts = [["weights", o.weights], ["gradients", o.gradients], ["optimizer state", o.optimizer], ["activations", o.activations]];
      return { html: "<p><strong>" + bytes(o.total) + " per GPU</strong>, " + pct(o.hbm_share) + " of " + bytes(o.hbm) + " HBM: " +
        (o.fits ? "fits" : "<strong>does not fit</strong>") + ".</p>" + legend(parts, bytes), figure: stacked(parts, "bytes by kind") };
    },
    pipeline_schedules: function (o) {
      return { html: "<p><strong>Bubble " + pct(o.bubble_fraction) + "</strong> of the makespan " + si(o.makespan) + " (idle/compute " +
        si(o.bubble_ratio) + "); peak micro-batch activations in flight per stage: <strong>" + o.peak_stage_units.map(function (x) { return si(x); }).join(", ") +
        "</strong>. " + esc(o.notes.join(" ")) + "</p>", figure: timelineSvg(o) };
    },
    serving_sizing: function (o) {
      return { html: "<p>KV pool <strong>" + si(o.kv_pool_tokens) + " tokens</strong>; SLO caps the scheduler at <strong>" + si(o.slo_tokens) +
        " tokens</strong>: <strong>" + o.binds + " binds</strong>. Decode at the cap is <strong>" + o.regime + "</strong> (GEMMs " + o.gemm_bound +
        "-bound, attention " + o.attn_bound + "-bound), step " + si(o.step_ms) + " ms. " + esc(o.note) + "</p>" +
        meter("SLO cap / KV pool", o.kv_pool_tokens ? o.slo_tokens / o.kv_pool_tokens : 0) };
    }
  };

  function rooflineSvg(o) {
    var svg = document.createElementNS(SVGNS, "svg"), W = 300, H = 150;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H); svg.setAttribute("class", "tp-plot");
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "roofline, log-log");
    var x0 = -2, x1 = 4, y1 = Math.log10(o.peak_flops) + 0.5, y0 = y1 - 6;
    function X(i) { return (Math.log10(i) - x0) / (x1 - x0) * W; }
    function Y(f) { return H - (Math.log10(Math.max(f, 1)) - y0) / (y1 - y0) * H; }
    var pts = [], i;
    for (i = x0; i <= x1 + 1e-9; i += 0.05) { var I = Math.pow(10, i); pts.push(X(I).toFixed(1) + "," + Y(Math.min(o.peak_flops, I * o.bandwidth)).toFixed(1)); }
    var pl = document.createElementNS(SVGNS, "polyline"); pl.setAttribute("points", pts.join(" ")); pl.setAttribute("class", "tp-roof"); svg.appendChild(pl);
    function dot(ix, f, cls) { var c = document.createElementNS(SVGNS, "circle"); c.setAttribute("cx", X(ix)); c.setAttribute("cy", Y(f)); c.setAttribute("r", 4); c.setAttribute("class", cls); svg.appendChild(c); }
    dot(o.inputs.intensity, o.attainable_flops, "tp-c0");
    if (o.measured_fraction !== null) dot(o.inputs.intensity, o.inputs.measured_tflops * 1e12, "tp-c3");
    return svg;
  }
  function timelineSvg(o) {
    var svg = document.createElementNS(SVGNS, "svg"), rowH = 14, W = 600, S = o.timeline.length;
    svg.setAttribute("viewBox", "0 0 " + W + " " + (S * rowH)); svg.setAttribute("class", "tp-plot");
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "pipeline timeline, one row per stage");
    o.timeline.forEach(function (dev, s) {
      var d = { F: [], B: [] };
      dev.forEach(function (sl) {
        var x = sl.start / o.makespan * W, w = Math.max(0.5, (sl.end - sl.start) / o.makespan * W - 0.5);
        d[sl.kind].push("M" + x.toFixed(2) + " " + (s * rowH + 1) + "h" + w.toFixed(2) + "v" + (rowH - 2) + "h" + (-w).toFixed(2) + "z");
      });
      ["F", "B"].forEach(function (k, i) {
        var path = document.createElementNS(SVGNS, "path");
        path.setAttribute("d", d[k].join("")); path.setAttribute("class", "tp-c" + i);
        var t = document.createElementNS(SVGNS, "title"); t.textContent = "stage " + s + (k === "F" ? " forward" : " backward"); path.appendChild(t);
        svg.appendChild(path);
      });
    });
    return svg;
  }

  /* Presets: real hardware and models; sources are cited on each player's page. */
  var PRESETS = {
    where_time_goes: [["H200, 4 MiB fp32 vectors", { device: "h200", log2_n: 20 }], ["MI300X, 1 GiB fp32 vectors", { device: "mi300x", log2_n: 28 }]],
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
    var controls = {};
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
      wrap.appendChild(label); wrap.appendChild(el); form.appendChild(wrap); controls[k] = el;
    });
    var bitBoxes = [];
    if (name === "number_formats") {
      var fs = document.createElement("fieldset"), lg = document.createElement("legend");
      fs.className = "tp-bits"; lg.textContent = "Bits (sign, then exponent and mantissa)"; fs.appendChild(lg);
      for (var b = 7; b >= 0; b--) {
        var l = document.createElement("label"), cb = document.createElement("input");
        cb.type = "checkbox"; cb.id = uid + "bit" + b; cb.setAttribute("data-bit", b);
        l.htmlFor = cb.id; l.textContent = "bit " + b;
        fs.appendChild(cb); fs.appendChild(l); bitBoxes.push(cb);
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
    root.innerHTML = ""; root.appendChild(form); root.appendChild(msg); root.appendChild(out); root.appendChild(fig); root.appendChild(link);

    function values() { var v = {}; Object.keys(controls).forEach(function (k) { v[k] = controls[k].value; }); return v; }
    function show(v) {
      Object.keys(controls).forEach(function (k) { if (k in v) controls[k].value = String(v[k]); });
      bitBoxes.forEach(function (cb) { cb.checked = ((v.bits >> Number(cb.getAttribute("data-bit"))) & 1) === 1; });
    }
    var clampKey = null;
    function update() {
      var t0 = performance.now();
      var res = model.compute(values());
      var r = R[name](res);
      out.innerHTML = r.html; fig.innerHTML = ""; if (r.figure) fig.appendChild(r.figure);
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
  }

  function boot() {
    if (window.self !== window.top) document.documentElement.classList.add("tp-embedded");
    Array.prototype.forEach.call(document.querySelectorAll(".tp-player[data-player]"), setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();
