"""The run page in a real browser while a model streams its answer (issue 13 point 4): the
answer's text shows as it is written, then the verified, cited version replaces it."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.agent.test_browser_ui import browser_type_launch_args, console_errors, log_in, screenshot  # noqa: F401
from tests.agent.test_llm_runs import ListRetriever, _new_run
from tests.fake_openai import grounded_responder

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_answer_shows_as_it_is_written_then_verified(page, live_server, collection, alice, password,
                                                         openai_settings, fake_openai, console_errors,  # noqa: F811
                                                         monkeypatch):
    from agent import services
    from agent.models import Run
    from tests.factories import make_chunk, make_document

    sentence = "BM25 is a bag-of-words ranking function used by search engines."
    document = make_document(collection=collection, title="Okapi BM25", original_name="bm25.pdf")
    chunk = make_chunk(document=document, text=sentence + " Its parameters are k1 and b.", page_start=3, page_end=3)
    monkeypatch.setattr(services, "PREVIEW_WRITE_SECONDS", 0.0)
    # The model stops mid-sentence until the page has shown what it wrote so far.
    fake_openai.responder = grounded_responder
    fake_openai.stream_chunk_chars, fake_openai.stream_hold_at = 6, "bag-of"
    openai_settings.LLM_TIMEOUT_SECONDS = openai_settings.LLM_BUDGET_SECONDS = 30.0
    run = _new_run(collection, alice)
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    assert "gpt-4o-mini" in page.locator("[data-run-model]").inner_text()

    def work() -> None:
        try:
            services.run_execute(run_id=run.pk, retriever=ListRetriever([chunk]))
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        preview = page.locator("[data-answer-preview]", has_text="bag-of")
        preview.wait_for(timeout=20_000)
        partial = preview.inner_text()
        final_yet = page.locator("#run").get_attribute("data-final")
        screenshot(page, "run-page-streaming", full_page=False)
    finally:
        fake_openai.stream_resume.set()
        worker.join(timeout=60)
    assert partial.startswith("BM25 is a bag-of") and sentence.startswith(partial.strip())
    assert partial.strip() != sentence
    assert final_yet != "1"

    page.locator("#run[data-final='1']").wait_for(timeout=20_000)
    assert Run.objects.get(pk=run.pk).status == Run.Status.DONE
    assert page.locator("[data-answer-preview]").count() == 0
    answer = page.locator(".answer-text")
    assert sentence in answer.inner_text()
    assert answer.locator("button.cite").count() == 1
    assert console_errors == []
