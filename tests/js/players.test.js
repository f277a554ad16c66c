// Every player's JavaScript model against the vectors generated from the Python models
// (tests/vectors/players.json, `python -m tutor_build.models.vectors`).
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..", "..");
const DIR = path.join(ROOT, "docs", "assets", "js", "players");
const data = JSON.parse(fs.readFileSync(path.join(ROOT, "tests", "vectors", "players.json"), "utf8"));
const TOL = data.tolerance;

function close(actual, expected, where) {
  if (typeof expected === "number") {
    assert.strictEqual(typeof actual, "number", `${where}: expected a number, got ${JSON.stringify(actual)}`);
    assert.ok(Number.isFinite(actual), `${where}: not finite (${actual})`);
    const scale = Math.max(Math.abs(expected), Math.abs(actual));
    assert.ok(Math.abs(actual - expected) <= TOL * scale,
      `${where}: ${actual} != ${expected} (relative tolerance ${TOL})`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: expected an array`);
    assert.strictEqual(actual.length, expected.length, `${where}: length`);
    expected.forEach((e, i) => close(actual[i], e, `${where}[${i}]`));
  } else if (expected !== null && typeof expected === "object") {
    assert.ok(actual !== null && typeof actual === "object", `${where}: expected an object`);
    assert.deepStrictEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys`);
    for (const k of Object.keys(expected)) close(actual[k], expected[k], `${where}.${k}`);
  } else {
    assert.strictEqual(actual, expected, `${where}`);
  }
}

const FILES = {
  where_time_goes: "where-time-goes.js", coalescing: "coalescing.js", occupancy: "occupancy.js",
  roofline: "roofline.js", gemm_tiling: "gemm-tiling.js", divergence: "divergence.js",
  number_formats: "number-formats.js", attention_io: "attention-io.js", collectives: "collectives.js",
  training_memory: "training-memory.js", pipeline_schedules: "pipeline-schedules.js",
  serving_sizing: "serving-sizing.js",
};

test("every player has vectors and a model file", () => {
  assert.deepStrictEqual(Object.keys(data.players).sort(), Object.keys(FILES).sort());
});

for (const [name, file] of Object.entries(FILES)) {
  test(`${name}: JavaScript model matches the Python vectors`, () => {
    const model = require(path.join(DIR, file));
    data.players[name].forEach((row, i) => {
      close(model.compute(row.input), row.output, `${name} case ${i} ${JSON.stringify(row.input)}`);
    });
  });
}

test("coalescing: the drawing helpers agree with the sector and bank counts", () => {
  const m = require(path.join(DIR, "coalescing.js"));
  for (const stride of [0, 1, 2, 3, 8, 32, 33, 64]) for (const elem of [1, 2, 4, 8, 16]) {
    const seen = new Set();
    m.laneSectors(stride, elem).forEach(([a, b]) => { for (let s = a; s <= b; s++) seen.add(s); });
    assert.strictEqual(seen.size, m.sectors(stride, elem), `stride ${stride}, ${elem} B`);
  }
  for (const tile of [1, 16, 32, 64, 128]) for (const pad of [0, 1, 2, 8]) for (const elem of [1, 2, 4, 8, 16]) {
    const perBank = {};
    m.bankAccess(tile, pad, elem).forEach((a) => { (perBank[a.bank] = perBank[a.bank] || new Set()).add(a.word); });
    const worst = Math.max(0, ...Object.values(perBank).map((s) => s.size));
    assert.strictEqual(worst, m.conflictDegree(tile, pad, elem), `tile ${tile}+${pad}, ${elem} B`);
  }
});

test("where_time_goes: pinned memory speeds the copies, a warm context removes its cost", () => {
  const m = require(path.join(DIR, "where-time-goes.js"));
  const base = m.compute({ log2_n: 24 });
  const pinned = m.compute({ log2_n: 24, host_memory: "pinned" });
  const warm = m.compute({ log2_n: 24, context: "reuse" });
  assert.ok(pinned.copies_s < base.copies_s && pinned.kernel_share > base.kernel_share);
  assert.strictEqual(pinned.copy_gbps, 64);
  assert.strictEqual(base.copy_gbps, 7);
  assert.strictEqual(warm.context_s, 0);
  assert.ok(warm.kernel_share > base.kernel_share);
  assert.strictEqual(m.compute({ pageable_gbps: 100, link_gbps: 20 }).copy_gbps, 20);  // never above the link
});

test("chart: humane numbers and slider mappings", () => {
  global.window = global.window || {};
  require(path.join(DIR, "chart.js"));
  const C = global.window.TutorChart;
  assert.strictEqual(C.num(1150), "1,150");
  assert.strictEqual(C.num(11.5), "11.5");
  assert.strictEqual(C.num(2.5e6), "2.5 million");
  assert.ok(!/e[+-]/.test(C.num(8.4e20)), C.num(8.4e20));
  const P = require(path.join(DIR, "presets.js"));
  for (const [name, spec] of Object.entries(P.inputs)) for (const [k, s] of Object.entries(spec)) {
    if (s.kind === "choice" || !C.wantsSlider(s)) continue;
    const sc = C.sliderScale(s);
    assert.strictEqual(sc.from(0), s.min, `${name}.${k}: left end`);
    assert.strictEqual(sc.from(sc.n), s.max, `${name}.${k}: right end`);
    assert.strictEqual(sc.to(s.max), sc.n, `${name}.${k}: max position`);
    let prev = -Infinity;
    for (let p = 0; p <= sc.n; p += Math.max(1, Math.floor(sc.n / 50))) {
      const v = sc.from(p);
      assert.ok(v >= prev && v >= s.min && v <= s.max, `${name}.${k}: position ${p} gives ${v}`);
      if (s.kind === "int") assert.ok(Number.isInteger(v), `${name}.${k}: ${v} is not an integer`);
      prev = v;
    }
  }
});
