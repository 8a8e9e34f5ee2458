"""Citations of text sources, phone layouts, and the small UI helpers, in real Chromium.

Every page here is also checked for console errors, which is where Chromium reports a
script or style refused by the Content-Security-Policy.
"""

from __future__ import annotations

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401
    browser_type_launch_args,
    console_errors,
    log_in,
    screenshot,
)
from tests.conftest import ingest_markdown

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FILLER = "\n\n".join(
    f"## Section {n}\n\nParagraph {n} describes an unrelated detail of the experimental setup, "
    f"with enough words to fill a screen of text on any device, number {n}."
    for n in range(1, 60)
)
# The outermost elements that reach past the right edge of the screen, for the failure message.
WIDER_THAN_SCREEN_JS = """
() => [...document.querySelectorAll("body *")]
  .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .filter((el) => !el.parentElement || el.parentElement.getBoundingClientRect().right <= document.documentElement.clientWidth + 1)
  .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}px`)
"""
PASSAGE = "The reranker improved recall at ten by four points on the held-out queries."


def _cited_markdown_run(collection, alice):
    from agent.models import Run
    from tests.factories import make_citation, make_run

    document = ingest_markdown(collection, alice, "rerank-notes.md", f"# Rerank notes\n\n{FILLER}\n\n## Results\n\n{PASSAGE}\n")
    chunk = document.chunks.filter(text__contains="recall at ten").get()
    run = make_run(collection=collection, user=alice, question="How much did the reranker help?",
                   status=Run.Status.DONE, outcome="ANSWER",
                   answer="It improved recall at ten by four points [1].")
    make_citation(run=run, chunk=chunk, marker=1, quote="improved recall at ten by four points")
    return run


def test_a_markdown_citation_is_labelled_as_such_and_opens_at_the_passage(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    run = _cited_markdown_run(collection, alice)
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.locator(".answer-text button.cite").click()
    panel = page.locator("#citation-panel")
    panel.locator("mark").wait_for()
    text = panel.inner_text()
    assert "PDF" not in text and "Page 1" not in text
    link = panel.get_by_role("link", name="Open the Markdown document at this passage")
    href = link.get_attribute("href")
    page.goto(f"{live_server.url}{href}")
    passage = page.locator("#passage")
    passage.wait_for()
    assert "improved recall at ten by four points" in page.locator("#passage mark").inner_text()
    # The browser scrolled to the passage: it is on screen, and the page is not at its top.
    box = passage.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]
    assert page.evaluate("window.scrollY") > 0
    screenshot(page, "text-source-at-passage", full_page=False)
    assert console_errors == []


def test_on_a_phone_the_citation_sheet_scrolls_to_the_highlighted_quote(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from agent.models import Run
    from tests.factories import make_chunk, make_citation, make_document, make_run

    document = make_document(collection=collection, title="A long paper")
    long_text = " ".join(f"Sentence {n} of the method section says nothing of interest." for n in range(80))
    chunk = make_chunk(document=document, page_start=7, page_end=7,
                       text=long_text + " The key result is a gain of four points in recall.")
    run = make_run(collection=collection, user=alice, question="What is the key result?",
                   status=Run.Status.DONE, outcome="ANSWER", answer="A four point gain [1].")
    make_citation(run=run, chunk=chunk, marker=1, quote="The key result is a gain of four points in recall.")
    page.set_viewport_size({"width": 360, "height": 740})
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.locator(".answer-text button.cite").click()
    mark = page.locator("#citation-panel mark")
    mark.wait_for()
    page.wait_for_timeout(400)  # smooth scrolling settles
    sheet = page.locator("#citation-panel").bounding_box()
    box = mark.bounding_box()
    assert sheet is not None and box is not None
    assert sheet["y"] <= box["y"] and box["y"] + box["height"] <= sheet["y"] + sheet["height"] + 1, (sheet, box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, "citation-sheet-360px", full_page=False)
    assert console_errors == []


def test_the_collection_page_fits_a_360px_screen(page, live_server, collection, alice, password, console_errors):  # noqa: F811
    from tests.factories import make_document

    for n in range(3):
        make_document(collection=collection, title=f"1706.03762v5 attention is all you need, version {n}",
                      original_name=f"1706.03762v5_attention_is_all_you_need_with_a_long_file_name_{n}.pdf",
                      status="ready")
    page.set_viewport_size({"width": 360, "height": 740})
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    page.locator("#documents").wait_for()
    wide = page.evaluate(WIDER_THAN_SCREEN_JS)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360, wide
    screenshot(page, "collection-360px")
    assert console_errors == []


def test_the_benchmark_form_counts_runs_and_a_new_token_can_be_copied(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    import json

    from agent.benchmark import service as sb

    questions = [
        {"question_id": f"Q{n}", "question": f"Question {n}?", "category": "single", "answerable": True,
         "expected_behavior": "ANSWER", "required_evidence_spans": ["an answer"]}
        for n in range(11)
    ]
    bset, _ = sb.benchmark_import(collection=collection, user=alice, name="dev", text=json.dumps(questions))
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/benchmarks/{bset.pk}/")
    total = page.locator("[data-run-total]")
    assert total.inner_text() == "22 runs"
    page.locator("input[name=configs][value=bm25]").check()
    assert total.inner_text() == "33 runs"
    page.locator("input[name=configs][value=hybrid]").uncheck()
    page.locator("input[name=configs][value=agentic]").uncheck()
    page.locator("input[name=configs][value=bm25]").uncheck()
    assert total.inner_text() == "0 runs"

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"{live_server.url}/settings/tokens/")
    page.fill("#id_token_name", "notebook")
    page.get_by_role("button", name="Create token").click()
    token = page.locator("#id_new_token").input_value()
    assert token.startswith("gr_")
    page.get_by_role("button", name="Copy").click()
    page.get_by_text("Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == token
    assert console_errors == []


def test_the_api_docs_render_under_the_content_security_policy(page, live_server, console_errors):  # noqa: F811
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    assert "Grounded API" in page.locator(".swagger-ui .info .title").inner_text()
    assert [e for e in console_errors if "Content Security Policy" in e or "Refused" in e] == []
