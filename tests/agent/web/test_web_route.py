"""The web route end to end: a question the collection cannot answer is answered from the
(fake) web with URL citations, saved to the collection by an editor, and answered from the
collection the next time without searching."""

from __future__ import annotations

import pytest

from agent.models import Citation, Run, RunStep
from agent.steps import RouteDecision

pytestmark = pytest.mark.django_db

QUESTION = "When did the Eiffel Tower open to the public?"


def _ask(collection, user, question=QUESTION, *, web_allowed=True):
    from agent.services import run_create, run_execute

    run = run_create(collection=collection, user=user, question=question, enqueue=False, web_allowed=web_allowed)
    return run_execute(run_id=run.pk)


def _route(run):
    row = run.steps.get(kind=RunStep.Kind.ROUTE)
    return row.record()


def test_it_answers_from_the_web_saves_the_page_and_then_answers_from_the_collection(
        web_settings, fake_web, kb_collection, alice):
    from agent.services import citation_save_to_collection
    from knowledge.ingest import job_run
    from knowledge.models import Document

    run = _ask(kb_collection, alice)
    assert run.status == Run.Status.DONE, run.error
    route = _route(run)
    assert route.decision == RouteDecision.WEB, route.reason
    assert run.used_web and run.outcome in ("ANSWER", "PARTIAL"), (run.outcome, run.answer)
    assert "1889" in run.answer
    web_citations = [c for c in run.citations.all() if c.source_url]
    assert web_citations and all(c.verified and c.fetched_at and c.chunk_id is None for c in web_citations)
    cited = web_citations[0]
    assert cited.source_url == fake_web.url("/wiki/eiffel-tower") and cited.document_title == "The Eiffel Tower"
    assert cited.quote in cited.chunk_text
    step = run.steps.get(kind=RunStep.Kind.WEB_SEARCH).record()
    assert step.queries and any(p.fetched and p.sha256 for p in step.pages)

    document, created = citation_save_to_collection(citation=cited, user=alice)
    assert created and document.metadata["source_url"] == cited.source_url
    assert document.title == "The Eiffel Tower" and document.metadata["fetched_at"]
    again, created_again = citation_save_to_collection(citation=cited, user=alice)
    assert again.pk == document.pk and not created_again  # dedup by content hash
    job_run(job_id=document.jobs.latest("pk").pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY, document.error

    searched = len(fake_web.searches)
    second = _ask(kb_collection, alice)
    assert second.outcome in ("ANSWER", "PARTIAL") and "1889" in second.answer, second.answer
    assert _route(second).decision == RouteDecision.KB_ONLY
    assert not second.used_web and len(fake_web.searches) == searched
    assert all(c.chunk is not None and c.chunk.document_id == document.pk for c in second.citations.all())


def test_it_stays_on_the_collection_when_the_asker_did_not_allow_the_web(web_settings, fake_web, kb_collection, alice):
    run = _ask(kb_collection, alice, web_allowed=False)
    route = _route(run)
    assert route.decision == RouteDecision.KB_ONLY and "asker did not allow" in route.reason
    assert run.outcome == "REFUSAL" and not run.used_web and fake_web.requests == []


def test_it_stays_on_the_collection_when_the_owner_has_not_enabled_web_search(
        web_settings, fake_web, kb_collection, alice):
    kb_collection.web_search_enabled = False
    kb_collection.save()
    route = _route(_ask(kb_collection, alice))
    assert route.decision == RouteDecision.KB_ONLY and "owner has not enabled" in route.reason
    assert fake_web.requests == []


def test_it_does_not_search_when_the_collection_answers(web_settings, fake_web, kb_collection, alice):
    run = _ask(kb_collection, alice, "What does the parameter b control in BM25?")
    route = _route(run)
    assert route.decision == RouteDecision.KB_ONLY and "enough to go on" in route.reason, route.reason
    assert run.outcome in ("ANSWER", "PARTIAL"), run.answer
    assert fake_web.requests == []


def test_without_a_provider_there_is_no_route_step_and_no_web_flag(settings, kb_collection, alice):
    settings.WEB_SEARCH_PROVIDER = ""
    run = _ask(kb_collection, alice)
    assert not run.web_allowed and not run.steps.filter(kind=RunStep.Kind.ROUTE).exists()


def test_a_refused_page_is_reported_with_its_reason_in_the_step(web_settings, fake_web, kb_collection, alice):
    web_settings.WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS = False
    run = _ask(kb_collection, alice)
    step = run.steps.get(kind=RunStep.Kind.WEB_SEARCH).record()
    assert step.pages and all(not p.fetched and "loopback" in p.reason for p in step.pages)
    # Only the search went out (the operator's SearxNG); no page was requested.
    assert all(path.startswith("/search") for path, _ in fake_web.requests)
    assert run.outcome == "REFUSAL" and not Citation.objects.filter(run=run).exclude(source_url="").exists()


def test_a_page_that_breaks_the_fetcher_unexpectedly_is_reported_and_the_run_goes_on(
        web_settings, fake_web, kb_collection, alice, monkeypatch):
    from agent.web.fetch import SafeFetcher

    def broken(self, url):
        raise RuntimeError("boom")

    monkeypatch.setattr(SafeFetcher, "fetch", broken)
    run = _ask(kb_collection, alice)
    assert run.status == Run.Status.DONE and run.outcome == "REFUSAL"
    step = run.steps.get(kind=RunStep.Kind.WEB_SEARCH).record()
    assert step.pages and all("RuntimeError: boom" in p.reason for p in step.pages)
