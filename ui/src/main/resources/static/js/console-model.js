// The Model page's comparison chart: bytes of one sequence, DeepSeek-V3.2 against the planned model.
(function () {
  'use strict';
  var C = window.StrataConsole;
  var canvas = document.getElementById('plan-chart');
  if (!canvas || !C || typeof Chart === 'undefined') { return; }
  var mib = function (attr) { return Number(canvas.getAttribute(attr)) / 1048576; };
  new Chart(canvas, {
    type: 'bar',
    data: {
      labels: ['DeepSeek-V3.2', canvas.getAttribute('data-model') + ' (ideal)', canvas.getAttribute('data-model') + ' (paged)'],
      datasets: [{label: 'MiB per sequence', data: [mib('data-v32'), mib('data-ideal'), mib('data-paged')],
        backgroundColor: ['#8a97a8', '#2f74c7', '#7a4fc2']}]
    },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false,
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: function (ctx) {
        return C.bytes(ctx.parsed.y * 1048576);
      }}}},
      // a log axis labels 2, 3, 5... of every decade by default and they overlap; label the decades only
      scales: {y: {type: 'logarithmic', title: {display: true, text: 'MiB per sequence (log scale)'},
        ticks: {callback: function (v) {
          var p = Math.log10(v);
          return Math.abs(p - Math.round(p)) < 1e-9 ? C.number(v, 0) + ' MiB' : '';
        }}}}
    }
  });
})();
