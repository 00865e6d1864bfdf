// The live dashboard: charts start from the stored per-minute history and the last seconds of samples,
// then follow the server-sent event stream (/admin/api/console/stream, one "stats" event a second).
(function () {
  'use strict';
  var C = window.StrataConsole;
  if (!C || typeof Chart === 'undefined') { return; }

  var kvChart = new Chart(document.getElementById('kv-chart'), {
    type: 'bar',
    data: {labels: [], datasets: [
      {label: 'used', data: [], backgroundColor: '#2f74c7', pages: []},
      {label: 'cached (evictable)', data: [], backgroundColor: '#d08a00', pages: []},
      {label: 'free', data: [], backgroundColor: '#c9d2dd', pages: []}]},
    options: {
      indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,
      scales: {x: {stacked: true, min: 0, max: 100, ticks: {callback: function (v) { return v + '%'; }}},
        y: {stacked: true}},
      plugins: {legend: {labels: {boxWidth: 12}}, tooltip: {callbacks: {label: function (ctx) {
        var pages = ctx.dataset.pages[ctx.dataIndex];
        return ctx.dataset.label + ': ' + C.number(pages, 0) + ' pages (' + ctx.parsed.x.toFixed(1) + '%)';
      }}}}
    }
  });

  var prefixChart = C.timeChart('prefix-chart', [
    {label: 'hit rate, last 1,000 req.'}, {label: 'hit rate per minute', dashed: true},
    {label: 'cached share of prompt tokens', color: '#1f7a4d'}], {min: 0, max: 1, percent: true});
  var loadChart = C.timeChart('load-chart', [
    {label: 'running'}, {label: 'waiting'},
    {label: 'generation tok/s', axis: 'y2', color: '#1f7a4d'}, {label: 'prompt tok/s', axis: 'y2', color: '#7a4fc2', dashed: true}],
    {yTitle: 'requests', y2Title: 'tokens/s'});
  var latencyChart = C.timeChart('latency-chart', [
    {label: 'TTFT p50'}, {label: 'TTFT p99', dashed: true},
    {label: 'ITL p50', color: '#1f7a4d'}, {label: 'ITL p99', color: '#1f7a4d', dashed: true}], {yTitle: 'ms'});

  function text(id, value) {
    var el = document.getElementById(id);
    if (el) { el.textContent = value; }
  }

  function renderBuckets(buckets) {
    kvChart.data.labels = buckets.map(function (b) {
      return b.name.toUpperCase() + (b.pageBytes ? ' · ' + C.bytes(b.pageBytes) + '/page' : '');
    });
    var sets = kvChart.data.datasets;
    ['used', 'cached', 'free'].forEach(function (field, i) {
      sets[i].data = buckets.map(function (b) { return b.total ? b[field] * 100 / b.total : 0; });
      sets[i].pages = buckets.map(function (b) { return b[field]; });
    });
    kvChart.update('none');

    var box = document.getElementById('kv-buckets');
    box.textContent = '';
    buckets.forEach(function (b) {
      var div = document.createElement('div');
      div.className = 'kv-bucket';
      div.id = 'bucket-' + b.name;
      div.setAttribute('data-used', b.used);
      div.setAttribute('data-cached', b.cached);
      div.setAttribute('data-free', b.free);
      var h = document.createElement('h3');
      h.textContent = b.name;
      div.appendChild(h);
      var dl = document.createElement('dl');
      [['Page size', b.pageBytes ? C.bytes(b.pageBytes) : 'n/a'],
        ['Pages', C.number(b.total, 0) + (b.totalBytes ? ' · ' + C.bytes(b.totalBytes) : '')],
        ['Used', C.number(b.used, 0) + (b.pageBytes ? ' · ' + C.bytes(b.used * b.pageBytes) : '')],
        ['Cached', C.number(b.cached, 0) + (b.pageBytes ? ' · ' + C.bytes(b.cached * b.pageBytes) : '')],
        ['Free', C.number(b.free, 0)]].forEach(function (row) {
        var dt = document.createElement('dt'); dt.textContent = row[0];
        var dd = document.createElement('dd'); dd.textContent = row[1];
        dd.className = 'bucket-' + row[0].toLowerCase().replace(' ', '-');
        dl.appendChild(dt); dl.appendChild(dd);
      });
      div.appendChild(dl);
      var ul = document.createElement('ul');
      ul.className = 'kv-kinds';
      ul.setAttribute('aria-label', 'Cache kinds in ' + b.name);
      b.kinds.forEach(function (k) {
        var li = document.createElement('li');
        var name = document.createElement('span');
        name.textContent = k.kind + ' (' + k.layers + ' layers, ' + k.groups + ' table' + (k.groups === 1 ? '' : 's') + ')';
        var pages = document.createElement('span');
        pages.textContent = C.number(k.pagesInUse, 0) + ' in use';
        li.appendChild(name); li.appendChild(pages);
        ul.appendChild(li);
      });
      if (!b.kinds.length) {
        var li = document.createElement('li');
        li.textContent = 'per-kind pages need the KV cache manager';
        ul.appendChild(li);
      }
      div.appendChild(ul);
      box.appendChild(div);
    });
    if (!buckets.length) {
      var p = document.createElement('p');
      p.className = 'muted';
      p.textContent = 'No KV pools: the engine is not serving.';
      box.appendChild(p);
    }
  }

  function renderHealth(h) {
    var engine = document.getElementById('health-engine');
    if (engine) {
      engine.textContent = h.up ? 'SERVING' : 'OFFLINE';
      engine.title = h.up ? '' : h.detail;
      engine.classList.remove('pill-good', 'pill-bad', 'pill-neutral');
      engine.classList.add(h.up ? 'pill-good' : 'pill-bad');
    }
    text('health-backend', h.backend);
    text('health-model', h.model + (h.maxModelLen ? ' (' + C.number(h.maxModelLen, 0) + ' ctx)' : ''));
    text('health-uptime', C.duration(h.uptimeSeconds));
    text('health-version', h.version);
  }

  function render(s) {
    renderHealth(s.health);
    renderBuckets(s.buckets);
    text('prefix-window', C.percent(s.prefix.hitRateWindow));
    text('prefix-total', C.percent(s.prefix.hitRateTotal));
    text('prefix-share', C.percent(s.prefix.cachedShare));
    text('prefix-counts', C.number(s.prefix.hits, 0) + ' of ' + C.number(s.prefix.queries, 0)
      + ' prompt tokens hit' + (s.prefix.windowRequests ? ' · window holds ' + s.prefix.windowRequests + ' requests' : ''));
    text('load-running', s.load.running);
    text('load-waiting', s.load.waiting);
    text('load-preempted', s.load.preemptedWaiting);
    text('load-aborted', C.number(s.load.abortedTotal, 0));
    text('load-rps', C.number(s.load.requestsPerSecond, 2));
    text('load-prompt-tps', C.number(s.load.promptTokensPerSecond, 1));
    text('load-gen-tps', C.number(s.load.generationTokensPerSecond, 1));
    text('load-preemptions', C.number(s.load.preemptionsTotal, 0));
    text('lat-ttft-p50', C.ms(s.latency.ttftP50));
    text('lat-ttft-p99', C.ms(s.latency.ttftP99));
    text('lat-itl-p50', C.ms(s.latency.itlP50));
    text('lat-itl-p99', C.ms(s.latency.itlP99));
  }

  // The dashed line is the hit rate of the last minute, as the stored history has it per minute, so the
  // line means the same before and after a restart (a since-start figure would fall to nothing there).
  var prefixSamples = [];

  function minuteHitRate(s) {
    var q = s.prefix.queries, h = s.prefix.hits, last = prefixSamples[prefixSamples.length - 1];
    if (last && q < last[1]) { prefixSamples = []; } // the server restarted: its counters began again
    prefixSamples.push([s.at, q, h]);
    while (prefixSamples.length > 1 && prefixSamples[0][0] < s.at - 60000) { prefixSamples.shift(); }
    var first = prefixSamples[0];
    return q > first[1] ? (h - first[2]) / (q - first[1]) : null;
  }

  function append(s) {
    C.push(prefixChart, s.at, [s.prefix.hitRateWindow, minuteHitRate(s), s.prefix.cachedShare]);
    C.push(loadChart, s.at, [s.load.running, s.load.waiting, s.load.generationTokensPerSecond, s.load.promptTokensPerSecond]);
    C.push(latencyChart, s.at, [s.latency.ttftP50, s.latency.ttftP99, s.latency.itlP50, s.latency.itlP99]);
  }

  function appendMinute(m) {
    var hits = m.prefixQueries ? m.prefixHits / m.prefixQueries : null;
    C.push(prefixChart, m.minute, [m.hitRateWindow, hits, null]);
    C.push(loadChart, m.minute, [m.runningAvg, m.waitingAvg, m.generationTokensPerSecond, m.promptTokensPerSecond]);
    C.push(latencyChart, m.minute, [m.ttftP50, m.ttftP99, m.itlP50, m.itlP99]);
  }

  function updateCharts() {
    [prefixChart, loadChart, latencyChart].forEach(function (c) { if (c) { c.update('none'); } });
  }

  var lastAt = 0;

  function onStats(s) {
    if (s.at <= lastAt) { return; }
    lastAt = s.at;
    render(s);
    append(s);
    updateCharts();
    document.body.setAttribute('data-stats-at', String(s.at));
  }

  function connect() {
    var source = new EventSource('/admin/api/console/stream');
    source.addEventListener('stats', function (e) { onStats(JSON.parse(e.data)); });
    // EventSource reconnects by itself after a drop; nothing to do on error but let it.
    window.addEventListener('beforeunload', function () { source.close(); });
  }

  fetch('/admin/api/console/history?minutes=180', {headers: {'Accept': 'application/json'}, credentials: 'same-origin'})
    .then(function (r) { return r.ok ? r.json() : {minutes: [], recent: []}; })
    .then(function (h) {
      var firstRecent = h.recent.length ? h.recent[0].at : Infinity;
      h.minutes.forEach(function (m) { if (m.minute + 60000 <= firstRecent) { appendMinute(m); } });
      h.recent.forEach(function (s) { lastAt = s.at; append(s); });
      if (h.recent.length) { render(h.recent[h.recent.length - 1]); }
      updateCharts();
    })
    .catch(function () { /* the stream below still fills the charts */ })
    .then(connect);
})();
