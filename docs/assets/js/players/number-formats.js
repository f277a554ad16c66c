/* Player 7 model (B02/B04): one byte under the four fp8 formats; a value rounded to fp8, bf16, fp16.
   Mirrors tutor_build/models/fp8.py and players.number_formats. */
(function (root) {
  "use strict";
  var U = (typeof module !== "undefined" && module.exports) ? require("./model-util.js") : root.TutorModelUtil;
  var FORMATS = {
    e4m3: { ebits: 4, mbits: 3, bias: 7, kind: "ocp_e4m3", max_code: 0x7E, nan_code: 0x7F },
    e4m3fnuz: { ebits: 4, mbits: 3, bias: 8, kind: "fnuz", max_code: 0x7F, nan_code: 0x80 },
    e5m2: { ebits: 5, mbits: 2, bias: 15, kind: "ieee", max_code: 0x7B, nan_code: 0x7E },
    e5m2fnuz: { ebits: 5, mbits: 2, bias: 16, kind: "fnuz", max_code: 0x7F, nan_code: 0x80 }
  };
  var NAMES = ["e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz"];
  function p2(k) { return Math.pow(2, k); }
  function frexpExp(a) { /* e2 with a = m * 2^e2, m in [0.5, 1), for finite a > 0 */
    var e = Math.floor(Math.log2(a));
    if (p2(e) > a) e -= 1;
    if (p2(e + 1) <= a) e += 1;
    return e + 1;
  }
  function decode(bits, name) {
    var f = FORMATS[name], sign = (bits & 0x80) ? -1 : 1;
    var e = (bits >> f.mbits) & ((1 << f.ebits) - 1), m = bits & ((1 << f.mbits) - 1);
    var emax = (1 << f.ebits) - 1;
    if (f.kind === "fnuz" && bits === 0x80) return NaN;
    if (f.kind === "ocp_e4m3" && e === emax && m === (1 << f.mbits) - 1) return NaN;
    if (f.kind === "ieee" && e === emax) return m === 0 ? sign * Infinity : NaN;
    if (e === 0) return sign * m * p2(1 - f.bias - f.mbits);
    return sign * ((1 << f.mbits) + m) * p2(e - f.bias - f.mbits);
  }
  function rne(q) { var n = Math.floor(q), r = q - n; if (r > 0.5 || (r === 0.5 && n % 2 === 1)) n += 1; return n; }
  function overflow(f, sbit) {
    if (f.kind === "ieee") return 0x7C | sbit;
    return f.kind === "fnuz" ? f.nan_code : (f.nan_code | sbit);
  }
  function encode(x, name, saturate) {
    var f = FORMATS[name], neg = x < 0 || Object.is(x, -0), sbit = neg ? 0x80 : 0;
    if (isNaN(x)) return f.kind === "fnuz" ? f.nan_code : (f.nan_code | sbit);
    if (!isFinite(x)) return saturate ? (f.max_code | sbit) : overflow(f, sbit);
    var a = Math.abs(x), minNormal = p2(1 - f.bias), quantum;
    if (a < minNormal) quantum = p2(1 - f.bias - f.mbits);
    else quantum = p2(frexpExp(a) - 1 - f.mbits);
    var value = rne(a / quantum) * quantum;
    if (value === 0) return f.kind === "fnuz" ? 0 : sbit;
    if (value > decode(f.max_code, name)) return saturate ? (f.max_code | sbit) : overflow(f, sbit);
    var code;
    if (value < minNormal) code = Math.floor(value / p2(1 - f.bias - f.mbits));
    else {
      var e2 = frexpExp(value);
      code = ((e2 - 1 + f.bias) << f.mbits) | (Math.floor(value / p2(e2 - 1 - f.mbits)) - (1 << f.mbits));
    }
    return code | sbit;
  }
  function roundIeee(x, ebits, mbits) {
    if (!isFinite(x) || x === 0) return x;
    var bias = (1 << (ebits - 1)) - 1, a = Math.abs(x);
    var e = Math.max(frexpExp(a) - 1, 1 - bias), q = p2(e - mbits);
    var v = rne(a / q) * q, largest = (2 - p2(-mbits)) * p2(bias);
    if (v > largest) v = Infinity;
    return x < 0 ? -v : v;
  }
  function num(x) { return isNaN(x) ? "NaN" : (x === Infinity ? "inf" : (x === -Infinity ? "-inf" : x)); }
  function compute(raw) {
    var P = U.presets(), c = U.clampInputs(P.inputs.number_formats, raw), v = c.values;
    var sat = v.saturate === "yes", decoded = {}, encoded = {};
    NAMES.forEach(function (n) {
      decoded[n] = num(decode(v.bits, n));
      var code = encode(v.value, n, sat);
      encoded[n] = { code: code, value: num(decode(code, n)) };
    });
    return { inputs: v, clamped: c.clamped, decoded: decoded, encoded: encoded,
      bf16: num(roundIeee(v.value, 8, 7)), fp16: num(roundIeee(v.value, 5, 10)) };
  }
  var api = { compute: compute, decode: decode, encode: encode, roundIeee: roundIeee, FORMATS: FORMATS };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else (root.TutorPlayers = root.TutorPlayers || {}).number_formats = api;
})(typeof window !== "undefined" ? window : this);
