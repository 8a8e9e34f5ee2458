"""Follow-up threads and asking across collections in a real browser (Debian's Chromium).

Runs are answered in-process by the real loop (local roles) while the page polls, as a
worker would answer them; nothing reaches a broker.
"""

from __future__ import annotations

import re

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401 (fixtures)
    browser_type_launch_args,
    console_errors,
    log_in,
    low_contrast,
    screenshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SBERT = ("Sentence-BERT", "We fine-tune SBERT with a siamese network structure. The default pooling strategy of "
         "SBERT is MEAN. We evaluate the pooling strategies MEAN, MAX and CLS. SBERT uses 768 dimensions.")
DOC2QUERY = ("Doc2query", "Doc2query predicts 10 queries for each document using top-k random sampling. The "
             "expanded documents are indexed with BM25.")


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: True)


def _index(collection, title: str, text: str) -> None:
    from knowledge.indexing.build import index_rebuild
    from tests.factories import make_chunk, make_document

    document = make_document(collection=collection, title=title, original_name=f"{title}.pdf")
    make_chunk(document=document, text=text, page_start=3, page_end=3)
    index_rebuild(collection=collection)


def _answer_latest() -> int:
    """Answer the newest run as a worker would; its id."""
    from agent import services
    from agent.models import Run

    run_id = Run.objects.latest("pk").pk
    services.run_execute(run_id=run_id)
    return run_id


def test_it_asks_two_follow_ups_in_a_thread_and_shows_what_was_searched(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from agent import services

    _index(collection, *SBERT)
    first = services.run_create(collection=collection, user=alice, enqueue=False,
                                question="What is the default pooling strategy of SBERT?")
    services.run_execute(run_id=first.pk)
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{first.pk}/")
    for n, (follow_up, searched) in enumerate([
        ("and what network structure does it fine-tune with?", "What network structure does SBERT fine-tune with?"),
        ("Which pooling strategies does it evaluate?", "Which pooling strategies does SBERT evaluate?"),
    ], start=1):
        page.fill("#id_follow_up", follow_up)
        page.get_by_role("button", name="Ask", exact=True).last.click()
        page.wait_for_url(re.compile(r"/runs/\d+/$"))
        assert page.locator("h1.question").inner_text() == follow_up
        run_id = _answer_latest()
        assert page.url.endswith(f"/runs/{run_id}/")
        # The page polls: the rewrite and the answer appear without a reload.
        page.locator("[data-searched-as]").get_by_text(searched).wait_for()
        page.locator("#run[data-final='1']").wait_for()
        assert page.locator(".sources li").count() >= 1
        assert page.get_by_role("link", name="read the whole thread").count() == 1, n

    page.get_by_role("link", name="read the whole thread").click()
    turns = page.locator("section.turn")
    assert turns.count() == 3
    assert "Searched as: What network structure does SBERT fine-tune with?" in turns.nth(1).inner_text()
    assert "siamese network" in turns.nth(1).inner_text()
    # A citation of a follow-up opens in the side panel, as on the run page.
    turns.nth(2).locator(".answer-text button.cite").first.click()
    page.locator("#citation-panel mark").wait_for()
    assert low_contrast(page) == []
    assert page.get_by_role("link", name="read the whole thread").count() == 0
    screenshot(page, "thread-with-two-follow-ups")

    page.goto(f"{live_server.url}/collections/{collection.slug}/questions/")
    assert page.locator(".threads li").count() == 1
    assert "3 questions" in page.locator(".threads li").inner_text()
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server.url}/runs/{run_id}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert console_errors == []


def _ask(page, live_server, ticks: list[str], question: str) -> None:
    """Ask on the Ask page with these boxes ticked, and wait until the run is answered."""
    page.goto(f"{live_server.url}/ask/")
    for label in ticks:
        page.get_by_label(label).check()
    page.fill("textarea[name=question]", question)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    _answer_latest()
    page.locator("#run[data-final='1']").wait_for()


def test_it_asks_across_two_collections_and_labels_each_citation_with_its_collection(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from knowledge import services as knowledge_services

    _index(collection, *DOC2QUERY)
    encoders = knowledge_services.collection_create(name="Encoders", user=alice)
    _index(encoders, *SBERT)
    log_in(page, live_server, alice, password)
    _ask(page, live_server, ["Retrieval papers", "Encoders"], "What is the default pooling strategy of SBERT?")
    assert page.locator("[data-run-collections]").inner_text() == "Encoders, Retrieval papers"
    badges = page.locator("[data-citation-collection]")
    assert badges.count() >= 1 and set(badges.all_inner_texts()) == {"Encoders"}
    screenshot(page, "run-across-collections")

    # "All my collections" searches both without ticking each.
    _ask(page, live_server, ["All my collections"], "How many queries does Doc2query predict?")
    assert page.locator("[data-run-collections]").inner_text() == "Encoders, Retrieval papers"
    assert set(page.locator("[data-citation-collection]").all_inner_texts()) == {"Retrieval papers"}
    assert console_errors == []


def test_a_turn_still_being_answered_fills_in_on_the_thread_page_without_a_reload(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from agent import services

    _index(collection, *SBERT)
    first = services.run_create(collection=collection, user=alice, enqueue=False,
                                question="What is the default pooling strategy of SBERT?")
    services.run_execute(run_id=first.pk)
    follow = services.follow_up_create(run=first, user=alice, question="and what network structure does it use?")
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/threads/{follow.thread_id}/")
    turn = page.locator("section.turn").nth(1)
    assert turn.get_attribute("data-final") == "0"
    assert "The answer appears here when the run is done." in turn.inner_text()
    assert turn.get_by_role("link", name="Watch its steps").is_visible()

    services.run_execute(run_id=follow.pk)  # a worker answers it while the page is open
    page.locator("section.turn[data-final='1'] >> nth=1").wait_for()
    turn.locator(".sources li").first.wait_for()
    assert "siamese network" in turn.inner_text()
    assert not turn.get_by_role("link", name="Watch its steps").is_visible()
    assert console_errors == []
