/*
 * Recall cards page: one due card at a time, reveal, grade, FSRS scheduling.
 * Model in cards-model.js and fsrs.js, storage in tutor-store.js.
 * Keys: Space or Enter on "Show answer" reveals; 1-4 grade once the answer is shown.
 */
(function () {
  "use strict";
  var C = window.TutorCards;
  var FSRS = window.TutorFSRS;
  var Store = window.TutorStore;
  var Page = window.TutorPage;
  var el = Page.el, siteBase = Page.siteBase, storage = Page.storage;
  var SECTION_TITLES = {
    "analogy": "Analogy", "first-principles": "First principles", "silicon": "On real silicon",
    "labs": "Hands-on labs", "performance": "Performance", "tradeoffs": "Tradeoffs",
    "production": "Production", "sources": "Sources", "self-assessment": "Self-assessment"
  };

  function href(base, url) {
    if (!url) return null;
    return /^[a-z][a-z0-9+.-]*:/i.test(url) || url.charAt(0) === "/" ? url : base + url;
  }

  function start(root) {
    var course = window.TUTOR_COURSE;
    if (!course || !Array.isArray(course.cards)) {
      root.appendChild(el("p", { className: "tutor-notice tutor-notice--error", role: "alert",
        text: "The course data did not load, so there are no cards to show. Rebuild the site or reload the page." }));
      return;
    }
    var base = siteBase();
    var scheduler = new FSRS.Scheduler();
    var modules = {};
    course.modules.forEach(function (m) { modules[m.id] = m; });
    var loaded = Store.load(storage(), C.STORAGE_KEY, C.APP, C.VERSION, C.validate, C.freshState);
    var state = loaded.data;
    if (!C.filterValid(course, state.filter)) state.filter = { kind: "all", value: "" };
    // A module page links here with ?deck=module:A01: open that deck.
    var asked = /[?&]deck=([a-z]+):([^&]+)/.exec(window.location.search);
    if (asked) {
      var wanted = { kind: asked[1], value: decodeURIComponent(asked[2]) };
      if (C.filterValid(course, wanted)) state.filter = wanted;
    }
    var current = null;
    var revealed = false;

    var status = Page.notice("cards-notice");
    var notice = status.node, say = status.say;
    function persist() {
      var problem = Store.save(storage(), C.STORAGE_KEY, C.APP, C.VERSION, state);
      if (problem) say(problem, true);
    }

    // filter select: all, each track, each path, each module
    var select = el("select", { id: "cards-filter" });
    select.appendChild(el("option", { value: "all:", text: "All cards (" + course.cards.length + ")" }));
    function addGroup(label, items) {
      if (!items.length) return;
      var g = el("optgroup", { label: label });
      items.forEach(function (it) { g.appendChild(el("option", { value: it[0], text: it[1] })); });
      select.appendChild(g);
    }
    function count(filter) { return C.filterCards(course, filter).length; }
    addGroup("Tracks", (course.tracks || []).filter(function (t) {  // a track with no module written yet has no cards
      return count({ kind: "track", value: t.id }) > 0;
    }).map(function (t) {
      return ["track:" + t.id, "Track " + t.id + ": " + t.title + " (" + count({ kind: "track", value: t.id }) + ")"];
    }));
    addGroup("Learning paths", (course.paths || []).map(function (p) {
      return ["path:" + p.id, p.title + " (" + count({ kind: "path", value: p.id }) + ")"];
    }));
    addGroup("Modules", course.modules.map(function (m) {
      return ["module:" + m.id, m.id + " " + m.title + " (" + count({ kind: "module", value: m.id }) + ")"];
    }));
    select.value = state.filter.kind + ":" + state.filter.value;

    var stats = el("p", { className: "tutor-stats", "data-testid": "cards-stats", "aria-live": "polite" });
    var cardBox = el("div", { className: "tutor-card-box" });
    var exportBtn = el("button", { type: "button", className: "tutor-btn", "data-testid": "cards-export",
      text: "Export review history" });
    var importInput = el("input", { id: "cards-import", type: "file", accept: "application/json,.json",
      "data-testid": "cards-import" });

    root.textContent = "";
    root.appendChild(notice);
    root.appendChild(el("div", { className: "tutor-controls" }, [
      el("div", { className: "tutor-field" }, [el("label", { "for": "cards-filter", text: "Cards from" }), select])
    ]));
    root.appendChild(stats);
    root.appendChild(cardBox);
    root.appendChild(el("div", { className: "tutor-actions" }, [
      exportBtn,
      el("div", { className: "tutor-field" }, [
        el("label", { "for": "cards-import", text: "Import review history (a JSON file exported here)" }), importInput
      ])
    ]));
    if (loaded.notice) say(loaded.notice, true);

    function showStats(now) {
      var q = C.queue(course, state, state.filter, now);
      stats.textContent = "";
      stats.appendChild(el("span", { "data-testid": "cards-due", text: String(q.due.length) }));
      stats.appendChild(document.createTextNode(" due for review, "));
      stats.appendChild(el("span", { "data-testid": "cards-new", text: String(q.fresh.length) }));
      stats.appendChild(document.createTextNode(" new, "));
      stats.appendChild(el("span", { "data-testid": "cards-later", text: String(q.later.length) }));
      stats.appendChild(document.createTextNode(" scheduled later."));
      return q;
    }

    var wakeTimer = null;

    function render(focus) {
      var now = Date.now();
      if (wakeTimer) { clearTimeout(wakeTimer); wakeTimer = null; }
      var q = showStats(now);
      current = q.due[0] || q.fresh[0] || null;
      revealed = false;
      cardBox.textContent = "";
      if (!current) {
        var msg = "No cards are due in this selection.";
        if (q.later.length) {
          msg += " The next one is due on " + new Date(state.cards[q.later[0].id].due).toLocaleString() + ".";
        }
        cardBox.appendChild(el("p", { "data-testid": "cards-empty", text: msg }));
        // a card in a learning step comes back within minutes: show it when it is due
        if (q.later.length) {
          var wait = state.cards[q.later[0].id].due - now;
          if (wait < 3600000) wakeTimer = setTimeout(function () { render(false); }, Math.max(wait, 0) + 250);
        }
        return;
      }
      var m = modules[current.module] || { id: current.module, title: "", url: "" };
      var sectionLink = el("a", { href: href(base, current.section_url) || "#",
        "data-testid": "card-section", text: m.id + " · " + (SECTION_TITLES[current.section] || current.section) });
      var article = el("article", { className: "tutor-card", "data-card": current.id,
        "aria-labelledby": "card-q" });
      article.appendChild(el("p", { className: "tutor-card__meta" }, [
        (state.cards[current.id] ? "Review" : "New card") + " · " + m.title + " · tests ", sectionLink
      ]));
      article.appendChild(el("p", { className: "tutor-card__q", id: "card-q", "data-testid": "card-question",
        text: current.q }));
      var reveal = el("button", { type: "button", className: "tutor-btn tutor-btn--primary",
        "data-testid": "reveal", "aria-expanded": "false", "aria-controls": "card-a", text: "Show answer" });
      var cite = current.cite || {};
      var citeHref = href(base, cite.url);
      var citeNode = citeHref
        ? el("a", { href: citeHref, "data-testid": "card-cite", text: cite.label || cite.key })
        : el("span", { "data-testid": "card-cite", text: cite.label || cite.key || "" });
      var answer = el("div", { className: "tutor-card__a", id: "card-a", "data-testid": "card-answer" }, [
        el("p", { text: current.a }),
        el("p", { className: "tutor-card__meta" }, ["Source: ", citeNode, " · Section: ",
          el("a", { href: href(base, current.section_url) || "#", text: SECTION_TITLES[current.section] || current.section })])
      ]);
      answer.hidden = true;
      var grades = el("div", { className: "tutor-grades", role: "group", "aria-label": "How well did you recall it?" });
      var ivl = C.previews(scheduler, state, current.id, now);
      C.GRADES.forEach(function (g, i) {
        var b = el("button", { type: "button", className: "tutor-btn", "data-testid": "grade-" + g.name.toLowerCase(),
          "aria-keyshortcuts": g.key }, [g.name + " (" + g.key + ")", el("small", { text: "next in " + C.formatInterval(ivl[i]) })]);
        b.addEventListener("click", function () { doGrade(g.rating); });
        grades.appendChild(b);
      });
      grades.hidden = true;
      reveal.addEventListener("click", doReveal);
      article.appendChild(reveal);
      article.appendChild(answer);
      article.appendChild(grades);
      cardBox.appendChild(article);
      if (focus) reveal.focus();

      function doReveal() {
        revealed = true;
        answer.hidden = false;
        grades.hidden = false;
        reveal.setAttribute("aria-expanded", "true");
        reveal.hidden = true;
        grades.querySelector('[data-testid="grade-good"]').focus();
      }
      article._reveal = doReveal;
    }

    function doGrade(rating) {
      if (!current || !revealed) return;
      state = C.grade(scheduler, state, current.id, rating, Date.now());
      persist();
      say("");
      render(true);
    }

    document.addEventListener("keydown", function (ev) {
      if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
      var t = ev.target && ev.target.tagName;
      if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA") return;
      if (!current) return;
      if (revealed && /^[1-4]$/.test(ev.key)) { ev.preventDefault(); doGrade(+ev.key); }
    });

    select.addEventListener("change", function () {
      var v = select.value;
      var i = v.indexOf(":");
      state = JSON.parse(JSON.stringify(state));
      state.filter = { kind: v.slice(0, i), value: v.slice(i + 1) };
      persist();
      render(false);
    });
    exportBtn.addEventListener("click", function () {
      var name = "tutor-cards-history-" + new Date().toISOString().slice(0, 10) + ".json";
      Page.downloadJson(name, C.exportText(state));
      say("Review history exported as " + name + ".");
    });
    Page.onFileText(importInput, function (text, fileName) {
      var r = C.importText(text, course);
      if (!r.ok) { say(r.error + " Your current history is unchanged.", true); return; }
      state = r.data;
      persist();
      select.value = state.filter.kind + ":" + state.filter.value;
      render(false);
      say("Imported review history from " + fileName + "." + (r.dropped.length
        ? " Ignored cards this course does not have: " + r.dropped.length + "." : ""));
    }, say);

    render(false);
  }

  Page.boot("tutor-cards", start);
})();
