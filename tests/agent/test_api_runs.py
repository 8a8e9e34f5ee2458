"""Runs and reviews over the API: ask (202), poll, citations, filters, validation, reviews, throttles."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agent.models import Review, Run
from knowledge import services
from tests.api_support import ApiWorld

pytestmark = pytest.mark.django_db


def _ask(world: ApiWorld, role: str = "viewer", **body):
    payload = {"collection": world.collection.slug, "question": "Which baseline do the papers use?", **body}
    return world.client(role).post(reverse("api:run_list"), payload, format="json")


def test_asking_answers_202_with_the_runs_url(api_world, settings):
    response = _ask(api_world)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert body["config_name"] == settings.DEFAULT_RUN_CONFIG
    assert response["Location"] == body["url"]
    assert body["url"].endswith(reverse("api:run_detail", kwargs={"pk": body["id"]}))
    run = Run.objects.get(pk=body["id"])
    assert (run.user, run.question) == (api_world.users["viewer"], "Which baseline do the papers use?")


def test_asking_with_a_named_configuration_records_it(api_world):
    response = _ask(api_world, config="bm25")
    assert response.status_code == 202
    assert Run.objects.get(pk=response.json()["id"]).config_name == "bm25"


@pytest.mark.parametrize(
    ("question", "code"),
    [("   ", "invalid"), ("x" * 100_001, "invalid"), ("What is\x00 this?", "invalid")],
    ids=["empty", "100kb", "binary"],
)
def test_a_bad_question_is_a_400_with_a_code(api_world, question, code):
    response = _ask(api_world, question=question)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert "question" in response.json()["error"]["detail"]
    assert Run.objects.count() == 1  # only the fixture's


def test_a_question_over_the_portal_limit_is_refused_by_the_service(api_world, settings):
    response = _ask(api_world, question="why " * (settings.QUESTION_MAX_CHARS // 4 + 10))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "too_long"


def test_an_unknown_configuration_is_a_field_error(api_world):
    response = _ask(api_world, config="gpt-17")
    assert response.status_code == 400
    assert "config" in response.json()["error"]["detail"]


def test_charlie_cannot_ask_in_a_collection_he_is_not_in(api_world):
    response = _ask(api_world, role="outsider")
    assert response.status_code == 404
    assert Run.objects.count() == 1


def test_a_run_shows_answer_citations_timings_and_usage(api_world):
    run = api_world.run
    Run.objects.filter(pk=run.pk).update(
        missing_evidence="Nothing on sparse baselines.",
        prompt_tokens=120,
        completion_tokens=30,
        llm_calls=2,
        cost_usd="0.000036",
        latency_ms=850,
        stage="DONE",
        progress_current=5,
        progress_max=5,
    )
    body = api_world.client("viewer").get(reverse("api:run_detail", kwargs={"pk": run.pk})).json()
    assert body["outcome"] == "ANSWER"
    assert body["answer"] == "BM25 is the baseline [1]."
    assert body["missing_evidence"] == "Nothing on sparse baselines."
    assert body["progress"] == {"stage": "DONE", "current": 5, "max": 5}
    assert body["usage"] == {
        "llm_calls": 2,
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "cost_usd": 3.6e-05,
    }
    assert body["timings"]["latency_ms"] == 850
    [citation] = body["citations"]
    assert citation["document_id"] == api_world.document.pk
    assert citation["page"] == 1
    text = citation["chunk_text"]
    assert (
        text[citation["quote_start"] : citation["quote_end"]]
        == citation["quote"]
        == "uses BM25 as a baseline"
    )
    assert citation["verified"] is True


def test_a_citation_survives_the_deletion_of_its_document(api_world):
    api_world.document.delete()
    body = api_world.client("owner").get(reverse("api:run_detail", kwargs={"pk": api_world.run.pk})).json()
    [citation] = body["citations"]
    assert citation["document_id"] is None
    assert citation["chunk_id"] is None
    assert citation["chunk_text"].startswith("Dense retrieval")


def test_run_lists_are_scoped_filtered_and_ordered(api_world, charlie):
    mine = _ask(api_world, role="viewer").json()["id"]
    elsewhere = services.collection_create(name="Charlie's", user=charlie)
    Run.objects.create(
        collection=elsewhere, user=charlie, question="Hidden?", config_name="agentic", config_hash="y"
    )
    client = api_world.client("viewer")
    url = reverse("api:run_list")
    assert [r["id"] for r in client.get(url).json()["results"]] == [mine]
    everyone = client.get(url, {"mine": "false"}).json()["results"]
    assert [r["id"] for r in everyone] == [mine, api_world.run.pk]
    assert [
        r["id"] for r in client.get(url, {"mine": "false", "ordering": "created_at"}).json()["results"]
    ] == [
        api_world.run.pk,
        mine,
    ]
    answered = client.get(url, {"mine": "false", "outcome": "ANSWER"}).json()["results"]
    assert [r["id"] for r in answered] == [api_world.run.pk]
    queued = client.get(url, {"mine": "false", "status": "queued", "q": "papers"}).json()["results"]
    assert [r["id"] for r in queued] == [mine]
    assert client.get(url, {"collection": elsewhere.slug}).status_code == 404
    assert client.get(url, {"outcome": "MAYBE"}).status_code == 400
    # charlie sees only his own collection's runs.
    charlies = api_world.client("outsider").get(url, {"mine": "false"}).json()["results"]
    assert [r["question"] for r in charlies] == ["Hidden?"]


def test_charlie_gets_404_for_a_run_of_another_collection(api_world):
    response = api_world.client("outsider").get(reverse("api:run_detail", kwargs={"pk": api_world.run.pk}))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_reviewer_grades_a_run_and_can_correct_the_grade(api_world):
    url = reverse("api:run_review_list", kwargs={"pk": api_world.run.pk})
    client = api_world.client("reviewer")
    first = client.post(url, {"grade": "partial", "citations_support": True, "note": "Good"}, format="json")
    assert first.status_code == 201
    assert first.json()["reviewer"] == "rita"
    second = client.post(url, {"grade": "correct"}, format="json")
    assert second.status_code == 200
    assert Review.objects.get(run=api_world.run).grade == "correct"
    listed = api_world.client("viewer").get(url).json()
    assert [(r["reviewer"], r["grade"]) for r in listed["results"]] == [("rita", "correct")]


def test_a_viewer_cannot_review_and_an_unfinished_run_cannot_be_reviewed(api_world):
    url = reverse("api:run_review_list", kwargs={"pk": api_world.run.pk})
    assert api_world.client("viewer").post(url, {"grade": "correct"}, format="json").status_code == 403
    queued = Run.objects.create(
        collection=api_world.collection,
        user=api_world.users["owner"],
        question="Later?",
        config_name="agentic",
    )
    response = api_world.client("reviewer").post(
        reverse("api:run_review_list", kwargs={"pk": queued.pk}), {"grade": "correct"}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert not Review.objects.exists()


def test_it_lists_the_configurations_default_first(api_world, settings):
    configs = api_world.client("viewer").get(reverse("api:config_list")).json()["configs"]
    assert configs[0] == settings.DEFAULT_RUN_CONFIG
    assert "bm25" in configs


def test_it_throttles_a_user_past_the_rate_with_429(api_world, monkeypatch):
    from rest_framework.throttling import UserRateThrottle

    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "3/min", "anon": "3/min"})
    client = api_world.client("viewer")
    codes = [client.get(reverse("api:config_list")).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = client.get(reverse("api:config_list"))
    assert response.json()["error"]["code"] == "throttled"
    assert int(response["Retry-After"]) > 0
    # Another user has a bucket of their own.
    assert api_world.client("owner").get(reverse("api:config_list")).status_code == 200


def test_a_quote_is_located_in_the_chunk_text_despite_line_breaks(api_world):
    from agent.models import Citation

    chunk_text = "3 Method: Doc2query\n\nFor each document, the task is to predict\nqueries."
    Citation.objects.filter(run=api_world.run).update(
        chunk_text=chunk_text, quote="Doc2query For each document, the task", quote_start=10
    )
    body = api_world.client("viewer").get(reverse("api:run_detail", kwargs={"pk": api_world.run.pk})).json()
    [citation] = body["citations"]
    assert (
        chunk_text[citation["quote_start"] : citation["quote_end"]]
        == "Doc2query\n\nFor each document, the task"
    )


def test_a_quote_that_is_not_in_the_chunk_has_no_offsets(api_world):
    from agent.models import Citation

    Citation.objects.filter(run=api_world.run).update(quote="words that are nowhere", quote_start=3)
    body = api_world.client("viewer").get(reverse("api:run_detail", kwargs={"pk": api_world.run.pk})).json()
    assert (body["citations"][0]["quote_start"], body["citations"][0]["quote_end"]) == (-1, -1)


def test_it_throttles_anonymous_clients_by_address(monkeypatch, client):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "2/min", "user": "100/min"})
    codes = [client.get("/api/schema/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    other = client.get("/api/schema/", REMOTE_ADDR="192.0.2.7")
    assert other.status_code == 200
