/* The run page's chart: best speedup against verifications used, from the live fragment's JSON.
 * The canvas sits outside the polled fragment, so one Chart.js chart is updated after every htmx swap.
 * Without JavaScript (or Chart.js) the table in the fragment carries the same numbers.
 */
(function () {
  "use strict";
  var chart = null;

  function series() {
    var el = document.getElementById("run-series");
    if (!el) return [];
    try { return JSON.parse(el.textContent); } catch (e) { return []; }
  }

  function draw() {
    var canvas = document.getElementById("run-chart");
    if (!canvas || !window.Chart) return;
    var points = series().map(function (p) { return { x: p.verifications, y: p.best_speedup }; });
    canvas.setAttribute("data-points", String(points.length));
    if (chart) {
      chart.data.datasets[0].data = points;
      chart.update("none");
      return;
    }
    chart = new window.Chart(canvas, {
      type: "line",
      data: { datasets: [{ label: "best speedup", data: points, stepped: true, borderColor: "#1d4ed8",
                           backgroundColor: "#1d4ed8", pointRadius: 2 }] },
      options: {
        animation: false, responsive: true, parsing: false,
        scales: {
          x: { type: "linear", title: { display: true, text: "verifications used" }, beginAtZero: true,
               ticks: { precision: 0 } },
          y: { title: { display: true, text: "best speedup over source (×)" }, beginAtZero: true }
        },
        plugins: { legend: { display: false } }
      }
    });
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSwap", draw);
})();
