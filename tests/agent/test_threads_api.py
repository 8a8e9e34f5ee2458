"""Follow-up questions, asking across collections and exports, through the API and the services.

Runs are answered in-process by the real loop (local roles) over real indexes of small
collections, so a follow-up's rewrite, the fused search and the citations' collections are
what a user would get.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from agent import services
from agent.models import Run, Thread
from knowledge import services as knowledge_services
from knowledge.indexing.build import index_rebuild
from knowledge.models import Role
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

SBERT = ("Sentence-BERT", "We fine-tune SBERT with a siamese network structure. The default pooling strategy of "
         "SBERT is MEAN. We evaluate the pooling strategies MEAN, MAX and CLS.")
DOC2QUERY = ("Doc2query", "Doc2query predicts 10 queries for each document using top-k random sampling. The "
             "expanded documents are indexed with BM25.")


def _index(collection, title: str, text: str, **metadata):
    document = make_document(collection=collection, title=title, original_name=f"{title}.pdf", metadata=metadata)
    make_chunk(document=document, text=text, page_start=3, page_end=3)
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    return document


@pytest.fixture
def two_collections(collection, alice, bob):
    """`collection` holds Doc2query; alice's second collection `encoders` holds Sentence-BERT (bob: viewer)."""
    _index(collection, *DOC2QUERY, year=2019, arxiv_id="1904.08375")
    encoders = knowledge_services.collection_create(name="Encoders", user=alice)
    knowledge_services.membership_set(collection=encoders, user=bob, role=Role.VIEWER)
    _index(encoders, *SBERT, year=2019, arxiv_id="1908.10084", authors=["Nils Reimers", "Iryna Gurevych"])
    return collection, encoders


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _answer(response) -> dict:
    """Answer the run the API just queued, in-process, and read it back through the API."""
    assert response.status_code == 202, response.content
    services.run_execute(run_id=response.json()["id"])
    return _client(Run.objects.get(pk=response.json()["id"]).user).get(response["Location"]).json()


def test_it_asks_across_collections_and_says_where_each_citation_came_from(two_collections, alice):
    collection, encoders = two_collections
    body = {"collections": [collection.slug, encoders.slug], "question": "What is the default pooling strategy of SBERT?"}
    run = _answer(_client(alice).post(reverse("api:run_list"), body, format="json"))
    assert run["collections"] == [collection.slug, encoders.slug]
    assert run["outcome"] == "ANSWER" and run["citations"], run
    assert {c["collection"] for c in run["citations"]} == {encoders.slug}
    assert any("MEAN" in c["quote"] for c in run["citations"])
    # Asked in the first collection alone, the same question cannot find Sentence-BERT.
    alone = _answer(_client(alice).post(reverse("api:run_list"), {**body, "collections": [collection.slug]},
                                        format="json"))
    assert all(c["collection"] == collection.slug for c in alone["citations"])


def test_all_my_collections_means_every_collection_the_user_reads(two_collections, alice):
    collection, encoders = two_collections
    response = _client(alice).post(reverse("api:run_list"), {"all_collections": True, "question": "What is MEAN?"},
                                   format="json")
    assert response.status_code == 202
    assert set(response.json()["collections"]) == {collection.slug, encoders.slug}


def test_a_collection_the_user_cannot_read_is_a_404_not_a_silent_skip(two_collections, alice, charlie):
    collection, encoders = two_collections
    secret = knowledge_services.collection_create(name="Secret", user=charlie)
    response = _client(alice).post(
        reverse("api:run_list"), {"collections": [collection.slug, secret.slug], "question": "What is MEAN?"},
        format="json")
    assert response.status_code == 404 and Run.objects.count() == 0
    # A run across collections is readable only with a role on each of them.
    run = services.run_create(collection=collection, user=alice, question="What is MEAN?",
                              extra_collections=[encoders], enqueue=False)
    outsider_of_one = _client(charlie)
    knowledge_services.membership_set(collection=collection, user=charlie, role=Role.VIEWER)
    assert outsider_of_one.get(reverse("api:run_detail", kwargs={"pk": run.pk})).status_code == 404
    listed = outsider_of_one.get(reverse("api:run_list"), {"mine": "false"}).json()["results"]
    assert run.pk not in [r["id"] for r in listed]


def test_a_follow_up_is_rewritten_searched_and_cited_in_a_thread(two_collections, alice, bob, charlie):
    _, encoders = two_collections
    first = _answer(_client(alice).post(
        reverse("api:run_list"), {"collection": encoders.slug, "question": "What is the default pooling strategy of SBERT?"},
        format="json"))
    follow = _answer(_client(alice).post(reverse("api:run_follow_up", kwargs={"pk": first["id"]}),
                                         {"question": "and what network structure does it fine-tune with?"},
                                         format="json"))
    assert follow["search_question"] == "What network structure does SBERT fine-tune with?"
    assert follow["thread"] is not None and follow["citations"]
    assert any("siamese network" in c["quote"] for c in follow["citations"])
    thread = Thread.objects.get(pk=follow["thread"])
    assert thread.title == first["question"] and thread.user == alice

    # A second follow-up through the thread itself: the thread's last turn is its context.
    third = _answer(_client(alice).post(reverse("api:thread_turn_list", kwargs={"pk": thread.pk}),
                                        {"question": "What pooling strategies are evaluated?"}, format="json"))
    assert third["thread"] == thread.pk

    listed = _client(alice).get(reverse("api:thread_list")).json()["results"]
    assert [t["id"] for t in listed] == [thread.pk]
    detail = _client(bob).get(reverse("api:thread_detail", kwargs={"pk": thread.pk})).json()
    assert [t["id"] for t in detail["turns"]] == [first["id"], follow["id"], third["id"]]
    assert detail["turns"][1]["search_question"] == follow["search_question"]
    assert _client(bob).get(reverse("api:thread_list")).json()["results"] == []  # mine=true by default
    assert len(_client(bob).get(reverse("api:thread_list"), {"mine": "false"}).json()["results"]) == 1
    assert _client(charlie).get(reverse("api:thread_detail", kwargs={"pk": thread.pk})).status_code == 404
    assert _client(charlie).get(reverse("api:thread_list"), {"mine": "false"}).json()["results"] == []

    markdown = _client(bob).get(reverse("api:thread_export", kwargs={"pk": thread.pk}))
    assert markdown.status_code == 200 and markdown["Content-Type"].startswith("text/markdown")
    text = markdown.content.decode()
    assert "## 1. What is the default pooling strategy of SBERT?" in text
    assert "*Searched as: What network structure does SBERT fine-tune with?*" in text
    assert "[^t2-1]: Sentence-BERT, p. 3" in text and "## 3." in text

    # The thread page shows every turn's answer with its sources: each id once, so each
    # "Sources" heading labels its own turn's list.
    page = Client()
    page.force_login(bob)
    html = page.get(reverse("agent:thread_detail", kwargs={"pk": thread.pk})).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert html.count("<h2 id=\"sources-h-") == 3
    assert sorted(ids) == sorted(set(ids)), [i for i in set(ids) if ids.count(i) > 1]


def test_it_exports_a_run_as_markdown_bibtex_and_ris(two_collections, alice):
    _, encoders = two_collections
    run = _answer(_client(alice).post(
        reverse("api:run_list"), {"collection": encoders.slug, "question": "What is the default pooling strategy of SBERT?"},
        format="json"))
    url = lambda fmt: reverse("api:run_export", kwargs={"pk": run["id"], "fmt": fmt})  # noqa: E731
    markdown = _client(alice).get(url("md")).content.decode()
    assert markdown.startswith("# What is the default pooling strategy of SBERT?")
    assert "[^1]" in markdown.split("\n\n")[1]
    assert '[^1]: Sentence-BERT, p. 3 (collection: Encoders). "' in markdown
    bib = _client(alice).get(url("bib"))
    assert bib["Content-Disposition"] == f'attachment; filename="run-{run["id"]}-sources.bib"'
    assert bib.content.decode() == (
        "@article{reimers2019sentence,\n  title = {Sentence-BERT},\n  author = {Nils Reimers and Iryna Gurevych},\n"
        "  year = 2019,\n  journal = {arXiv preprint arXiv:1908.10084},\n  eprint = {1908.10084},\n"
        "  archivePrefix = {arXiv},\n  url = {https://arxiv.org/abs/1908.10084}\n}\n")
    ris = _client(alice).get(url("ris")).content.decode()
    assert ris.splitlines() == ["TY  - JOUR", "TI  - Sentence-BERT", "AU  - Nils Reimers", "AU  - Iryna Gurevych",
                                "PY  - 2019", "JO  - arXiv preprint arXiv:1908.10084",
                                "UR  - https://arxiv.org/abs/1908.10084", "ER  - "]
    assert _client(alice).get(url("pdf")).status_code == 404


def test_a_retried_follow_up_stays_in_its_thread_and_a_failed_turn_is_no_context(two_collections, alice, client,
                                                                                 password):
    _, encoders = two_collections
    first = services.run_create(collection=encoders, user=alice, question="What is the default pooling strategy of SBERT?",
                                enqueue=False)
    services.run_execute(run_id=first.pk)
    failed = services.follow_up_create(run=Run.objects.get(pk=first.pk), user=alice,
                                       question="and what network structure does it fine-tune with?")
    services.run_fail(run_id=failed.pk, error="The worker stopped.")
    client.login(username="alice", password=password)
    response = client.post(reverse("agent:run_retry", kwargs={"pk": failed.pk}))
    retried = Run.objects.latest("pk")
    assert response.status_code == 302 and retried.pk != failed.pk and retried.thread_id == failed.thread_id
    services.run_execute(run_id=retried.pk)
    retried.refresh_from_db()
    assert retried.search_question == "What network structure does SBERT fine-tune with?"
