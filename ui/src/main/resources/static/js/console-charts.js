// Shared helpers of the console pages: number formatting, CSRF header, Chart.js line charts over time.
// No inline script anywhere (the CSP forbids it); pages load Chart.js from the WebJar, then this file.
(function () {
  'use strict';

  var COLORS = ['#2f74c7', '#d08a00', '#1f7a4d', '#b42318', '#7a4fc2', '#637083'];

  function pad(n) { return (n < 10 ? '0' : '') + n; }

  // the console writes every moment in UTC and every number as 1,234.5, whatever the browser's locale,
  // so the pages rendered on the server and the charts drawn here agree
  function clock(ms) {
    var d = new Date(ms);
    return pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds()) + ' UTC';
  }

  function number(v, digits) {
    if (v === null || v === undefined || isNaN(v)) { return '–'; }
    return Number(v).toLocaleString('en-US', {maximumFractionDigits: digits === undefined ? 1 : digits,
      minimumFractionDigits: 0});
  }

  function percent(v) {
    return v === null || v === undefined ? '–' : (v * 100).toFixed(1) + ' %';
  }

  function bytes(b) {
    if (b === null || b === undefined) { return '–'; }
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? b.toFixed(0) : b.toFixed(b >= 100 ? 0 : 1)) + ' ' + units[i];
  }

  function ms(v) {
    if (v === null || v === undefined) { return '–'; }
    return v >= 1000 ? (v / 1000).toFixed(2) + ' s' : v.toFixed(v >= 100 ? 0 : 1) + ' ms';
  }

  function duration(seconds) {
    var d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600), m = Math.floor(seconds % 3600 / 60);
    return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + m + 'm ' + Math.floor(seconds % 60) + 's';
  }

  /** The CSRF token rendered into the page (hidden input #csrf), as fetch headers. */
  function csrfHeaders() {
    var el = document.getElementById('csrf');
    var headers = {'Accept': 'application/json'};
    if (el && el.value) { headers[el.getAttribute('data-header') || 'X-XSRF-TOKEN'] = el.value; }
    return headers;
  }

  /**
   * A line chart whose x axis is time (epoch ms on a linear scale, so no date adapter is needed).
   * series: [{label, axis ('y' or 'y2'), dashed}]
   */
  function timeChart(canvasId, series, options) {
    var canvas = document.getElementById(canvasId);
    if (!canvas || typeof Chart === 'undefined') { return null; }
    options = options || {};
    var datasets = series.map(function (s, i) {
      return {label: s.label, data: [], yAxisID: s.axis || 'y', borderColor: s.color || COLORS[i % COLORS.length],
        backgroundColor: s.color || COLORS[i % COLORS.length], borderWidth: 1.6, pointRadius: 0, tension: 0.15,
        borderDash: s.dashed ? [5, 3] : [], spanGaps: false};
    });
    var scales = {
      x: {type: 'linear', ticks: {maxTicksLimit: 6, callback: function (v) { return clock(v); }}},
      y: {beginAtZero: true, min: options.min, max: options.max,
        title: {display: !!options.yTitle, text: options.yTitle},
        ticks: options.percent ? {callback: function (v) { return Math.round(v * 100) + '%'; }} : {}}
    };
    if (series.some(function (s) { return s.axis === 'y2'; })) {
      scales.y2 = {beginAtZero: true, position: 'right', grid: {drawOnChartArea: false},
        title: {display: !!options.y2Title, text: options.y2Title}};
    }
    return new Chart(canvas, {
      type: 'line',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: {mode: 'nearest', axis: 'x', intersect: false},
        plugins: {legend: {labels: {boxWidth: 12}}, tooltip: {callbacks: {
          title: function (items) { return items.length ? clock(items[0].parsed.x) : ''; }}}},
        scales: scales
      }
    });
  }

  /** Appends one point per dataset (values in dataset order; null leaves a gap) and trims old points. */
  function push(chart, x, values, keep) {
    if (!chart) { return; }
    chart.data.datasets.forEach(function (ds, i) {
      ds.data.push({x: x, y: values[i] === undefined ? null : values[i]});
      while (ds.data.length > (keep || 900)) { ds.data.shift(); }
    });
  }

  window.StrataConsole = {clock: clock, number: number, percent: percent, bytes: bytes, ms: ms, duration: duration,
    csrfHeaders: csrfHeaders, timeChart: timeChart, push: push, colors: COLORS};
})();
