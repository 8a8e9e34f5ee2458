"""The documents panel in a real browser: drop files on the upload box, watch the progress
row turn into "Ready" without a reload."""

from __future__ import annotations

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401
    browser_type_launch_args,
    console_errors,
    log_in,
    low_contrast,
    screenshot,
)
from tests.conftest import ingest_markdown

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


def test_an_editor_sets_year_and_tags_and_the_quick_search_filters_by_them(page, live_server, collection, alice, password, console_errors):  # noqa: F811
    early = ingest_markdown(collection, alice, "early.md", "# Early\n\nReciprocal rank fusion, first described.\n")
    later = ingest_markdown(collection, alice, "later.md", "# Later\n\nReciprocal rank fusion, used again.\n")

    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    row = page.locator(f"#doc-{later.pk}")
    row.get_by_text("Edit details").click()
    row.get_by_label("Year").fill("2023")
    row.get_by_label("Tags, separated by commas").fill("hybrid, survey")
    row.get_by_role("button", name="Save details").click()
    page.get_by_text(f"The details of “{later.title}” are saved.").wait_for()
    details = page.locator(f"#doc-{later.pk}").inner_text()
    assert "2023" in details and "hybrid" in details and "survey" in details
    page.locator(f"#doc-{later.pk}").get_by_text("Edit details").click()
    assert low_contrast(page) == []
    screenshot(page, "documents-edit-details")

    page.goto(f"{live_server.url}/collections/{collection.slug}/search/")
    page.get_by_label("Search the collection").fill("reciprocal rank fusion")
    page.get_by_text("Filters").click()
    page.get_by_label("Tag").fill("survey")
    page.get_by_role("button", name="Search").click()
    results = page.locator("#search-results table")
    results.wait_for()
    assert later.title in results.inner_text()
    assert early.title not in results.inner_text()
    assert low_contrast(page) == []
    screenshot(page, "quick-search-filters")
    assert console_errors == []
