/*
 * Study planner page: renders window.TUTOR_COURSE with the learner's ticks.
 * Model in planner-model.js, storage in tutor-store.js. The table is built once per
 * grouping and then only updated, so keyboard focus stays where the learner left it.
 */
(function () {
  "use strict";
  var P = window.TutorPlanner;
  var Store = window.TutorStore;
  var Page = window.TutorPage;
  var el = Page.el, siteBase = Page.siteBase, storage = Page.storage, todayIso = Page.todayIso;

  function srOnly(text) {
    return el("span", { className: "tutor-sr", text: text });
  }

  function start(root) {
    var course = window.TUTOR_COURSE;
    if (!course || !Array.isArray(course.modules)) {
      root.appendChild(el("p", { className: "tutor-notice tutor-notice--error", role: "alert",
        text: "The course data did not load, so the planner cannot show the modules. Rebuild the site or reload the page." }));
      return;
    }
    var base = siteBase();
    var loaded = Store.load(storage(), P.STORAGE_KEY, P.APP, P.VERSION, P.validate, P.freshState);
    var state = loaded.data;
    if (!P.groupIsValid(course, state.view.group)) state.view.group = "track";
    var rows = {};   // module id -> {row, boxes, left, flag}

    // --- notice -----------------------------------------------------------------------
    var status = Page.notice("planner-notice");
    var notice = status.node, say = status.say;

    function persist() {
      var problem = Store.save(storage(), P.STORAGE_KEY, P.APP, P.VERSION, state);
      if (problem) say(problem, true);
    }

    // --- controls ---------------------------------------------------------------------
    var groupSelect = el("select", { id: "planner-group" });
    groupSelect.appendChild(el("option", { value: "track", text: "All modules, by track" }));
    (course.paths || []).forEach(function (p) {
      var hours = P.totalHours(p.modules.map(function (id) {
        return course.modules.filter(function (m) { return m.id === id; })[0];
      }).filter(Boolean));
      groupSelect.appendChild(el("option", { value: "path:" + p.id,
        text: "Path: " + p.title + " (" + P.fmtHours(hours) + " h)" }));
    });
    groupSelect.value = state.view.group;

    var hpw = el("input", { id: "planner-hpw", type: "number", min: "0.5", max: "168", step: "0.5",
      inputmode: "decimal" });
    if (state.pace.hoursPerWeek) hpw.value = String(state.pace.hoursPerWeek);
    var target = el("input", { id: "planner-target", type: "date" });
    if (state.pace.target) target.value = state.pace.target;

    var remainingEl = el("strong", { "data-testid": "hours-remaining" });
    var totalEl = el("span", { "data-testid": "hours-total" });
    var countEl = el("span", { "data-testid": "modules-done" });
    var finishEl = el("p", { "data-testid": "finish-estimate" });
    var targetEl = el("p", { "data-testid": "target-estimate" });

    var exportBtn = el("button", { type: "button", className: "tutor-btn", "data-testid": "planner-export",
      text: "Export progress" });
    var importInput = el("input", { id: "planner-import", type: "file", accept: "application/json,.json",
      "data-testid": "planner-import" });
    var importLabel = el("label", { "for": "planner-import", text: "Import progress (a JSON file exported here)" });
    var clearBtn = el("button", { type: "button", className: "tutor-btn", text: "Clear all ticks" });

    var controls = el("div", { className: "tutor-controls" }, [
      el("div", { className: "tutor-field" }, [el("label", { "for": "planner-group", text: "Show" }), groupSelect]),
      el("div", { className: "tutor-field" }, [el("label", { "for": "planner-hpw", text: "Hours per week" }), hpw]),
      el("div", { className: "tutor-field" }, [el("label", { "for": "planner-target", text: "Target date" }), target])
    ]);
    var summary = el("div", { className: "tutor-summary", "aria-live": "polite" }, [
      el("p", {}, ["Remaining: ", remainingEl, " of ", totalEl, " hours. Modules done: ", countEl, "."]),
      finishEl, targetEl
    ]);
    var actions = el("div", { className: "tutor-actions" }, [
      exportBtn, clearBtn, el("div", { className: "tutor-field" }, [importLabel, importInput])
    ]);
    var groupsBox = el("div", { className: "tutor-groups" });

    root.textContent = "";
    [notice, controls, summary, actions, groupsBox].forEach(function (n) { root.appendChild(n); });
    if (loaded.notice) say(loaded.notice, true);

    // --- table ------------------------------------------------------------------------
    function currentModules() {
      var seen = {};
      var out = [];
      P.groups(course, state.view.group).forEach(function (g) {
        g.modules.forEach(function (m) { if (!seen[m.id]) { seen[m.id] = 1; out.push(m); } });
      });
      return out;
    }

    function build() {
      groupsBox.textContent = "";
      rows = {};
      P.groups(course, state.view.group).forEach(function (g) {
        var headingId = "planner-" + g.id;
        var groupLeft = el("span", { className: "tutor-group-left" });
        var section = el("section", { "aria-labelledby": headingId, "data-group": g.id });
        section.appendChild(el("h2", { id: headingId }, [g.title + " ", groupLeft]));
        var table = el("table", { className: "tutor-planner-table" });
        table.appendChild(el("caption", { className: "tutor-sr", text: g.title + ": modules and hours" }));
        var head = el("tr");
        ["Module", "Done", "Read", "Lab", "Drill", "Hours left", "Prerequisites"].forEach(function (h) {
          head.appendChild(el("th", { scope: "col", text: h }));
        });
        table.appendChild(el("thead", {}, [head]));
        var body = el("tbody");
        g.modules.forEach(function (m) {
          var tr = el("tr", { "data-module": m.id });
          var passed = (course.labs_passed || {})[m.id];  // present when served from a learner's checkout
          tr.appendChild(el("th", { scope: "row" }, [
            el("a", { href: base + m.url, text: m.id + " · " + m.title })
          ].concat(passed ? [el("span", { className: "tutor-labs-passed", "data-testid": "labs-passed-" + m.id,
            text: " · labs passed: " + passed.done + " of " + passed.total })] : [])));
          var all = el("input", { type: "checkbox", "data-testid": "done-" + m.id,
            "aria-label": m.id + " done (all parts)" });
          all.addEventListener("change", function () {
            state = P.setModule(state, m.id, all.checked);
            persist();
            update();
          });
          tr.appendChild(el("td", {}, [all]));
          var boxes = { all: all };
          P.PARTS.forEach(function (part) {
            var box = el("input", { type: "checkbox", "data-testid": part + "-" + m.id });
            box.addEventListener("change", function () {
              state = P.setPart(state, m.id, part, box.checked);
              persist();
              update();
            });
            boxes[part] = box;
            tr.appendChild(el("td", {}, [el("label", { className: "tutor-part" }, [
              box, " " + P.fmtHours(+m.hours[part] || 0) + " h", srOnly(" " + P.PART_LABELS[part].toLowerCase() + ", " + m.id)
            ])]));
          });
          var left = el("td", { "data-testid": "left-" + m.id });
          var flag = el("td", { "data-testid": "prereq-" + m.id });
          tr.appendChild(left);
          tr.appendChild(flag);
          body.appendChild(tr);
          rows[m.id] = { row: tr, boxes: boxes, left: left, flag: flag, module: m, groupLeft: groupLeft };
        });
        table.appendChild(body);
        section.appendChild(el("div", { className: "tutor-table-wrap" }, [table]));
        section._groupLeft = groupLeft;
        section._modules = g.modules;
        groupsBox.appendChild(section);
      });
      update();
    }

    function update() {
      Object.keys(rows).forEach(function (id) {
        var r = rows[id];
        var status = P.moduleStatus(r.module, state);
        r.row.setAttribute("data-status", status);
        r.boxes.all.checked = status === "done";
        r.boxes.all.indeterminate = status === "partial";
        P.PARTS.forEach(function (p) { r.boxes[p].checked = P.isPartDone(state, id, p); });
        r.left.textContent = P.fmtHours(P.moduleRemaining(r.module, state)) + " h";
        var missing = P.missingPrerequisites(course, state, id);
        r.flag.textContent = "";
        if (!(r.module.prerequisites || []).length) {
          r.flag.appendChild(el("span", { className: "tutor-muted", text: "none" }));
        } else if (missing.length && status !== "done") {
          r.flag.appendChild(el("span", { className: "tutor-flag", "data-testid": "prereq-flag-" + id },
            ["Not yet done: "].concat(missing.map(function (pm, i) {
              return el("span", {}, [i ? ", " : "", el("a", { href: base + (pm.url || ""), text: pm.id })]);
            }))));
        } else {
          r.flag.appendChild(el("span", { className: "tutor-ok", text: r.module.prerequisites.join(", ") + " done" }));
        }
      });
      Array.prototype.forEach.call(groupsBox.children, function (section) {
        section._groupLeft.textContent = "(" + P.fmtHours(P.remainingHours(section._modules, state)) +
          " of " + P.fmtHours(P.totalHours(section._modules)) + " h left)";
      });
      var mods = currentModules();
      var remaining = P.remainingHours(mods, state);
      remainingEl.textContent = P.fmtHours(remaining);
      totalEl.textContent = P.fmtHours(P.totalHours(mods));
      countEl.textContent = mods.filter(function (m) { return P.moduleStatus(m, state) === "done"; }).length +
        " of " + mods.length;
      var today = todayIso();
      if (remaining === 0) {
        finishEl.textContent = "Everything in this view is done.";
      } else if (state.pace.hoursPerWeek) {
        finishEl.textContent = "At " + P.fmtHours(state.pace.hoursPerWeek) + " hours a week you finish on " +
          P.finishDate(remaining, state.pace.hoursPerWeek, today) + ".";
      } else {
        finishEl.textContent = "Enter hours per week to see a finish date.";
      }
      if (state.pace.target && remaining > 0) {
        var need = P.hoursPerWeekNeeded(remaining, state.pace.target, today);
        targetEl.textContent = need === null
          ? "The target date " + state.pace.target + " is not in the future."
          : "To finish by " + state.pace.target + " you need " + P.fmtHours(need) + " hours a week.";
      } else {
        targetEl.textContent = state.pace.target ? "" : "Enter a target date to see the hours per week it needs.";
      }
    }

    // --- events -----------------------------------------------------------------------
    groupSelect.addEventListener("change", function () {
      state = JSON.parse(JSON.stringify(state));
      state.view.group = groupSelect.value;
      persist();
      build();
    });
    hpw.addEventListener("input", function () {
      var v = parseFloat(hpw.value);
      state = JSON.parse(JSON.stringify(state));
      state.pace.hoursPerWeek = (v > 0 && v <= 168) ? v : null;
      persist();
      update();
    });
    target.addEventListener("change", function () {
      state = JSON.parse(JSON.stringify(state));
      state.pace.target = P.isDate(target.value) ? target.value : null;
      persist();
      update();
    });
    exportBtn.addEventListener("click", function () {
      var name = "tutor-planner-progress-" + todayIso() + ".json";
      Page.downloadJson(name, P.exportText(state));
      say("Progress exported as " + name + ".");
    });
    Page.onFileText(importInput, function (text, fileName) {
      var r = P.importText(text, course);
      if (!r.ok) { say(r.error + " Your current progress is unchanged.", true); return; }
      state = r.data;
      persist();
      groupSelect.value = state.view.group;
      hpw.value = state.pace.hoursPerWeek ? String(state.pace.hoursPerWeek) : "";
      target.value = state.pace.target || "";
      build();
      say("Imported progress from " + fileName + "." + (r.dropped.length
        ? " Ignored modules this course does not have: " + r.dropped.join(", ") + "." : ""));
    }, say);
    clearBtn.addEventListener("click", function () {
      if (!window.confirm("Clear every tick in the planner?")) return;
      state = JSON.parse(JSON.stringify(state));
      state.done = {};
      persist();
      update();
      say("All ticks cleared.");
    });

    build();
  }

  Page.boot("tutor-planner", start);
})();
