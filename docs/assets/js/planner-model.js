/*
 * Study planner model: pure functions over the course data (window.TUTOR_COURSE)
 * and the learner's progress. No DOM; Node-testable (tests/js/planner-model.test.js).
 */
(function (root) {
  "use strict";

  var Store = (typeof module !== "undefined" && module.exports)
    ? require("./tutor-store.js") : root.TutorStore;

  var APP = "tutor-planner";
  var VERSION = 1;
  var STORAGE_KEY = "tutor.planner.v1";
  var PARTS = ["read", "lab", "drill"];
  var PART_LABELS = { read: "Read", lab: "Lab", drill: "Drill" };
  var DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
  var DAY_MS = 86400000;

  function freshState() {
    return { done: {}, pace: { hoursPerWeek: null, target: null }, view: { group: "track" } };
  }

  function isDate(s) {
    if (typeof s !== "string" || !DATE_RE.test(s)) return false;
    var t = Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10));
    return new Date(t).toISOString().slice(0, 10) === s;
  }

  /** Problems with a progress object; an empty list means it is sound. */
  function validate(data) {
    var problems = [];
    if (!Store.isPlainObject(data)) return ["the progress data is not an object"];
    if (!Store.isPlainObject(data.done)) problems.push("'done' is not an object");
    else {
      Object.keys(data.done).forEach(function (id) {
        var entry = data.done[id];
        if (!Store.isPlainObject(entry)) { problems.push("entry for " + id + " is not an object"); return; }
        Object.keys(entry).forEach(function (part) {
          if (PARTS.indexOf(part) < 0) problems.push("entry for " + id + " has unknown part '" + part + "'");
          else if (typeof entry[part] !== "boolean") problems.push("entry " + id + "." + part + " is not true/false");
        });
      });
    }
    if (!Store.isPlainObject(data.pace)) problems.push("'pace' is not an object");
    else {
      var h = data.pace.hoursPerWeek;
      if (h !== null && !(typeof h === "number" && isFinite(h) && h > 0 && h <= 168)) {
        problems.push("hours per week must be between 0 and 168");
      }
      if (data.pace.target !== null && !isDate(data.pace.target)) problems.push("target date is not a date");
    }
    if (!Store.isPlainObject(data.view) || typeof data.view.group !== "string") {
      problems.push("'view' is not an object with a 'group'");
    }
    return problems;
  }

  function clone(state) {
    return JSON.parse(JSON.stringify(state));
  }

  function isPartDone(state, id, part) {
    var e = state.done[id];
    return !!(e && e[part]);
  }

  function setPart(state, id, part, value) {
    if (PARTS.indexOf(part) < 0) throw new Error("unknown part " + part);
    var s = clone(state);
    var e = s.done[id] || {};
    if (value) e[part] = true; else delete e[part];
    if (Object.keys(e).length) s.done[id] = e; else delete s.done[id];
    return s;
  }

  function setModule(state, id, value) {
    var s = state;
    PARTS.forEach(function (p) { s = setPart(s, id, p, value); });
    return s;
  }

  function moduleStatus(module, state) {
    var n = PARTS.filter(function (p) { return isPartDone(state, module.id, p); }).length;
    return n === PARTS.length ? "done" : (n === 0 ? "todo" : "partial");
  }

  function round1(x) {
    return Math.round(x * 100) / 100;
  }

  function moduleHours(module) {
    return round1(PARTS.reduce(function (a, p) { return a + (+module.hours[p] || 0); }, 0));
  }

  function moduleRemaining(module, state) {
    return round1(PARTS.reduce(function (a, p) {
      return a + (isPartDone(state, module.id, p) ? 0 : (+module.hours[p] || 0));
    }, 0));
  }

  function totalHours(modules) {
    return round1(modules.reduce(function (a, m) { return a + moduleHours(m); }, 0));
  }

  function remainingHours(modules, state) {
    return round1(modules.reduce(function (a, m) { return a + moduleRemaining(m, state); }, 0));
  }

  function moduleIndex(course) {
    var idx = {};
    (course.modules || []).forEach(function (m) { idx[m.id] = m; });
    return idx;
  }

  /** Direct prerequisites of `moduleId` that are not fully done, as module objects. */
  function missingPrerequisites(course, state, moduleId) {
    var idx = moduleIndex(course);
    var m = idx[moduleId];
    if (!m) return [];
    return (m.prerequisites || []).filter(function (p) {
      return !idx[p] || moduleStatus(idx[p], state) !== "done";
    }).map(function (p) { return idx[p] || { id: p, title: p }; });
  }

  /** Groups to show: every track, or the modules of one learning path in its order. */
  function groups(course, group) {
    var idx = moduleIndex(course);
    if (typeof group === "string" && group.indexOf("path:") === 0) {
      var pid = group.slice(5);
      var path = (course.paths || []).filter(function (p) { return p.id === pid; })[0];
      if (path) {
        return [{
          id: "path-" + path.id,
          title: path.title,
          modules: path.modules.map(function (id) { return idx[id]; }).filter(Boolean)
        }];
      }
    }
    return (course.tracks || []).map(function (t) {
      return {
        id: "track-" + t.id,
        title: "Track " + t.id + ": " + t.title,
        modules: course.modules.filter(function (m) { return m.track === t.id; })
      };
    }).filter(function (g) { return g.modules.length > 0; });
  }

  function groupIsValid(course, group) {
    if (group === "track") return true;
    return typeof group === "string" && group.indexOf("path:") === 0 &&
      (course.paths || []).some(function (p) { return "path:" + p.id === group; });
  }

  function parseDate(iso) {
    return Date.UTC(+iso.slice(0, 4), +iso.slice(5, 7) - 1, +iso.slice(8, 10));
  }

  function formatDate(ms) {
    return new Date(ms).toISOString().slice(0, 10);
  }

  /** Date (YYYY-MM-DD) on which `remaining` hours are done at `hoursPerWeek`. */
  function finishDate(remaining, hoursPerWeek, todayIso) {
    if (!(hoursPerWeek > 0) || !isDate(todayIso)) return null;
    var days = Math.ceil(remaining / hoursPerWeek * 7 - 1e-9);
    return formatDate(parseDate(todayIso) + Math.max(0, days) * DAY_MS);
  }

  /** Hours per week needed to finish `remaining` hours by `targetIso`; null if the date is not after today. */
  function hoursPerWeekNeeded(remaining, targetIso, todayIso) {
    if (!isDate(targetIso) || !isDate(todayIso)) return null;
    var days = (parseDate(targetIso) - parseDate(todayIso)) / DAY_MS;
    if (days <= 0) return null;
    return Math.round(remaining / (days / 7) * 10) / 10;
  }

  function exportText(state, now) {
    return JSON.stringify(Store.envelope(APP, VERSION, state, now), null, 2) + "\n";
  }

  /**
   * Read an exported file. Returns {ok: true, data, dropped} (dropped: ids of
   * modules this course does not have, removed) or {ok: false, error}.
   */
  function importText(text, course) {
    var r = Store.parse(text, APP, VERSION, validate);
    if (!r.ok) return { ok: false, error: "This file cannot be imported: " + r.reason + "." };
    var data = clone(r.data);
    var idx = moduleIndex(course);
    var dropped = Object.keys(data.done).filter(function (id) { return !idx[id]; });
    dropped.forEach(function (id) { delete data.done[id]; });
    if (!groupIsValid(course, data.view.group)) data.view.group = "track";
    return { ok: true, data: data, dropped: dropped };
  }

  function fmtHours(h) {
    return String(round1(h));
  }

  var api = {
    APP: APP, VERSION: VERSION, STORAGE_KEY: STORAGE_KEY, PARTS: PARTS, PART_LABELS: PART_LABELS,
    freshState: freshState, validate: validate, isDate: isDate,
    isPartDone: isPartDone, setPart: setPart, setModule: setModule, moduleStatus: moduleStatus,
    moduleHours: moduleHours, moduleRemaining: moduleRemaining,
    totalHours: totalHours, remainingHours: remainingHours,
    missingPrerequisites: missingPrerequisites, groups: groups, groupIsValid: groupIsValid,
    finishDate: finishDate, hoursPerWeekNeeded: hoursPerWeekNeeded,
    exportText: exportText, importText: importText, fmtHours: fmtHours
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TutorPlanner = api;
})(typeof window !== "undefined" ? window : this);
