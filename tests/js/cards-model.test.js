"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const C = require("../../docs/assets/js/cards-model.js");
const FSRS = require("../../docs/assets/js/fsrs.js");
const Store = require("../../docs/assets/js/tutor-store.js");
const { loadFixtureCourse, MemoryStorage } = require("./helpers.js");

const course = loadFixtureCourse();
const NOW = Date.UTC(2026, 0, 10, 12);
const sched = new FSRS.Scheduler();

test("filters by module, track and path", () => {
  assert.equal(C.filterCards(course, { kind: "all", value: "" }).length, course.cards.length);
  assert.deepEqual(C.filterCards(course, { kind: "module", value: "A02" }).map((c) => c.id),
    ["a02-sector-size", "a02-padding"]);
  assert.deepEqual(C.filterCards(course, { kind: "track", value: "B" }).map((c) => c.id), ["b04-ocp-fnuz"]);
  assert.deepEqual(C.filterCards(course, { kind: "path", value: "kernel" }).map((c) => c.module),
    ["A01", "A01", "A02", "A02", "D01"]);
});

test("new cards are due; a graded card leaves the queue until its due time", () => {
  let s = C.freshState();
  const f = { kind: "module", value: "A01" };
  assert.equal(C.nextCard(course, s, f, NOW).id, "a01-latency-vs-throughput");
  s = C.grade(sched, s, "a01-latency-vs-throughput", 4, NOW);
  const saved = s.cards["a01-latency-vs-throughput"];
  assert.equal(saved.state, FSRS.State.Review);
  assert.equal(saved.reps, 1);
  assert.equal(C.nextCard(course, s, f, NOW).id, "a01-measure-wall");
  const q = C.queue(course, s, f, saved.due);
  assert.deepEqual(q.due.map((c) => c.id), ["a01-latency-vs-throughput"]);
});

test("grading matches the scheduler and counts lapses from the review state", () => {
  let s = C.grade(sched, C.freshState(), "a02-padding", 4, NOW);
  const later = s.cards["a02-padding"].due;
  s = C.grade(sched, s, "a02-padding", 1, later);
  assert.equal(s.cards["a02-padding"].state, FSRS.State.Relearning);
  assert.equal(s.cards["a02-padding"].lapses, 1);
  assert.deepEqual(C.validate(s), []);
});

test("previews give one growing interval per grade for a new card", () => {
  const p = C.previews(sched, C.freshState(), "a02-padding", NOW);
  assert.equal(p.length, 4);
  assert.ok(p[0] <= p[1] && p[1] <= p[2] && p[2] <= p[3]);
  assert.equal(C.formatInterval(p[0]), "1 min");
  assert.equal(C.formatInterval(10 * 86400000), "10 days");
});

test("validation rejects broken review data", () => {
  assert.deepEqual(C.validate(C.freshState()), []);
  const s = C.grade(sched, C.freshState(), "a02-padding", 3, NOW);
  s.cards["a02-padding"].difficulty = 42;
  assert.ok(C.validate(s).length);
  assert.ok(C.validate({ cards: {}, filter: { kind: "everything", value: "" } }).length);
});

test("import drops unknown cards and an unknown filter; refuses planner files", () => {
  let s = C.grade(sched, C.freshState(), "a02-padding", 3, NOW);
  s = C.grade(sched, s, "gone-card", 3, NOW);
  s.filter = { kind: "module", value: "Z99" };
  const r = C.importText(C.exportText(s), course);
  assert.equal(r.ok, true);
  assert.deepEqual(r.dropped, ["gone-card"]);
  assert.deepEqual(r.data.filter, { kind: "all", value: "" });
  const foreign = JSON.stringify({ app: "tutor-planner", version: 1, data: {} });
  assert.match(C.importText(foreign, course).error, /tutor-planner/);
});

test("corrupt saved state is reset with a notice", () => {
  const st = new MemoryStorage({ [C.STORAGE_KEY]: "]]]" });
  const r = Store.load(st, C.STORAGE_KEY, C.APP, C.VERSION, C.validate, C.freshState);
  assert.deepEqual(r.data, C.freshState());
  assert.match(r.notice, /not valid JSON/);
});
