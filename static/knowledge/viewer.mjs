// The document viewer: one PDF page at a time drawn by PDF.js (vendored under
// static/vendor/pdfjs by scripts/vendor_pdfjs.sh), its text layer (selectable, searchable
// text over the canvas), and the cited sentences' boxes from ingestion (Chunk.boxes, in PDF
// points) drawn over it. Everything it loads comes from the portal.
const config = JSON.parse(document.getElementById("viewer-config").textContent);
const root = document.querySelector("[data-pdf-viewer]");
const stage = root.querySelector("[data-stage]");
const marks = config.highlights;
let current = marks.length ? config.current : -1;
let pageNumber = current >= 0 ? marks[current].page : 1;
let pageCount = config.pages || 1;
let drawing = 0; // the latest draw wins; an older one still in flight is dropped
let zoom = 1; // times the width that fits the screen

const pdfjs = await import(config.lib);
pdfjs.GlobalWorkerOptions.workerSrc = config.worker;

function fail(message) {
  const p = document.createElement("p");
  p.className = "error";
  p.textContent = message;
  stage.replaceChildren(p);
}

let pdf;
try {
  pdf = await pdfjs.getDocument({
    url: config.file,
    isEvalSupported: false,
    standardFontDataUrl: config.fonts,
    cMapUrl: config.cmaps,
    cMapPacked: true,
  }).promise;
  pageCount = pdf.numPages;
  root.querySelector("[data-page-count]").textContent = String(pageCount);
} catch (error) {
  fail(`The PDF could not be opened (${error.message}).`);
  throw error;
}

function boxesOn(number) {
  // The current citation's boxes, then other citations of this document on the same page.
  const out = [];
  marks.forEach((mark, i) => {
    if (!mark.here) { return; }
    for (const [page, x0, y0, x1, y1] of mark.rects) {
      if (page === number) { out.push({ rect: [x0, y0, x1, y1], current: i === current, label: mark.label }); }
    }
  });
  return out;
}

async function draw(number, { toMark = false } = {}) {
  const ticket = ++drawing;
  number = Math.min(Math.max(1, number), pageCount);
  const page = await pdf.getPage(number);
  if (ticket !== drawing) { return; }
  const unscaled = page.getViewport({ scale: 1 });
  const width = Math.max(stage.clientWidth - 2, 200);
  const scale = Math.min(Math.max(zoom * Math.min(width / unscaled.width, 1.6), 0.3), 4);
  const viewport = page.getViewport({ scale });
  const ratio = window.devicePixelRatio || 1;

  const wrap = document.createElement("div");
  wrap.className = "pdf-page";
  wrap.dataset.page = String(number);
  wrap.style.setProperty("--scale-factor", String(scale));
  wrap.style.width = `${Math.floor(viewport.width)}px`;
  wrap.style.height = `${Math.floor(viewport.height)}px`;

  const canvas = document.createElement("canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = `${Math.floor(viewport.width)}px`;
  canvas.style.height = `${Math.floor(viewport.height)}px`;
  canvas.setAttribute("aria-hidden", "true");
  const text = document.createElement("div");
  text.className = "textLayer";
  const layer = document.createElement("div");
  layer.className = "pdf-marks";
  wrap.append(canvas, text, layer);

  await page.render({
    canvasContext: canvas.getContext("2d"),
    viewport,
    // The file's own annotations (a reader's highlights) are not drawn: the only marks on
    // the page are the citations'.
    annotationMode: pdfjs.AnnotationMode.DISABLE,
    transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : null,
  }).promise;
  if (ticket !== drawing) { return; }
  await new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: text, viewport }).render();
  if (ticket !== drawing) { return; }

  for (const box of boxesOn(number)) {
    const [a, b, c, d] = viewport.convertToViewportRectangle(box.rect);
    const div = document.createElement("div");
    div.className = box.current ? "pdf-mark current" : "pdf-mark";
    div.title = box.label;
    div.style.left = `${Math.min(a, c)}px`;
    div.style.top = `${Math.min(b, d)}px`;
    div.style.width = `${Math.abs(c - a)}px`;
    div.style.height = `${Math.abs(d - b)}px`;
    layer.append(div);
  }
  stage.replaceChildren(wrap);
  wrap.dataset.rendered = "true";
  pageNumber = number;
  root.querySelector("[data-page-number]").textContent = String(number);
  root.querySelector("[data-prev-page]").disabled = number <= 1;
  root.querySelector("[data-next-page]").disabled = number >= pageCount;
  if (toMark) {
    // On a phone the highlight may be below the fold: bring it to the middle of the screen.
    const first = layer.querySelector(".pdf-mark.current");
    (first || wrap).scrollIntoView({ block: first ? "center" : "start", inline: "nearest" });
  }
}

function selectMark(i) {
  if (i < 0 || i >= marks.length) { return; }
  const mark = marks[i];
  if (!mark.here) { window.location.assign(mark.href); return; }
  current = i;
  history.replaceState(null, "", mark.href);
  const quote = root.querySelector("[data-mark-text]");
  if (quote) { quote.textContent = mark.text; }
  for (const link of root.querySelectorAll("[data-mark]")) {
    if (Number(link.dataset.mark) === i) { link.setAttribute("aria-current", "true"); } else { link.removeAttribute("aria-current"); }
  }
  draw(mark.page, { toMark: true });
}

root.querySelector("[data-prev-page]").addEventListener("click", () => draw(pageNumber - 1));
root.querySelector("[data-next-page]").addEventListener("click", () => draw(pageNumber + 1));
function setZoom(value) {
  zoom = Math.min(Math.max(value, 0.5), 4);
  root.querySelector("[data-zoom-level]").textContent = `${Math.round(zoom * 100)} %`;
  draw(pageNumber);
}
root.querySelector("[data-zoom-out]").addEventListener("click", () => setZoom(zoom / 1.25));
root.querySelector("[data-zoom-in]").addEventListener("click", () => setZoom(zoom * 1.25));
root.querySelector("[data-show-mark]")?.addEventListener("click", () => selectMark(current));
root.querySelector("[data-prev-mark]")?.addEventListener("click", () => selectMark(current - 1));
root.querySelector("[data-next-mark]")?.addEventListener("click", () => selectMark(current + 1));
for (const link of root.querySelectorAll("[data-mark]")) {
  link.addEventListener("click", (event) => {
    const i = Number(link.dataset.mark);
    if (marks[i].here) { event.preventDefault(); selectMark(i); }
  });
}
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || event.target.closest("input, textarea, select")) { return; }
  const actions = {
    ArrowLeft: () => draw(pageNumber - 1),
    ArrowRight: () => draw(pageNumber + 1),
    "+": () => setZoom(zoom * 1.25),
    "-": () => setZoom(zoom / 1.25),
    n: () => selectMark(current + 1),
    p: () => selectMark(current - 1),
  };
  if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
});
let resizing;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => draw(pageNumber), 200);
});

await draw(pageNumber, { toMark: current >= 0 });
