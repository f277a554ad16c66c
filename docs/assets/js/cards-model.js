/*
 * Recall cards model: which cards are due, grading through the FSRS scheduler, and the
 * schema of the saved review state. Pure; Node-testable (tests/js/cards-model.test.js).
 */
(function (root) {
  "use strict";

  var isNode = typeof module !== "undefined" && module.exports;
  var Store = isNode ? require("./tutor-store.js") : root.TutorStore;
  var FSRS = isNode ? require("./fsrs.js") : root.TutorFSRS;

  var APP = "tutor-cards";
  var VERSION = 1;
  var STORAGE_KEY = "tutor.cards.v1";
  var FILTER_KINDS = ["all", "track", "module", "path"];
  var GRADES = [
    { rating: 1, name: "Again", key: "1" },
    { rating: 2, name: "Hard", key: "2" },
    { rating: 3, name: "Good", key: "3" },
    { rating: 4, name: "Easy", key: "4" }
  ];

  function freshState() {
    return { cards: {}, filter: { kind: "all", value: "" } };
  }

  function isNum(x) { return typeof x === "number" && isFinite(x); }

  function validate(data) {
    var problems = [];
    if (!Store.isPlainObject(data)) return ["the review data is not an object"];
    if (!Store.isPlainObject(data.cards)) problems.push("'cards' is not an object");
    else {
      Object.keys(data.cards).forEach(function (id) {
        var c = data.cards[id];
        if (!Store.isPlainObject(c)) { problems.push("card " + id + " is not an object"); return; }
        if ([1, 2, 3].indexOf(c.state) < 0) problems.push("card " + id + " has an unknown state");
        if (!(c.step === null || (Number.isInteger(c.step) && c.step >= 0))) problems.push("card " + id + " has a bad step");
        if (!isNum(c.stability) || c.stability <= 0) problems.push("card " + id + " has a bad stability");
        if (!isNum(c.difficulty) || c.difficulty < 1 || c.difficulty > 10) problems.push("card " + id + " has a bad difficulty");
        if (!isNum(c.due) || !isNum(c.lastReview)) problems.push("card " + id + " has bad dates");
        if (!Number.isInteger(c.reps) || c.reps < 0 || !Number.isInteger(c.lapses) || c.lapses < 0) {
          problems.push("card " + id + " has bad counters");
        }
      });
    }
    if (!Store.isPlainObject(data.filter) || FILTER_KINDS.indexOf(data.filter.kind) < 0 ||
        typeof data.filter.value !== "string") {
      problems.push("'filter' is not a known filter");
    }
    return problems;
  }

  function moduleTrack(course) {
    var t = {};
    (course.modules || []).forEach(function (m) { t[m.id] = m.track; });
    return t;
  }

  function filterValid(course, filter) {
    if (filter.kind === "all") return true;
    if (filter.kind === "track") return (course.tracks || []).some(function (t) { return t.id === filter.value; });
    if (filter.kind === "module") return (course.modules || []).some(function (m) { return m.id === filter.value; });
    return (course.paths || []).some(function (p) { return p.id === filter.value; });
  }

  function filterCards(course, filter) {
    var cards = course.cards || [];
    if (!filter || filter.kind === "all") return cards.slice();
    if (filter.kind === "module") return cards.filter(function (c) { return c.module === filter.value; });
    if (filter.kind === "track") {
      var tracks = moduleTrack(course);
      return cards.filter(function (c) { return tracks[c.module] === filter.value; });
    }
    var path = (course.paths || []).filter(function (p) { return p.id === filter.value; })[0];
    if (!path) return [];
    var order = {};
    path.modules.forEach(function (id, i) { order[id] = i; });
    return cards.filter(function (c) { return c.module in order; })
      .sort(function (a, b) { return order[a.module] - order[b.module]; });
  }

  /** {due: reviews due now (earliest first), fresh: never-seen cards (course order), later: scheduled later}. */
  function queue(course, state, filter, now) {
    var due = [], fresh = [], later = [];
    filterCards(course, filter).forEach(function (c) {
      var s = state.cards[c.id];
      if (!s) fresh.push(c);
      else if (s.due <= now) due.push(c);
      else later.push(c);
    });
    due.sort(function (a, b) { return state.cards[a.id].due - state.cards[b.id].due; });
    later.sort(function (a, b) { return state.cards[a.id].due - state.cards[b.id].due; });
    return { due: due, fresh: fresh, later: later };
  }

  function nextCard(course, state, filter, now) {
    var q = queue(course, state, filter, now);
    return q.due[0] || q.fresh[0] || null;
  }

  function schedulerCard(scheduler, saved, now) {
    if (!saved) return scheduler.newCard(now);
    return { state: saved.state, step: saved.step, stability: saved.stability,
      difficulty: saved.difficulty, due: saved.due, lastReview: saved.lastReview };
  }

  function grade(scheduler, state, cardId, rating, now) {
    var saved = state.cards[cardId];
    var next = scheduler.review(schedulerCard(scheduler, saved, now), rating, now);
    var s = JSON.parse(JSON.stringify(state));
    s.cards[cardId] = {
      state: next.state, step: next.step, stability: next.stability, difficulty: next.difficulty,
      due: next.due, lastReview: next.lastReview,
      reps: (saved ? saved.reps : 0) + 1,
      lapses: (saved ? saved.lapses : 0) + (rating === 1 && saved && saved.state === 2 ? 1 : 0)
    };
    return s;
  }

  /** Interval each grade would give, in ms, for the preview on the buttons. */
  function previews(scheduler, state, cardId, now) {
    var c = schedulerCard(scheduler, state.cards[cardId], now);
    return GRADES.map(function (g) { return scheduler.review(c, g.rating, now).due - now; });
  }

  function formatInterval(ms) {
    var min = Math.round(ms / 60000);
    if (min < 60) return min + " min";
    var h = Math.round(ms / 3600000);
    if (h < 24) return h + " h";
    var d = Math.round(ms / 86400000);
    if (d < 60) return d + (d === 1 ? " day" : " days");
    var mo = Math.round(d / 30.4);
    if (d < 365) return mo + " months";
    return (Math.round(d / 36.5) / 10) + " years";
  }

  function exportText(state, now) {
    return JSON.stringify(Store.envelope(APP, VERSION, state, now), null, 2) + "\n";
  }

  function importText(text, course) {
    var r = Store.parse(text, APP, VERSION, validate);
    if (!r.ok) return { ok: false, error: "This file cannot be imported: " + r.reason + "." };
    var data = JSON.parse(JSON.stringify(r.data));
    var known = {};
    (course.cards || []).forEach(function (c) { known[c.id] = 1; });
    var dropped = Object.keys(data.cards).filter(function (id) { return !known[id]; });
    dropped.forEach(function (id) { delete data.cards[id]; });
    if (!filterValid(course, data.filter)) data.filter = { kind: "all", value: "" };
    return { ok: true, data: data, dropped: dropped };
  }

  var api = {
    APP: APP, VERSION: VERSION, STORAGE_KEY: STORAGE_KEY, GRADES: GRADES,
    freshState: freshState, validate: validate, filterValid: filterValid, filterCards: filterCards,
    queue: queue, nextCard: nextCard, grade: grade, previews: previews, formatInterval: formatInterval,
    exportText: exportText, importText: importText
  };
  if (isNode) module.exports = api;
  else root.TutorCards = api;
})(typeof window !== "undefined" ? window : this);
