/* On a narrow screen, widen every figure from its column to the whole screen (4 px from each edge), wherever
   the figure stands (a list item is indented), so that the text drawn in it stays readable. */
(function () {
  "use strict";
  var NARROW = 720, EDGE = 4;
  function fit() {
    var figures = document.querySelectorAll(".tutor-figure svg.tutor-svg");
    Array.prototype.forEach.call(figures, function (svg) {
      svg.style.width = ""; svg.style.maxWidth = ""; svg.style.marginLeft = "";
      if (window.innerWidth >= NARROW) return;
      var left = svg.parentNode.getBoundingClientRect().left;
      svg.style.maxWidth = "none";
      svg.style.width = (document.documentElement.clientWidth - 2 * EDGE) + "px";
      svg.style.marginLeft = (EDGE - left) + "px";
    });
  }
  document.addEventListener("DOMContentLoaded", fit);
  window.addEventListener("resize", fit);
})();
