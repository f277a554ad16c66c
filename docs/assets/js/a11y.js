// Material's search overlay is a dialog without a name; screen readers announce it as "Search".
document.addEventListener("DOMContentLoaded", function () {
  var dialog = document.querySelector(".md-search[role=dialog]");
  if (dialog && !dialog.getAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
});
