// Plugins page: each available backend's devices, probed again every 5 s, with free/total memory and
// the properties the backend reports (compute capability, driver, cores...).
(function () {
  'use strict';
  var C = window.StrataConsole;

  var ACRONYMS = {jvm: 'JVM', os: 'OS', cpu: 'CPU', gpu: 'GPU', cuda: 'CUDA', sm: 'SM', id: 'ID', pci: 'PCI'};

  // A backend's device property as words and units: jvmMaxHeapBytes=6320816128 -> "JVM max heap 5.9 GiB"
  function property(key, value) {
    var bytes = /Bytes$/.test(key) && !isNaN(Number(value));
    var words = key.replace(/Bytes$/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_.-]+/)
      .map(function (w) { return ACRONYMS[w] || w; }).join(' ');
    return words + ' ' + (bytes ? C.bytes(Number(value)) : value);
  }

  function render(backends) {
    var seen = {};
    backends.forEach(function (b) {
      var box = document.querySelector('.device-live[data-plugin="' + b.pluginId + '"]');
      if (!box) { return; }
      seen[b.pluginId] = true;
      box.textContent = '';
      (b.devices || []).forEach(function (d) {
        var line = document.createElement('div');
        line.className = 'device-memory';
        var used = d.totalMemoryBytes - d.freeMemoryBytes;
        line.textContent = '#' + d.index + ' ' + d.name + ': ' + C.bytes(used) + ' used of ' + C.bytes(d.totalMemoryBytes)
          + ' (' + C.bytes(d.freeMemoryBytes) + ' free)';
        box.appendChild(line);
        var props = Object.keys(d.properties || {});
        if (props.length) {
          var p = document.createElement('div');
          p.className = 'muted';
          p.textContent = props.sort().map(function (k) { return property(k, d.properties[k]); }).join(' · ');
          box.appendChild(p);
        }
      });
      if (b.jvm) {
        var heap = document.createElement('div');
        heap.className = 'muted';
        heap.textContent = 'JVM heap ' + C.bytes(b.jvm.heapUsedBytes) + ' of ' + C.bytes(b.jvm.heapMaxBytes);
        box.appendChild(heap);
      }
      if (b.error) {
        var err = document.createElement('div');
        err.className = 'reason';
        err.textContent = b.error;
        box.appendChild(err);
      }
      box.setAttribute('data-updated', String(Date.now()));
    });
    document.querySelectorAll('.device-live').forEach(function (box) {
      if (!seen[box.getAttribute('data-plugin')]) { box.textContent = ''; }
    });
  }

  function refresh() {
    fetch('/admin/api/console/devices', {headers: {'Accept': 'application/json'}, credentials: 'same-origin'})
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(render)
      .catch(function () { /* next poll */ });
  }

  // Remove deletes a jar from the plugins folder: ask first (no inline handlers, the CSP forbids them)
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      if (!window.confirm(form.getAttribute('data-confirm'))) { event.preventDefault(); }
    });
  });

  if (document.querySelector('.device-live')) {
    refresh();
    setInterval(refresh, 5000);
  }
})();
