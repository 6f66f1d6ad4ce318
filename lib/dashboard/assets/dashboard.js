// Live refresh for the durable scheduler dashboard. Every few seconds, while the tab is visible,
// it fetches the page it shows and swaps in the elements marked data-live (matched by id). Pages
// work without it; it only saves the reload. It takes no input from the page it fetches other than
// the server's own markup, parsed inertly by DOMParser (scripts in parsed documents never run).
(function () {
  'use strict';
  var INTERVAL_MS = 5000;
  var busy = false;

  function live() {
    return Array.prototype.slice.call(document.querySelectorAll('[data-live][id]'));
  }

  function focusedInside(element) {
    return element.contains(document.activeElement) && document.activeElement !== document.body;
  }

  function refresh() {
    if (busy || document.hidden || live().length === 0) return;
    busy = true;
    fetch(window.location.href, { headers: { 'X-Dashboard-Refresh': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (text) {
        if (text === null) return;
        var next = new DOMParser().parseFromString(text, 'text/html');
        live().forEach(function (element) {
          var fresh = next.getElementById(element.id);
          // Leave alone what the operator is using: a checked box must not vanish under them.
          if (!fresh || focusedInside(element) || element.querySelector('input:checked')) return;
          if (fresh.innerHTML !== element.innerHTML) element.replaceWith(document.importNode(fresh, true));
        });
        document.documentElement.setAttribute('data-refreshed', String(Date.now()));
      })
      .catch(function () {
        // A failed refresh leaves the page as it is; the next tick tries again.
      })
      .then(function () {
        busy = false;
      });
  }

  window.setInterval(refresh, INTERVAL_MS);
  document.addEventListener('visibilitychange', refresh);
})();
