/* Grounded: live run page and citation side panel. Our own code, no framework, no CDN.
 *
 * - The run page polls ONE endpoint (data-status-url) that returns rendered fragments and an
 *   `updated` cursor; fragments replace [data-fragment=name] in place, and polling stops once
 *   the run is final.
 * - Citation markers are <button class="cite">, so Tab reaches them and Enter opens the panel.
 */
(function () {
  "use strict";
  // Loaded once per page even if two templates include it, so handlers are bound once.
  if (window.groundedLoaded) { return; }
  window.groundedLoaded = true;

  var POLL_MS = 1000;
  var POLL_MAX_MS = 5000;

  function pollRun(root) {
    var url = root.getAttribute("data-status-url");
    var cursor = root.getAttribute("data-cursor") || "";
    var delay = POLL_MS;

    function apply(data) {
      var fragments = data.fragments || {};
      Object.keys(fragments).forEach(function (name) {
        var el = root.querySelector('[data-fragment="' + name + '"]');
        if (el) { el.innerHTML = fragments[name]; }
      });
      cursor = data.updated;
      root.setAttribute("data-cursor", cursor);
    }

    function tick() {
      fetch(url + "?since=" + encodeURIComponent(cursor), {
        headers: { "Accept": "application/json" }, credentials: "same-origin"
      }).then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      }).then(function (data) {
        var changed = data.updated !== cursor;
        apply(data);
        if (data.final) {
          root.setAttribute("data-final", "1");
          return;
        }
        // Poll quickly while things happen, back off while the worker is quiet.
        delay = changed ? POLL_MS : Math.min(delay * 1.5, POLL_MAX_MS);
        window.setTimeout(tick, delay);
      }).catch(function () {
        delay = POLL_MAX_MS;
        window.setTimeout(tick, delay);
      });
    }

    if (root.getAttribute("data-final") !== "1") { window.setTimeout(tick, POLL_MS); }
  }

  var lastOpener = null;

  function openPanel(button) {
    var panel = document.getElementById("citation-panel");
    if (!panel) { return; }
    var content = panel.querySelector("[data-panel-content]");
    var url = button.getAttribute("data-panel-url");
    lastOpener = button;
    fetch(url + "?fragment=1", { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) { throw new Error("status " + response.status); }
      return response.text();
    }).then(function (html) {
      content.innerHTML = html;
      panel.hidden = false;
      document.querySelectorAll("button.cite").forEach(function (b) {
        b.setAttribute("aria-expanded", b.getAttribute("data-panel-url") === url ? "true" : "false");
      });
      var title = panel.querySelector("#citation-panel-title");
      if (title) { title.focus(); }
    }).catch(function () {
      // Fall back to the full page of the citation.
      window.location.href = url;
    });
  }

  function closePanel() {
    var panel = document.getElementById("citation-panel");
    if (!panel || panel.hidden) { return; }
    panel.hidden = true;
    document.querySelectorAll("button.cite").forEach(function (b) { b.setAttribute("aria-expanded", "false"); });
    if (lastOpener && document.body.contains(lastOpener)) { lastOpener.focus(); }
  }

  function searchBox(form) {
    var target = document.getElementById(form.getAttribute("data-results"));
    if (!target) { return; }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var params = new URLSearchParams(new FormData(form));
      params.set("fragment", "1");
      target.setAttribute("aria-busy", "true");
      fetch(form.action + "?" + params.toString(), { credentials: "same-origin" }).then(function (response) {
        return response.text();
      }).then(function (html) {
        target.innerHTML = html;
        target.removeAttribute("aria-busy");
      });
    });
  }

  document.addEventListener("click", function (event) {
    var cite = event.target.closest("button.cite");
    if (cite) { event.preventDefault(); openPanel(cite); return; }
    if (event.target.closest("[data-panel-close]")) { closePanel(); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { closePanel(); }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var run = document.getElementById("run");
    if (run && run.getAttribute("data-status-url")) { pollRun(run); }
    document.querySelectorAll("form[data-results]").forEach(searchBox);
  });
})();
