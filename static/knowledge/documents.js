// Documents panel: drag-and-drop upload and progress polling of one JSON endpoint.
(function () {
  "use strict";
  const panel = document.getElementById("documents");
  if (!panel) return;

  const form = document.getElementById("upload-form");
  const input = document.getElementById("upload-files");
  if (form && input) {
    ["dragenter", "dragover"].forEach((name) => form.addEventListener(name, (event) => {
      event.preventDefault();
      form.classList.add("dragging");
    }));
    ["dragleave", "drop"].forEach((name) => form.addEventListener(name, () => form.classList.remove("dragging")));
    form.addEventListener("drop", (event) => {
      event.preventDefault();
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      input.files = event.dataTransfer.files;
      form.submit();
    });
  }
  panel.addEventListener("submit", (event) => {
    const message = event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });

  const url = panel.getAttribute("data-status-url");
  let delay = 1000;
  function busyOnPage() {
    return panel.querySelector('tr[data-status="queued"], tr[data-status="processing"], progress') !== null;
  }
  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) return;
      const data = await response.json();
      const body = document.getElementById("document-rows");
      if (body) {
        for (const id of data.order) {
          const row = document.getElementById("doc-" + id);
          if (row && row.outerHTML !== data.rows[id]) row.outerHTML = data.rows[id];
        }
      }
      if (data.busy) {
        delay = Math.min(delay * 1.2, 5000);
        window.setTimeout(poll, delay);
      }
    } catch (error) {
      window.setTimeout(poll, 5000);
    }
  }
  if (busyOnPage()) window.setTimeout(poll, delay);
})();
