"""A rephrasing picked on a CLARIFY run page, in a real browser (Debian's Chromium): the new
run is asked of the paper the rephrasing names only, says so, and is answered from it.

Runs are answered in-process by the real loop (local roles), as a worker would; nothing
reaches a broker.
"""

from __future__ import annotations

import re

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401 (fixtures)
    browser_type_launch_args,
    console_errors,
    log_in,
    low_contrast,
)
from tests.agent.test_clarify import RATES, _index

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: True)


def test_a_picked_rephrasing_is_asked_of_its_paper_and_answered_from_it(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from agent import services
    from agent.models import Run
    from agent.types import Outcome
    from knowledge.models import Document

    _index(collection, RATES)
    quill = Document.objects.get(title__startswith="Quill")
    vague = services.run_create(collection=collection, user=alice, enqueue=False,
                                question="Which learning rate did they train with?")
    services.run_execute(run_id=vague.pk)
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{vague.pk}/")
    page.locator("[data-outcome=clarify]").wait_for()
    page.get_by_role("button", name="Which learning rate did the authors of Quill train with?").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    asked = Run.objects.latest("pk")
    assert asked.pk != vague.pk and asked.question == "Which learning rate did the authors of Quill train with?"
    assert list(asked.documents.values_list("pk", flat=True)) == [quill.pk]
    services.run_execute(run_id=asked.pk)
    page.locator("#run[data-final='1']").wait_for()
    # The page says which paper it was asked of, and answers from it.
    assert "Quill: Reading Handwritten Forms" in page.locator("[data-run-documents]").inner_text()
    asked.refresh_from_db()
    assert asked.outcome == Outcome.ANSWER
    assert "1e-5" in page.locator(".answer-text").inner_text()
    assert low_contrast(page) == []
    assert console_errors == []
