// Material's search overlay is a dialog without a name; screen readers announce it as "Search".
document.addEventListener("DOMContentLoaded", function () {
  var dialog = document.querySelector(".md-search[role=dialog]");
  if (dialog && !dialog.getAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
});

// Wide content scrolls sideways inside its own box, never the page: Material's table wrapper, the
// planner's tables and the prerequisite graph. Keyboard users must be able to reach and scroll each box
// whatever the fonts and viewport, so every such box is focusable and named, not only the ones that
// overflow at load (which depends on the fonts the machine has).
(function () {
  var BOXES = ".md-typeset__scrollwrap, .tutor-table-wrap, .tutor-graph-wrap";

  function mark(root) {
    root.querySelectorAll(BOXES).forEach(function (wrap) {
      if (wrap.hasAttribute("tabindex")) return;
      var caption = wrap.querySelector("caption, svg > title");
      wrap.setAttribute("tabindex", "0");
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", (caption ? caption.textContent.trim() : "Table") + " (scrolls sideways)");
    });
  }

  // A long inline formula scrolls inside itself (tutor.css); only one that overflows now takes a tab
  // stop, so a page of short formulas keeps a short tab order. The observer also sees formulas in tabs
  // and collapsed blocks when they open, and every change of the window's width.
  var sizes = "ResizeObserver" in window ? new ResizeObserver(function (entries) {
    entries.forEach(function (e) { focusIfWide(e.target); });
  }) : null;

  function focusIfWide(m) {
    var wide = m.scrollWidth > m.clientWidth + 1;
    if (wide && !m.hasAttribute("tabindex")) {
      m.setAttribute("tabindex", "0");
      m.setAttribute("data-tutor-scroll", "");
    } else if (!wide && m.hasAttribute("data-tutor-scroll")) {
      m.removeAttribute("tabindex");
      m.removeAttribute("data-tutor-scroll");
    }
  }

  function watchMath(root) {
    root.querySelectorAll('math:not([display="block"])').forEach(function (m) {
      if (m._tutorWatched) return;
      m._tutorWatched = true;
      if (sizes) sizes.observe(m); else focusIfWide(m);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    mark(document);
    watchMath(document);
    new MutationObserver(function () { mark(document); watchMath(document); })
      .observe(document.body, { childList: true, subtree: true });
  });
})();
