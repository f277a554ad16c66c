"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const P = require("../../docs/assets/js/planner-model.js");
const Store = require("../../docs/assets/js/tutor-store.js");
const { loadFixtureCourse, MemoryStorage } = require("./helpers.js");

const course = loadFixtureCourse();
const a02 = course.modules.find((m) => m.id === "A02");

test("ticking parts lowers the remaining hours", () => {
  let s = P.freshState();
  const total = P.totalHours(course.modules);
  assert.equal(P.remainingHours(course.modules, s), total);
  s = P.setPart(s, "A02", "lab", true);
  assert.equal(P.remainingHours(course.modules, s), total - 3);
  assert.equal(P.moduleStatus(a02, s), "partial");
  s = P.setModule(s, "A02", true);
  assert.equal(P.moduleStatus(a02, s), "done");
  assert.equal(P.remainingHours(course.modules, s), total - 6.5);
  s = P.setModule(s, "A02", false);
  assert.deepEqual(s.done, {});
});

test("setPart does not mutate its input", () => {
  const s = P.freshState();
  P.setPart(s, "A01", "read", true);
  assert.deepEqual(s.done, {});
});

test("missing prerequisites are the direct ones not fully done", () => {
  let s = P.freshState();
  assert.deepEqual(P.missingPrerequisites(course, s, "C07").map((m) => m.id), ["C02", "B04"]);
  s = P.setModule(s, "B04", true);
  s = P.setPart(s, "C02", "read", true);
  assert.deepEqual(P.missingPrerequisites(course, s, "C07").map((m) => m.id), ["C02"]);
  assert.deepEqual(P.missingPrerequisites(course, s, "A01"), []);
});

test("groups by track or by one path in its order", () => {
  const byTrack = P.groups(course, "track");
  assert.deepEqual(byTrack.map((g) => g.id), ["track-A", "track-B", "track-C", "track-D"]);
  const path = P.groups(course, "path:kernel");
  assert.equal(path.length, 1);
  assert.deepEqual(path[0].modules.map((m) => m.id), ["A01", "A02", "D01"]);
  assert.deepEqual(P.groups(course, "path:nope").map((g) => g.id), byTrack.map((g) => g.id));
});

test("finish date from hours per week, and hours per week from a date", () => {
  assert.equal(P.finishDate(20, 10, "2026-01-01"), "2026-01-15");
  assert.equal(P.finishDate(0, 10, "2026-01-01"), "2026-01-01");
  assert.equal(P.finishDate(1, 7, "2026-02-28"), "2026-03-01");
  assert.equal(P.finishDate(10, 0, "2026-01-01"), null);
  assert.equal(P.hoursPerWeekNeeded(30, "2026-01-22", "2026-01-01"), 10);
  assert.equal(P.hoursPerWeekNeeded(30, "2025-12-31", "2026-01-01"), null);
});

test("validation accepts fresh state and rejects malformed data", () => {
  assert.deepEqual(P.validate(P.freshState()), []);
  assert.ok(P.validate(null).length);
  assert.ok(P.validate({ done: [], pace: {}, view: {} }).length);
  const s = P.freshState();
  s.done.A01 = { read: "yes" };
  assert.ok(P.validate(s).length);
  const t = P.freshState();
  t.pace.target = "2026-02-30";
  assert.ok(P.validate(t).length);
});

test("export then import round-trips and drops unknown modules", () => {
  let s = P.setModule(P.freshState(), "A01", true);
  s = P.setPart(s, "Z99", "read", true);
  s.view.group = "path:inference";
  const r = P.importText(P.exportText(s), course);
  assert.equal(r.ok, true);
  assert.deepEqual(r.dropped, ["Z99"]);
  assert.deepEqual(r.data.done, { A01: { read: true, lab: true, drill: true } });
  assert.equal(r.data.view.group, "path:inference");
});

test("foreign or corrupt imports are refused with a reason", () => {
  assert.match(P.importText("{nope", course).error, /not valid JSON/);
  assert.match(P.importText(JSON.stringify({ app: "tutor-cards", version: 1, data: {} }), course).error,
    /tutor-cards/);
  assert.match(P.importText(JSON.stringify({ app: P.APP, version: 99, data: P.freshState() }), course).error,
    /version 99/);
});

test("load resets corrupt storage, keeps the old value aside and says so", () => {
  const st = new MemoryStorage({ [P.STORAGE_KEY]: "{\"app\": \"tutor-planner\", \"version\": 1, \"data\": 7}" });
  const r = Store.load(st, P.STORAGE_KEY, P.APP, P.VERSION, P.validate, P.freshState);
  assert.deepEqual(r.data, P.freshState());
  assert.match(r.notice, /reset/);
  assert.equal(st.getItem(P.STORAGE_KEY), null);
  assert.ok(st.getItem(P.STORAGE_KEY + ".rejected"));
});

test("load and save round-trip; empty storage gives no notice", () => {
  const st = new MemoryStorage();
  const first = Store.load(st, P.STORAGE_KEY, P.APP, P.VERSION, P.validate, P.freshState);
  assert.equal(first.notice, null);
  const s = P.setPart(first.data, "A01", "drill", true);
  assert.equal(Store.save(st, P.STORAGE_KEY, P.APP, P.VERSION, s), null);
  const again = Store.load(st, P.STORAGE_KEY, P.APP, P.VERSION, P.validate, P.freshState);
  assert.deepEqual(again.data, s);
  assert.equal(again.notice, null);
});

test("storage that throws gives a notice, not an exception", () => {
  const bad = { getItem() { throw new Error("denied"); }, setItem() { throw new Error("denied"); } };
  const r = Store.load(bad, P.STORAGE_KEY, P.APP, P.VERSION, P.validate, P.freshState);
  assert.match(r.notice, /does not allow saving/);
  assert.match(Store.save(bad, P.STORAGE_KEY, P.APP, P.VERSION, r.data), /could not be saved/);
});
