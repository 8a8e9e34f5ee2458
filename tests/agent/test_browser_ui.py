"""The web UI in a real browser: Playwright driving Debian's Chromium against the live server.

Never downloads a browser: /usr/bin/chromium comes from Debian (`apt-get install chromium`).
Screenshots go to $GROUNDED_SCREENSHOTS when set (`make screenshots` -> docs/screenshots).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Playwright's sync API keeps an event loop running in the main thread for the whole
# session (its browser fixture is session-scoped), so every later ORM call in this process,
# in any test module and in teardown, would be refused as "async unsafe". The calls are
# ordinary blocking ones, so the check is switched off for the session, at collection time.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser_type_launch_args():
    if not CHROMIUM.exists():
        skip_or_fail("needs Debian's Chromium at /usr/bin/chromium (apt-get install chromium)")
    return {
        "executable_path": str(CHROMIUM),
        "headless": True,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"],
    }


@pytest.fixture
def console_errors(page):
    """JavaScript errors and console.error messages of the page; a test asserts it stays empty."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def screenshot(page, name: str, *, full_page: bool = True) -> None:
    folder = os.environ.get("GROUNDED_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=full_page)


# WCAG 2 contrast of every visible text element against its effective background colour.
_LOW_CONTRAST_JS = """
() => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) { return c.slice(0, 3); }
    }
    return [255, 255, 255];
  };
  const bad = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) { continue; }
    const style = getComputedStyle(el);
    if (style.visibility === "hidden") { continue; }
    const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) { bad.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)} "${el.textContent.trim().slice(0, 30)}"`); }
  }
  return bad;
}
"""


def low_contrast(page) -> list[str]:
    """Text elements below WCAG AA (4.5:1); an empty list is readable."""
    return page.evaluate(_LOW_CONTRAST_JS)


def log_in(page, live_server, user, password) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/collections/")


def test_it_updates_the_run_page_live_and_opens_citations_by_mouse_and_keyboard(
    page, live_server, collection, alice, password, console_errors
):
    from agent.models import Run
    from agent.steps import AuditStep, PlanStep, RetrieveStep, SourceBrief
    from agent.types import Outcome, Verdict
    from tests.factories import make_chunk, make_citation, make_document, make_run, make_step

    document = make_document(collection=collection, title="Okapi at TREC-3", media_type="application/pdf")
    chunk = make_chunk(
        document=document, section_title="2 The weighting function", page_start=4, page_end=4,
        text="BM25 saturates term frequency with the constant k1, set to 1.2 in the experiments, "
             "and normalises by document length with b = 0.75.",
    )
    run = make_run(collection=collection, user=alice, question="How does BM25 treat repeated terms?",
                   status=Run.Status.RUNNING, outcome="")
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.evaluate("window.__sameDocument = true")
    page.get_by_text("Waiting for a worker").wait_for()

    # The worker writes steps; the page shows them without reloading.
    query = "bm25 term frequency saturation"
    make_step(run=run, step=PlanStep(question=run.question, sub_queries=[query]))
    page.locator("[data-stage=plan]").get_by_text("bm25 term frequency saturation").wait_for()
    make_step(run=run, step=RetrieveStep(queries=[query], k=5, per_query={query: [SourceBrief(chunk_id=chunk.pk)]}),
              duration_ms=35)
    make_step(run=run, step=AuditStep(sources=[chunk.pk], can_retry=True, verdict=Verdict.SUFFICIENT))
    page.locator("[data-stage=audit]").get_by_text("SUFFICIENT").wait_for()
    make_citation(run=run, chunk=chunk, marker=1, quote="saturates term frequency with the constant k1")
    run.status, run.outcome, run.latency_ms = Run.Status.DONE, Outcome.ANSWER, 850
    run.answer = "BM25 saturates repeated terms through k1 [1]."
    run.save()
    page.locator("#run[data-final='1']").wait_for()
    assert page.evaluate("window.__sameDocument") is True
    # Polling stops once the run is final.
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/status/" in request.url else None)
    page.wait_for_timeout(2500)
    assert polls == []
    screenshot(page, "sample-run-page")

    page.locator(".answer-text button.cite").click()
    mark = page.locator("#citation-panel mark")
    mark.wait_for()
    assert mark.inner_text() == "saturates term frequency with the constant k1"
    panel = page.locator("#citation-panel")
    assert "Okapi at TREC-3" in panel.inner_text() and "Page 4" in panel.inner_text()
    screenshot(page, "sample-citation-panel")

    # Keyboard: Escape closes the panel; Tab reaches a marker; Enter opens it again.
    page.keyboard.press("Escape")
    assert panel.is_hidden()
    page.locator(".sources button.cite").focus()
    page.keyboard.press("Enter")
    page.locator("#citation-panel mark").wait_for()
    assert low_contrast(page) == []

    # 360 px: nothing wider than the screen.
    page.set_viewport_size({"width": 360, "height": 740})
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, "run-page-360px", full_page=False)
    assert console_errors == []


def test_it_shows_a_refusal_card_and_the_history_on_a_phone(
    page, live_server, collection, alice, password, console_errors
):
    from agent.steps import AuditStep, RetrieveStep, SourceBrief
    from agent.types import Outcome, Verdict
    from tests.factories import make_chunk, make_document, make_run, make_step

    document = make_document(collection=collection, title="Dense Passage Retrieval")
    chunk = make_chunk(document=document, page_start=3,
                       text="DPR encodes questions and passages with two BERT encoders.")
    run = make_run(collection=collection, user=alice, question="What was the price of tea in 1850?",
                   outcome=Outcome.REFUSAL, answer="", context_chunk_ids=[chunk.pk], latency_ms=420,
                   missing_evidence="No document in this collection is about tea or prices.")
    query = "price of tea 1850"
    make_step(run=run, step=RetrieveStep(queries=[query], k=5, per_query={query: [SourceBrief(chunk_id=chunk.pk)]}))
    make_step(run=run, step=AuditStep(sources=[chunk.pk], can_retry=False, verdict=Verdict.INSUFFICIENT_REFUSE,
                                      missing=["the price of tea"]))
    make_run(collection=collection, user=alice, question="Which encoder does DPR use?", latency_ms=900)
    page.set_viewport_size({"width": 360, "height": 740})
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    card = page.locator("[data-outcome=refusal]")
    card.wait_for()
    text = card.inner_text()
    assert "Not answered" in text and "price of tea 1850" in text and "DPR encodes questions" in text
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert low_contrast(page) == []
    screenshot(page, "refusal-360px")
    page.goto(f"{live_server.url}/collections/{collection.slug}/questions/?outcome=REFUSAL")
    rows = page.locator("table.history tbody tr")
    assert rows.count() == 1 and "price of tea" in rows.first.inner_text()
    assert low_contrast(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert console_errors == []


@pytest.mark.worker
@pytest.mark.slow
# Ingesting a paper and two full runs take ~80 s here, several times that on a loaded CI box.
@pytest.mark.timeout(600)
def test_it_answers_with_citations_and_refuses_out_of_scope_end_to_end(
    page, live_server, collection, alice, password, console_errors, celery_worker_process
):
    """Log in, upload a real paper, watch it become ready, ask, open a citation, get a refusal."""
    import re

    from tests.conftest import paper

    pdf = paper("1904.08375v2_doc2query")
    page.set_default_timeout(30_000)
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    page.set_input_files("#upload-files", str(pdf))
    page.locator("#upload-form button[type=submit]").click()
    # The documents table is polled: the row turns Ready without a reload.
    page.locator("tr[data-status=ready]").get_by_text("Ready").wait_for(timeout=240_000)

    # Quick search shows the fused ranking with each retriever's rank, without leaving the page.
    page.fill("#id_search_q", "predict queries for each document")
    page.locator("#search button[type=submit]").click()
    page.locator("#search-results table.search-results").wait_for()
    assert "BM25 rank" in page.locator("#search-results").inner_text()
    assert page.locator("#search-results tbody tr").count() >= 1

    page.locator("#ask textarea[name=question]").fill("What does Doc2query predict for each document?")
    page.locator("#ask button[type=submit]").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    # Attached, not visible: the steps fold once the run is done, which may be before this line.
    page.locator("[data-stage=retrieve]").first.wait_for(state="attached", timeout=120_000)
    page.locator("#run[data-final='1']").wait_for(timeout=180_000)
    stages = page.locator("[data-stage]").evaluate_all("els => els.map(e => e.dataset.stage)")
    assert stages[:2] == ["plan", "retrieve"] and "generate" in stages, stages
    assert low_contrast(page) == []
    screenshot(page, "run-page")

    marker = page.locator(".answer-text button.cite").first
    marker.click()
    page.locator("#citation-panel .panel-body").wait_for()
    mark = page.locator("#citation-panel mark")
    assert mark.count() == 1, page.locator("#citation-panel").inner_html()
    quoted = mark.inner_text().strip()
    assert quoted and quoted in page.locator("#citation-panel .chunk-text").inner_text()
    pdf_link = page.locator("#citation-panel a", has_text="Open the PDF")
    assert re.search(r"/documents/\d+/.*#page=\d+$", pdf_link.get_attribute("href"))
    pdf_response = page.request.get(live_server.url + pdf_link.get_attribute("href").split("#")[0])
    assert pdf_response.ok and pdf_response.headers["content-type"] == "application/pdf"
    screenshot(page, "citation-panel")

    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    page.locator("#ask textarea[name=question]").fill("What was the price of Ceylon tea in London in 1850?")
    page.locator("#ask button[type=submit]").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    card = page.locator("[data-outcome=refusal]")
    card.wait_for(timeout=180_000)
    assert "What was searched" in card.inner_text()
    assert low_contrast(page) == []
    screenshot(page, "refusal")
    assert console_errors == []


def test_the_contrast_check_catches_pale_text(page):
    page.set_content('<p style="color:#aaa">pale</p><p style="color:#1d1f21">dark</p>'
                     '<div style="background:#16324f"><span style="color:#fff">light on navy</span></div>')
    assert [row.split(":")[0] for row in low_contrast(page)] == ["P."]
