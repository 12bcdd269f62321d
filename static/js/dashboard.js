/* Dashboard charts (Chart.js from static/vendor). The same numbers are in the tables beside each chart,
 * so the page reads fine without JavaScript; the charts are for people who would rather look. */
(function () {
  "use strict";

  var COLOURS = ["#9ca3af", "#6b7280", "#15803d", "#4ade80", "#b91c1c", "#f59e0b"];

  function bar(id, labels, datasets, options) {
    var canvas = document.getElementById(id);
    if (!canvas || !window.Chart) return;
    new window.Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: Object.assign({ animation: false, responsive: true, maintainAspectRatio: false,
                               plugins: { legend: { display: datasets.length > 1 } } }, options || {})
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var node = document.getElementById("dashboard-data");
    if (!node) return;
    var data = JSON.parse(node.textContent);
    bar("chart-verification", data.verification.labels,
        [{ label: "steps", data: data.verification.values, backgroundColor: COLOURS }]);
    bar("chart-review", data.review.labels,
        [{ label: "steps", data: data.review.values, backgroundColor: ["#9ca3af", "#60a5fa", "#f59e0b", "#15803d", "#b91c1c"] }]);
    bar("chart-pass-rates", data.passRates.labels, [
      { label: "pass rate %", data: data.passRates.pass, backgroundColor: "#15803d" },
      { label: "equal-pass rate %", data: data.passRates.equalPass, backgroundColor: "#60a5fa" }
    ], { indexAxis: "y", scales: { x: { min: 0, max: 100 } } });
    document.documentElement.setAttribute("data-charts", "drawn");
  });
})();
