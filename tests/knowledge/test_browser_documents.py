"""The documents panel in a real browser: drop files on the upload box, watch the progress
row turn into "Ready" without a reload."""

from __future__ import annotations

import pytest

from tests.agent.test_browser_ui import browser_type_launch_args, console_errors, log_in  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_uploads_dropped_files_and_updates_progress_live(page, live_server, collection, alice, password, console_errors):  # noqa: F811
    from knowledge.ingest import job_run
    from knowledge.models import Document

    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    page.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["# Dropped\\n\\nA dropped Markdown file about retrieval."], "dropped.md", {type: "text/markdown"}));
        data.items.add(new File(["Plain text, also dropped."], "notes.txt", {type: "text/plain"}));
        const zone = document.getElementById("upload-form");
        zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: data, bubbles: true, cancelable: true}));
        zone.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
    }""")
    page.get_by_text("2 files queued for ingestion.").wait_for()
    assert page.locator("#document-rows progress").count() == 2
    page.evaluate("window.__sameDocument = true")

    for document in Document.objects.all():
        job_run(job_id=document.jobs.get().pk)
    page.locator("#document-rows .badge.ok").nth(1).wait_for(timeout=15000)
    assert page.locator("#document-rows progress").count() == 0
    assert page.evaluate("window.__sameDocument") is True  # updated by polling, not a reload
    assert "1 page, 1 passage" in page.locator("#document-rows").inner_text()
    assert console_errors == []
