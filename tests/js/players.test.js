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
