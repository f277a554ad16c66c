/*
 * DOM helpers shared by the planner and the recall cards pages: element building, the site root,
 * localStorage that may be blocked, a status notice, and JSON export/import through files.
 */
(function () {
  "use strict";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  // The site root, read off the course-data script tag, so links work under any base URL.
  function siteBase() {
    var s = document.querySelector('script[src$="assets/generated/course-data.js"]');
    return s ? s.getAttribute("src").replace(/assets\/generated\/course-data\.js$/, "") : "../";
  }

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }  // blocked in some private modes
  }

  function todayIso() {
    var d = new Date();
    var m = d.getMonth() + 1, day = d.getDate();
    return d.getFullYear() + "-" + (m < 10 ? "0" : "") + m + "-" + (day < 10 ? "0" : "") + day;
  }

  // A polite status line; say("") hides it, say(text, true) marks it as an error.
  function notice(testid) {
    var node = el("div", { className: "tutor-notice", role: "status", "aria-live": "polite", "data-testid": testid });
    node.hidden = true;
    function say(text, isError) {
      node.textContent = text || "";
      node.hidden = !text;
      node.classList.toggle("tutor-notice--error", !!isError);
    }
    return { node: node, say: say };
  }

  function downloadJson(name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    var a = el("a", { href: url, download: name });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 0);
  }

  // Reads the file chosen in a file input as text, hands it to onText(text, fileName), then clears
  // the input so the same file can be chosen again.
  function onFileText(input, onText, say) {
    input.addEventListener("change", function () {
      var file = input.files && input.files[0];
      if (!file) return;
      var reader = new FileReader();
      reader.onload = function () { onText(String(reader.result), file.name); };
      reader.onerror = function () { say("The file could not be read.", true); };
      reader.readAsText(file);
      input.value = "";
    });
  }

  // Starts a page once its root element exists, and marks it ready for tests and styles.
  function boot(rootId, start) {
    function run() {
      var root = document.getElementById(rootId);
      if (root && !root.__tutorStarted) {
        root.__tutorStarted = true;
        start(root);
        root.setAttribute("data-ready", "");
      }
    }
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
    else run();
  }

  window.TutorPage = { el: el, siteBase: siteBase, storage: storage, todayIso: todayIso, notice: notice,
                       downloadJson: downloadJson, onFileText: onFileText, boot: boot };
})();
