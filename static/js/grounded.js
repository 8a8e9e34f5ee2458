/* Grounded: live run page and citation side panel. Our own code, no framework, no CDN.
 *
 * - The run page polls ONE endpoint (data-status-url) that returns rendered fragments and an
 *   `updated` cursor; fragments replace [data-fragment=name] in place, and polling stops once
 *   the run is final. A thread page polls each of its unfinished turns the same way.
 * - Citation markers are <button class="cite">, so Tab reaches them and Enter opens the panel.
 */
(function () {
  "use strict";
  // Loaded once per page even if two templates include it, so handlers are bound once.
  if (window.groundedLoaded) { return; }
  window.groundedLoaded = true;

  var POLL_MS = 1000;
  var POLL_MAX_MS = 5000;

  // The steps fold once the run is done, unless the reader opened or closed them meanwhile.
  function foldSteps(root) {
    root.querySelectorAll("details[data-fold-when-final]").forEach(function (details) {
      if (!details.hasAttribute("data-toggled")) { details.open = false; }
    });
  }

  function pollRun(root) {
    root.querySelectorAll("details[data-fold-when-final] > summary").forEach(function (summary) {
      summary.addEventListener("click", function () { summary.parentElement.setAttribute("data-toggled", "1"); });
    });
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
          foldSteps(root);
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
      if (title) { title.focus({ preventScroll: true }); }
      // The quote may sit far down a long passage; on a phone the sheet shows a few lines only.
      var mark = content.querySelector("mark");
      if (mark) {
        mark.scrollIntoView({ block: "center", inline: "nearest" });
      } else {
        panel.scrollTop = 0;
      }
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

  // Benchmark start form: "N runs: Q questions × C configurations", kept current as boxes are ticked.
  function runCount(form) {
    var total = form.querySelector("[data-run-total]");
    var formula = form.querySelector("[data-run-formula]");
    var split = form.querySelector("select[name=split]");
    if (!total || !formula || !split) { return; }
    form.addEventListener("change", function () {
      var option = split.options[split.selectedIndex];
      var questions = option ? parseInt(option.getAttribute("data-questions"), 10) || 0 : 0;
      var configs = form.querySelectorAll("input[name=configs]:checked").length;
      total.textContent = (questions * configs) + " runs";
      formula.textContent = questions + " questions \u00d7 " + configs + " configurations";
    });
  }

  // A copy button for a read-only field (the new API token); hidden until this script runs.
  function copyButton(button) {
    var id = button.getAttribute("data-copy");
    var field = document.getElementById(id);
    var status = document.querySelector('[data-copy-status="' + id + '"]');
    if (!field) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var said = function (text) { if (status) { status.textContent = text; } };
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(function () { said("Copied."); }, function () {
          said(document.execCommand("copy") ? "Copied." : "Select the token and copy it.");
        });
      } else {
        said(document.execCommand("copy") ? "Copied." : "Select the token and copy it.");
      }
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
    // A thread page's turns that are still being answered follow their runs the same way.
    document.querySelectorAll("section.turn[data-status-url][data-final='0']").forEach(pollRun);
    document.querySelectorAll("form[data-results]").forEach(searchBox);
    document.querySelectorAll("form[data-run-count]").forEach(runCount);
    document.querySelectorAll("button[data-copy]").forEach(copyButton);
  });
})();
