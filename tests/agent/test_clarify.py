"""A vague question ends CLARIFY: the run stores rephrasings built from the collection, the
API returns them and the run page offers each as a button that asks it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agent import services, tasks
from agent.models import Run
from agent.types import Outcome
from knowledge.indexing.build import index_rebuild
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

TEXTS = [
    ("Lumen: Parsing Scanned Receipts", "lumen.pdf", "4 Results",
     "Lumen reaches 91.2% field accuracy on the receipt test set. The results hold across three scanners."),
    ("The Harrow Benchmark", "harrow.pdf", "3 Evaluation",
     "Harrow measures how often a parser recovers every field of a receipt. Results are averaged over five seeds."),
]


def _index(collection, texts):
    for title, name, section, text in texts:
        doc = make_document(collection=collection, title=title, original_name=name)
        make_chunk(document=doc, text=text, section_title=section)
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    return collection


@pytest.fixture
def indexed(collection):
    return _index(collection, TEXTS)


def _answer(collection, user, question: str) -> Run:
    run = services.run_create(collection=collection, user=user, question=question, enqueue=False)
    tasks.answer_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    return run


def test_a_vague_question_asks_which_result_is_meant(indexed, alice, client):
    run = _answer(indexed, alice, "what about the results?")
    assert run.outcome == Outcome.CLARIFY and run.verdict == "CLARIFY"
    assert 2 <= len(run.suggestions) <= 4
    assert any("Lumen" in s for s in run.suggestions) and any("Harrow" in s for s in run.suggestions)
    assert not run.citations.exists()

    client.force_login(alice)
    page = client.get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert "Which one do you mean?" in page
    ask_url = reverse("agent:ask")
    assert page.count(f'action="{ask_url}"') >= len(run.suggestions)
    # Clicking a rephrasing asks it as a new run of the same configuration, in the same collection.
    response = client.post(ask_url, {"question": run.suggestions[0], "config": run.config_name,
                                     "collection": indexed.slug})
    new = Run.objects.exclude(pk=run.pk).get()
    assert response.status_code == 302 and new.question == run.suggestions[0] and new.config_name == run.config_name


def test_the_api_returns_the_rephrasings(indexed, alice):
    from rest_framework.test import APIClient

    run = _answer(indexed, alice, "summarize it")
    api = APIClient()
    api.force_authenticate(alice)
    body = api.get(reverse("api:run_detail", kwargs={"pk": run.pk})).json()
    assert body["outcome"] == "CLARIFY"
    assert body["suggestions"] == run.suggestions and len(body["suggestions"]) >= 2


def test_a_whole_paper_summary_says_what_the_offline_backend_cannot_do(indexed, alice, client):
    from rest_framework.test import APIClient

    run = _answer(indexed, alice, "Summarize the Lumen paper.")
    assert run.outcome == Outcome.CLARIFY
    assert "cannot summarise" in run.answer and "not enough evidence" not in run.answer
    # The reason is a task the backend cannot do, in the API and on the run page.
    api = APIClient()
    api.force_authenticate(alice)
    body = api.get(reverse("api:run_detail", kwargs={"pk": run.pk})).json()
    assert "Not possible with the offline backend" in body["missing_evidence"]
    client.force_login(alice)
    page = client.get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert "This backend cannot do that" in page and "Which one do you mean?" not in page


def test_a_comparison_of_whole_papers_is_declined_too(indexed, alice):
    run = _answer(indexed, alice, "Compare the Lumen paper with the Harrow paper.")
    assert run.outcome == Outcome.CLARIFY and "cannot summarise or compare whole papers" in run.answer


def test_the_ask_form_says_what_the_offline_backend_does(indexed, alice, client, settings):
    settings.LLM_BACKEND = "local"
    client.force_login(alice)
    page = client.get(reverse("knowledge:collection_detail", args=[indexed.slug])).content.decode()
    assert "quoted verbatim" in page and "does not summarise" in page


# Two papers that each report their own learning rate, and a third on another topic.
RATES = [
    ("Lumen: Parsing Scanned Receipts", "lumen.pdf", "4 Training",
     "We train Lumen with Adam at a learning rate of 3e-4 for twenty epochs. Each batch holds 64 receipts."),
    ("Quill: Reading Handwritten Forms", "quill.pdf", "5 Setup",
     "Quill is fine-tuned with a learning rate of 1e-5 and a warmup of 500 steps. Training takes two days."),
    ("The Harrow Benchmark", "harrow.pdf", "3 Evaluation",
     "Harrow measures how often a parser recovers every field of a receipt. Results are averaged over five seeds."),
]


def test_they_over_papers_that_answer_differently_asks_which_paper(collection, alice, client):
    from rest_framework.test import APIClient

    _index(collection, RATES)
    run = _answer(collection, alice, "Which learning rate did they train with?")
    assert run.outcome == Outcome.CLARIFY and run.verdict == "CLARIFY"
    assert "Which one do you mean?" in run.answer
    # One rephrasing per paper whose evidence answers, naming it in place of "they".
    assert "Which learning rate did the authors of Lumen train with?" in run.suggestions
    assert "Which learning rate did the authors of Quill train with?" in run.suggestions
    assert not any("Harrow" in s for s in run.suggestions)

    api = APIClient()
    api.force_authenticate(alice)
    body = api.get(reverse("api:run_detail", kwargs={"pk": run.pk})).json()
    assert body["outcome"] == "CLARIFY" and body["suggestions"] == run.suggestions
    client.force_login(alice)
    page = client.get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    for s in run.suggestions:
        assert f'value="{s}"' in page
    # The rephrasing names the paper: asked, it is answered from that paper.
    asked = _answer(collection, alice, "Which learning rate did the authors of Quill train with?")
    assert asked.outcome == Outcome.ANSWER and "1e-5" in asked.answer


def test_they_with_one_paper_in_scope_is_answered(collection, alice):
    _index(collection, RATES[1:2])
    run = _answer(collection, alice, "Which learning rate did they train with?")
    assert run.outcome == Outcome.ANSWER and "1e-5" in run.answer and not run.suggestions


def test_a_rephrasing_is_asked_of_its_paper_only_through_the_api(collection, alice, bob):
    from rest_framework.test import APIClient

    from knowledge.models import Document

    _index(collection, RATES)
    quill = Document.objects.get(title__startswith="Quill")
    lumen = Document.objects.get(title__startswith="Lumen")
    run = _answer(collection, alice, "Which learning rate did they train with?")
    assert run.suggestion_documents["Which learning rate did the authors of Quill train with?"] == [quill.pk]

    api = APIClient()
    api.force_authenticate(alice)
    body = api.get(reverse("api:run_detail", kwargs={"pk": run.pk})).json()
    suggested = {s["question"]: s["documents"] for s in body["suggested_questions"]}
    assert suggested["Which learning rate did the authors of Quill train with?"] == [quill.pk]
    assert body["documents"] == []
    # Asked back as offered: limited to that paper, and answered from it.
    created = api.post(reverse("api:run_list"), {"collection": collection.slug, "documents": [quill.pk],
                                                  "question": "Which learning rate did the authors of Quill train with?"},
                       format="json")
    assert created.status_code == 202 and created.json()["documents"] == [quill.pk]
    asked = Run.objects.get(pk=created.json()["id"])
    tasks.answer_run(asked.pk)
    asked.refresh_from_db()
    assert asked.outcome == Outcome.ANSWER and "1e-5" in asked.answer
    assert {c.chunk.document_id for c in asked.citations.all()} == {quill.pk}
    # The scope holds whatever the question says: asked of Lumen, Quill's sentence is never read.
    other = services.run_create(collection=collection, user=alice, enqueue=False, documents=[lumen.pk],
                                question="Which learning rate did the authors of Quill train with?")
    tasks.answer_run(other.pk)
    other.refresh_from_db()
    assert "1e-5" not in other.answer
    assert all(c.chunk.document_id == lumen.pk for c in other.citations.all())
    # A document of another collection is unknown here (400, not a hint that it exists).
    from knowledge import services as knowledge_services

    elsewhere = make_document(collection=knowledge_services.collection_create(name="Bob's", user=bob), title="Secret")
    refused = api.post(reverse("api:run_list"), {"collection": collection.slug, "documents": [elsewhere.pk],
                                                  "question": "What learning rate?"}, format="json")
    assert refused.status_code == 400 and "No such document" in str(refused.json())
