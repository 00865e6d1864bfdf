// The Requests page's live table: polls /admin/api/console/requests/live every second; Abort posts to
// /admin/api/console/requests/{id}/abort with the CSRF header.
(function () {
  'use strict';
  var C = window.StrataConsole;
  var rows = document.getElementById('live-rows');
  var count = document.getElementById('live-count');
  var status = document.getElementById('abort-status');

  function cell(tr, value, cls) {
    var td = document.createElement('td');
    td.textContent = value;
    if (cls) { td.className = cls; }
    tr.appendChild(td);
    return td;
  }

  function pages(p) {
    if (!p || !Object.keys(p).length) { return '—'; }
    return [p.large, p.middle, p.small].map(function (n) { return n === undefined ? '–' : n; }).join(' / ');
  }

  function render(list) {
    // keep keyboard focus on an Abort button across refreshes
    var focused = document.activeElement && document.activeElement.getAttribute('data-abort');
    rows.textContent = '';
    count.textContent = list.length;
    list.forEach(function (r) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-request-id', r.id);
      tr.setAttribute('data-phase', r.phase);
      var id = document.createElement('code');
      id.textContent = r.id;
      var td = document.createElement('td');
      td.appendChild(id);
      tr.appendChild(td);
      var phase = document.createElement('span');
      phase.className = 'pill ' + (r.phase === 'decode' ? 'pill-good' : r.phase === 'prefill' ? 'pill-live'
        : r.phase === 'preempted' ? 'pill-warn' : 'pill-neutral');
      phase.textContent = r.phase;
      var ptd = document.createElement('td');
      ptd.appendChild(phase);
      tr.appendChild(ptd);
      cell(tr, C.number(r.promptTokens, 0), 'num');
      cell(tr, C.number(r.cachedTokens, 0), 'num');
      cell(tr, C.number(r.generatedTokens, 0), 'num');
      cell(tr, pages(r.pages), 'num');
      cell(tr, (r.ageMillis / 1000).toFixed(1) + ' s', 'num');
      var btd = document.createElement('td');
      var b = document.createElement('button');
      b.type = 'button';
      b.className = 'button danger';
      b.textContent = 'Abort';
      b.id = 'abort-' + r.id;
      b.setAttribute('data-abort', r.id);
      b.setAttribute('aria-label', 'Abort request ' + r.id);
      btd.appendChild(b);
      tr.appendChild(btd);
      rows.appendChild(tr);
      if (focused === r.id) { b.focus(); }
    });
    if (!list.length) {
      var tr = document.createElement('tr');
      var td = cell(tr, 'No request is running or waiting.', 'muted');
      td.colSpan = 8;
      rows.appendChild(tr);
    }
  }

  function refresh() {
    fetch('/admin/api/console/requests/live', {headers: {'Accept': 'application/json'}, credentials: 'same-origin'})
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.json(); })
      .then(render)
      .catch(function (e) { status.textContent = 'Cannot load live requests: ' + e.message; });
  }

  rows.addEventListener('click', function (e) {
    var id = e.target.getAttribute && e.target.getAttribute('data-abort');
    if (!id) { return; }
    e.target.disabled = true;
    fetch('/admin/api/console/requests/' + encodeURIComponent(id) + '/abort',
      {method: 'POST', headers: C.csrfHeaders(), credentials: 'same-origin'})
      .then(function (r) { return r.json().then(function (body) { return {ok: r.ok, body: body}; }); })
      .then(function (res) {
        status.textContent = res.ok ? 'Abort requested for ' + id + '.' : res.body.error;
        refresh();
      })
      .catch(function (err) { status.textContent = 'Abort failed: ' + err.message; });
  });

  refresh();
  setInterval(refresh, 1000);
})();
