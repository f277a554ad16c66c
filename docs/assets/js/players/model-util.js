/* Shared helpers of the player models: input clamping (mirrors tutor_build/models/_common.py). */
(function (root) {
  "use strict";
  function clampInputs(spec, raw) {
    var values = {}, clamped = [];
    raw = raw || {};
    Object.keys(spec).forEach(function (name) {
      var s = spec[name], d = s["default"], v = raw[name];
      if (!(name in raw) || v === null || v === undefined) { values[name] = d; return; }
      if (s.kind === "choice") {
        var hit = null;
        s.choices.forEach(function (c) { if (c === v || String(c) === String(v)) hit = c; });
        if (hit === null) { hit = d; clamped.push(name); }
        values[name] = hit;
        return;
      }
      var x = (typeof v === "number") ? v : (typeof v === "string" && v.trim() !== "" ? Number(v) : NaN);
      var changed = false;
      if (!isFinite(x)) { x = d; changed = true; }
      if (s.kind === "int") { var r = Math.floor(x + 0.5); if (r !== x) changed = true; x = r; }
      if (x < s.min) { x = s.min; changed = true; } else if (x > s.max) { x = s.max; changed = true; }
      values[name] = x;
      if (changed) clamped.push(name);
    });
    return { values: values, clamped: clamped };
  }
  function ceilDiv(a, b) { return Math.ceil(a / b); }
  function presets() {
    if (typeof module !== "undefined" && module.exports) return require("./presets.js");
    return root.TutorPresets;
  }
  var api = { clampInputs: clampInputs, ceilDiv: ceilDiv, presets: presets };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TutorModelUtil = api;
})(typeof window !== "undefined" ? window : this);
