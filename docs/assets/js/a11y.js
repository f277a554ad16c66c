// Material's search overlay is a dialog without a name; screen readers announce it as "Search".
document.addEventListener("DOMContentLoaded", function () {
  var dialog = document.querySelector(".md-search[role=dialog]");
  if (dialog && !dialog.getAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
});

// A wide table scrolls sideways inside Material's wrapper; keyboard users must be able to reach and
// scroll it whatever the fonts and viewport, so every wrapper is focusable and named, not only the ones
// that overflow at load (which depends on the fonts the machine has).
(function () {
  function mark(root) {
    (root.querySelectorAll ? root.querySelectorAll(".md-typeset__scrollwrap") : []).forEach(function (wrap) {
      if (wrap.hasAttribute("tabindex")) return;
      var caption = wrap.querySelector("caption");
      wrap.setAttribute("tabindex", "0");
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", caption ? caption.textContent.trim() : "Table (scrolls sideways)");
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    mark(document);
    new MutationObserver(function () { mark(document); }).observe(document.body, { childList: true, subtree: true });
  });
})();
