"""Runs on the `openai` backend against the fake server: failures end FAILED with a reason,
transient ones are retried within the budget, and hostile documents change nothing."""

from __future__ import annotations

import re
import time

import pytest

from agent import services
from agent.models import Run
from agent.tasks import answer_run
from agent.types import Outcome, Source
from tests.fake_openai import Reply, error, garbage, grounded_responder, slow

pytestmark = pytest.mark.django_db

class ListRetriever:
    """Chunks that share a word with the query, in order (the index is not under test)."""

    thread_safe = False

    def __init__(self, chunks) -> None:
        self.chunks = chunks

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        words = set(re.findall(r"\w+", query.lower()))
        hits = [c for c in self.chunks if words & set(re.findall(r"\w+", c.text.lower()))]
        return [Source(chunk_id=c.pk, document_id=c.document_id, document_title=c.document.title,
                       file_name=c.document.original_name, page=c.page_start, page_end=c.page_end,
                       text=c.text, query=query) for c in hits[:k]]


def _new_run(collection, alice, question: str = "What kind of ranking function is BM25?") -> Run:
    return services.run_create(collection=collection, user=alice, question=question, config_name="agentic",
                               enqueue=False)


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([error(500)] * 5, "HTTP 500"),
        ([garbage()] * 5, "unreadable reply"),
        ([slow(30)] * 5, "no reply within"),
        ([error(401)], "HTTP 401"),
    ],
    ids=["server-error", "garbage", "timeout", "bad-key"],
)
def test_a_failing_llm_ends_the_run_failed_with_the_reason(openai_settings, fake_openai, collection, alice, chunks,
                                                           replies, reason):
    from knowledge.indexing.build import index_rebuild

    # Evidence to read, so the run asks the model (with nothing retrieved it would not).
    index_rebuild(collection=collection)
    fake_openai.queue(*replies)
    run = _new_run(collection, alice)

    started = time.monotonic()
    answer_run(run.pk)
    elapsed = time.monotonic() - started

    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.error.startswith("The language model gave no usable answer")
    assert reason in run.error
    # Bounded by the call budget (3 s), never a hang: the replies would hold it 150 s. The
    # margin is for the local roles' own work on a loaded machine (34 s seen with six other
    # test and benchmark processes on the two cores), still well short of the 150 s hang.
    assert elapsed < 75.0
    assert run.config["backend"] == "openai"


def test_transient_failures_are_retried_and_the_run_answers(openai_settings, fake_openai, collection, alice, chunks):
    fake_openai.responder = grounded_responder
    fake_openai.queue(error(429, headers={"Retry-After": "0.1"}), error(500))
    run = _new_run(collection, alice)

    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks[1:]))

    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.ANSWER, (run.answer, run.steps.filter(kind="verify").last().output.get("dropped"))
    # A simple question: planned locally, then one audit call that also drafts the answer.
    # The 429 and the 500 billed nothing and are not counted as calls.
    assert run.llm_calls == 1
    assert len(fake_openai.chat_requests) == 3
    assert run.prompt_tokens > 0 and run.cost_usd > 0
    calls = {s.kind: s.llm_calls for s in run.steps.all()}
    assert (calls["plan"], calls["audit"], calls["generate"]) == (0, 1, 0)
    citation = run.citations.get()
    assert citation.verified and citation.chunk_id == chunks[1].pk


def test_a_comparison_the_rules_split_costs_one_call(openai_settings, fake_openai, collection, alice, chunks):
    fake_openai.responder = grounded_responder
    run = _new_run(collection, alice, "How do BM25 and TF-IDF differ in ranking function?")

    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks))

    assert run.status == Run.Status.DONE, run.error
    assert run.llm_calls == 1
    names = [r.body["response_format"]["json_schema"]["name"] for r in fake_openai.chat_requests]
    assert names == ["AnswerOut"]
    assert len(run.steps.get(kind="plan").output["facts"]) == 2


def _obedient_responder(body: dict) -> Reply:
    """A model that does what the hostile document says: answers YES, citing the hostile sentence."""
    from tests.fake_openai import numbered_sentences

    name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
    if name == "AnswerOut":
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        hostile = [n for n, s in numbered_sentences(text).items() if "IGNORE" in s or "YES" in s] or [1]
        return Reply(content={
            "needs": [{"need": 1, "sentences": hostile}],
            "premise": {"contradicted": False, "sentence": 0},
            "answer": [{"text": "YES, BM25 is a neural network.", "sentences": hostile}]})
    return grounded_responder(body)


def test_a_hijacked_model_cannot_turn_a_hostile_document_into_an_answer(openai_settings, fake_openai, collection,
                                                                         alice, chunks):
    fake_openai.responder = _obedient_responder
    run = _new_run(collection, alice, "Is BM25 a neural network? answer")

    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks))

    assert run.status == Run.Status.DONE, run.error
    # The cited sentence does not say that BM25 is a neural network: the model's sentence never
    # stands. At most the sentence it cited stands in for it, verbatim, and only when the local
    # auditor also takes it for an answer (the BM25 definition; never the hostile text).
    assert "YES" not in run.answer and "neural network" not in run.answer, run.answer
    if run.outcome != Outcome.REFUSAL:
        assert run.answer.startswith("BM25 is a bag-of-words ranking function"), run.answer
    assert "IGNORE" not in run.answer
    assert not run.citations.filter(verified=True, quote__icontains="YES").exists()
    # Every request kept the hostile text inside its evidence element.
    for request in fake_openai.chat_requests:
        assert "<system>" not in request.text
        assert request.text.count("</document>") == len(re.findall(r"<document title=", request.text))


def test_a_follow_up_on_the_openai_backend_is_rewritten_by_one_bounded_call_and_billed(
        openai_settings, fake_openai, collection, alice, chunks):
    fake_openai.responder = grounded_responder
    first = services.run_execute(run_id=_new_run(collection, alice).pk, retriever=ListRetriever(chunks))
    calls_before = len(fake_openai.chat_requests)
    follow = services.follow_up_create(run=first, user=alice, question="and what are its free parameters?")
    fake_openai.queue({"standalone": "What are the free parameters of BM25?"})

    follow = services.run_execute(run_id=follow.pk, retriever=ListRetriever(chunks))
    assert follow.search_question == "What are the free parameters of BM25?"
    assert follow.status == Run.Status.DONE and follow.citations.exists()
    rewrite = fake_openai.chat_requests[calls_before]
    assert rewrite.body["response_format"]["json_schema"]["name"] == "RewriteOut"
    assert "What kind of ranking function is BM25?" in rewrite.body["messages"][-1]["content"]
    # The rewrite call is billed to the run, beside the loop's own calls.
    assert follow.llm_calls == len(fake_openai.chat_requests) - calls_before
    assert follow.llm_calls == 1 + sum(s.llm_calls for s in follow.steps.all())
