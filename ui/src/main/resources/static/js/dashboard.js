// Fills the dashboard's health strip from the public health endpoints (no inline script: CSP).
(function () {
  'use strict';

  function show(id, status) {
    var el = document.getElementById(id);
    if (!el) { return; }
    el.textContent = status;
    el.classList.remove('pill-good', 'pill-bad', 'pill-neutral');
    el.classList.add(status === 'UP' ? 'pill-good' : (status === '…' ? 'pill-neutral' : 'pill-bad'));
  }

  function poll(url, id) {
    fetch(url, {headers: {'Accept': 'application/json'}, credentials: 'same-origin'})
      .then(function (r) { return r.json(); })
      .then(function (body) { show(id, body.status || 'UNKNOWN'); })
      .catch(function () { show(id, 'DOWN'); });
  }

  function refresh() {
    poll('/actuator/health', 'health-status');
    poll('/actuator/health/liveness', 'health-liveness');
    poll('/actuator/health/readiness', 'health-readiness');
  }

  refresh();
  setInterval(refresh, 5000);
})();
