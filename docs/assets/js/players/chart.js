/* Shared drawing helpers of the concept players: SVG elements, linear and log scales, axes with
   ticks and titles, legends, humane number formats, and the slider + number control.
   Plain DOM, no library, no network. Charts are drawn at the container's pixel width so that
   text keeps its CSS size (12px) on a phone. */
(function (root) {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, cls, anchor) {
    return el("text", { x: +x.toFixed(1), y: +y.toFixed(1), "class": cls || null, "text-anchor": anchor || null }, parent, s);
  }
  /* Text broken into lines of at most maxW pixels (12px text is about 7px a character);
     returns the height used. */
  function wrap(parent, x, y, s, cls, maxW, lineH) {
    var words = String(s).split(" "), lines = [""], per = Math.max(8, Math.floor(maxW / 7));
    words.forEach(function (w) { var cur = lines[lines.length - 1]; if (cur && (cur + " " + w).length > per) lines.push(w); else lines[lines.length - 1] = cur ? cur + " " + w : w; });
    var t = el("text", { x: x, y: y, "class": cls || null }, parent);
    lines.forEach(function (l, i) { el("tspan", { x: x, dy: i ? (lineH || 15) : 0 }, t, l); });
    return lines.length * (lineH || 15);
  }
  /* Keep a centred label inside the drawing: anchor it at an end when it would spill over. */
  function anchorFor(node, x, label) {
    var svgEl = node.ownerSVGElement || node, W = Number(svgEl.getAttribute("width")) || 1e9, half = String(label).length * 3.5;
    return x - half < 0 ? "start" : (x + half > W ? "end" : "middle");
  }
  function title(node, s) { el("title", null, node, s); return node; }

  /* The player's main visual: an svg with role=img and a description, drawn 1:1 in CSS pixels. */
  function svg(w, h, label) {
    var s = el("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h, "class": "tp-plot", role: "img",
      "aria-label": label, "data-testid": "player-visual" });
    return s;
  }
  function fit(s, h) { /* set the final height once the drawing knows it */
    var w = s.getAttribute("width"); s.setAttribute("height", h); s.setAttribute("viewBox", "0 0 " + w + " " + h);
  }

  function lin(d0, d1, r0, r1) {
    var f = function (v) { return r0 + (v - d0) / ((d1 - d0) || 1) * (r1 - r0); };
    f.ticks = function (n) { return niceTicks(d0, d1, n); };
    f.d = [d0, d1]; f.r = [r0, r1];
    return f;
  }
  function log(d0, d1, r0, r1) {
    var l0 = Math.log10(d0), l1 = Math.log10(d1);
    var f = function (v) { return r0 + (Math.log10(Math.max(v, d0 * 1e-3)) - l0) / ((l1 - l0) || 1) * (r1 - r0); };
    f.ticks = function (n) { return logTicks(d0, d1, n); };
    f.d = [d0, d1]; f.r = [r0, r1];
    return f;
  }
  function niceTicks(d0, d1, n) {
    var span = d1 - d0; if (!(span > 0)) return [d0];
    var raw = span / Math.max(1, n || 5), mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    var step;
    if (r < 1.5) step = mag; else if (r < 3) step = 2 * mag; else if (r < 7) step = 5 * mag; else step = 10 * mag;
    var out = [], v = Math.ceil(d0 / step - 1e-9) * step;
    for (; v <= d1 + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : +v.toPrecision(12));
    return out;
  }
  function logTicks(d0, d1, n) {
    var a = Math.ceil(Math.log10(d0) - 1e-9), b = Math.floor(Math.log10(d1) + 1e-9), k = Math.max(1, Math.ceil((b - a + 1) / Math.max(2, n || 6)));
    var out = [];
    for (var e = a; e <= b; e += k) out.push(Math.pow(10, e));
    return out;
  }

  /* Axis along x at pixel row y (ticks below), or along y at pixel column x (ticks to the left). */
  function axisX(g, sc, y, ticks, fmt, ttl, grid) {
    var a = el("g", { "class": "tp-axis" }, g), r = sc.r;
    el("line", { x1: r[0], x2: r[1], y1: y, y2: y }, a);
    ticks.forEach(function (t) {
      var x = +sc(t).toFixed(1);
      if (grid !== undefined) el("line", { x1: x, x2: x, y1: grid, y2: y, "class": "tp-grid" }, a);
      el("line", { x1: x, x2: x, y1: y, y2: y + 4 }, a);
      var lab = fmt(t), an = anchorFor(g, x, lab);
      text(a, an === "start" ? Math.max(0, x - 3) : an === "end" ? x + 3 : x, y + 16, lab, "tp-tick", an);
    });
    if (ttl) text(a, (r[0] + r[1]) / 2, y + 32, ttl, "tp-axis-title", "middle");
    return a;
  }
  function axisY(g, sc, x, ticks, fmt, ttl, grid) {
    var a = el("g", { "class": "tp-axis" }, g), r = sc.r;
    el("line", { x1: x, x2: x, y1: r[0], y2: r[1] }, a);
    ticks.forEach(function (t) {
      var y = +sc(t).toFixed(1);
      if (grid !== undefined) el("line", { x1: x, x2: grid, y1: y, y2: y, "class": "tp-grid" }, a);
      el("line", { x1: x - 4, x2: x, y1: y, y2: y }, a);
      text(a, x - 6, y + 4, fmt(t), "tp-tick", "end");
    });
    if (ttl) { var t = text(a, 0, 0, ttl, "tp-axis-title", "middle"); t.setAttribute("transform", "translate(12," + ((r[0] + r[1]) / 2).toFixed(1) + ") rotate(-90)"); }
    return a;
  }

  /* Legend entries [[label, cssClass, shape]] laid out in rows from (x, y) within width w; returns
     the height used. Shape "line" draws a stroke, "dot" a circle, otherwise a square. */
  function legend(g, x, y, w, items) {
    var lg = el("g", { "class": "tp-legend-svg" }, g), cx = x, cy = y, rowH = 18;
    items.forEach(function (it) {
      var width = 22 + it[0].length * 6.6;
      if (cx > x && cx + width > x + w) { cx = x; cy += rowH; }
      var item = el("g", { "class": "tp-legend-item" }, lg);
      if (it[2] === "line") el("line", { x1: cx, x2: cx + 14, y1: cy + 6, y2: cy + 6, "class": it[1] }, item);
      else if (it[2] === "dot") el("circle", { cx: cx + 7, cy: cy + 6, r: 5, "class": it[1] }, item);
      else el("rect", { x: cx, y: cy, width: 12, height: 12, "class": it[1] }, item);
      text(item, cx + 18, cy + 11, it[0], "tp-legend-label");
      cx += width + 10;
    });
    return cy - y + rowH;
  }

  /* Numbers for people: 1,150 rather than 1.15e+3; very large ones in words or powers of ten. */
  function num(x, digits) {
    if (typeof x !== "number" || !isFinite(x)) return "n/a";
    var a = Math.abs(x), d = digits || 3;
    if (a === 0) return "0";
    if (a < 1e6) {
      if (a < 1e-3) return pow10(x, d);
      /* toLocaleString is slow (an Intl formatter per call): group the digits by hand */
      var r = +x.toPrecision(Math.max(d, Math.min(6, Math.floor(Math.log10(a)) + 1))), parts = String(Math.abs(r)).split(".");
      return (r < 0 ? "-" : "") + parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (parts[1] ? "." + parts[1] : "");
    }
    var words = [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"]];
    if (a < 1e15) for (var i = 0; i < words.length; i++) if (a >= words[i][0]) return +(x / words[i][0]).toPrecision(d) + " " + words[i][1];
    return pow10(x, d);
  }
  function pow10(x, d) {
    var e = Math.floor(Math.log10(Math.abs(x))), m = +(x / Math.pow(10, e)).toPrecision(d || 3);
    if (Math.abs(m) >= 10) { m = +(m / 10).toPrecision(d || 3); e += 1; }
    return m + "×10^" + e;
  }

  /* Slider mapping of an input spec: linear, log (a zero minimum sits at the left end) or
     symmetric log for ranges through zero. Positions are integers 0..N. */
  var N = 1000;
  function sliderScale(s) { return exactEnds(sliderScale0(s), s); }
  function sliderScale0(s) {
    var lo = s.min, hi = s.max, isInt = s.kind === "int";
    if (isInt && hi - lo <= 64) return { n: hi - lo, to: function (v) { return Math.round(v - lo); }, from: function (p) { return lo + p; } };
    if (lo < 0 && hi > 0) {
      var m = Math.log10(hi), b = m - 6;  /* six decades either side of zero */
      return { n: 2 * N, to: function (v) { if (v === 0) return N; var q = (Math.log10(Math.abs(v)) - b) / (m - b); q = Math.max(0.001, Math.min(1, q)); return Math.round(N + Math.sign(v) * q * N); },
        from: function (p) { var q = (p - N) / N; return q === 0 ? 0 : nice(Math.sign(q) * Math.pow(10, b + Math.abs(q) * (m - b)), isInt); } };
    }
    var floor = lo > 0 ? lo : hi * 1e-4;
    if (hi / floor >= 100 && (lo > 0 || hi >= 100)) {  /* 0..1 (a probability) stays linear */
      var l0 = Math.log10(floor), l1 = Math.log10(hi), zero = lo <= 0;
      return { n: N, to: function (v) { if (zero && v <= 0) return 0; var q = (Math.log10(Math.max(v, floor)) - l0) / (l1 - l0); return Math.round(Math.max(0, Math.min(1, q)) * N); },
        from: function (p) { if (zero && p === 0) return lo; return clampTo(s, nice(Math.pow(10, l0 + p / N * (l1 - l0)), isInt)); } };
    }
    return { n: N, to: function (v) { return Math.round((v - lo) / (hi - lo) * N); }, from: function (p) { return clampTo(s, nice(lo + p / N * (hi - lo), isInt)); } };
  }
  function nice(v, isInt) { return isInt ? Math.round(v) : +v.toPrecision(3); }
  function clampTo(s, v) { return Math.max(s.min, Math.min(s.max, v)); }
  /* Which numeric specs get a slider: continuous ones and integer ones of more than eight values. */
  /* the two ends give the exact bounds, whatever the rounding in between */
  function exactEnds(sc, s) { var f = sc.from; sc.from = function (p) { return p <= 0 ? s.min : p >= sc.n ? s.max : f(p); }; return sc; }
  function wantsSlider(s) { return s.kind === "float" || (s.kind === "int" && s.max - s.min >= 8); }

  /* A labelled slider kept in step with a number field (the field holds the exact value). */
  function slider(numberEl, s, id, labelText, onInput) {
    var sc = sliderScale(s), wrap = document.createElement("div"), lab = document.createElement("label"), r = document.createElement("input");
    wrap.className = "tp-slider"; r.type = "range"; r.id = id; r.min = "0"; r.max = String(sc.n); r.step = "1";
    r.setAttribute("data-slider-for", numberEl.name);
    lab.htmlFor = id; lab.className = "tp-visually-hidden"; lab.textContent = labelText + " (slider)";
    function sync() { var v = Number(numberEl.value); if (numberEl.value !== "" && isFinite(v)) { r.value = String(sc.to(v)); r.setAttribute("aria-valuetext", numberEl.value); } }
    r.addEventListener("input", function () { numberEl.value = String(sc.from(Number(r.value))); r.setAttribute("aria-valuetext", numberEl.value); onInput(); });
    wrap.appendChild(lab); wrap.appendChild(r);
    return { node: wrap, input: r, sync: sync };
  }

  root.TutorChart = { el: el, text: text, title: title, svg: svg, fit: fit, wrap: wrap, lin: lin, log: log, niceTicks: niceTicks,
    logTicks: logTicks, axisX: axisX, axisY: axisY, legend: legend, num: num, sliderScale: sliderScale,
    wantsSlider: wantsSlider, slider: slider };
})(typeof window !== "undefined" ? window : this);
