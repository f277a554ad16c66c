// Shared helpers for the node:test suites of the learner tools.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

function loadFixtureCourse() {
  const ctx = { window: {} };
  vm.runInNewContext(fs.readFileSync(path.join(__dirname, "..", "fixtures", "course-data.js"), "utf8"), ctx);
  // JSON round trip: plain objects of this realm, so deepStrictEqual compares values
  return JSON.parse(JSON.stringify(ctx.window.TUTOR_COURSE));
}

class MemoryStorage {
  constructor(init) { this.map = new Map(Object.entries(init || {})); }
  getItem(k) { return this.map.has(k) ? this.map.get(k) : null; }
  setItem(k, v) { this.map.set(k, String(v)); }
  removeItem(k) { this.map.delete(k); }
}

module.exports = { loadFixtureCourse, MemoryStorage };
