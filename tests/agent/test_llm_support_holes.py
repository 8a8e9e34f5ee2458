"""Support, not presence (issue 13 point 0), replayed through the real `openai` client against
the fake OpenAI server: what a small model did on held-out questions, with a paper and replies
written for these tests.

- a lead-in passed as an answer: the model cited "... are as follows:", which states nothing,
  and copied it as its answer sentence;
- an off-topic sentence passed: faithful to its quote, but the quote answers another question
  about the same paper.

Each run ends PARTIAL/REFUSAL, or with a correct cited sentence, never with the bad sentence,
with the agentic loop (the audit call drafts the answer) and the single-pass hybrid baseline.
"""

from __future__ import annotations

import pytest

from agent import services
from agent.llm import roles as llm_roles_module
from agent.models import Run
from agent.types import Outcome, Source
from tests.fake_openai import citing_responder

pytestmark = pytest.mark.django_db

TITLE = "Lumen: Sparse Retrieval with Learned Term Weights"
INTRO = (
    "1 Introduction\n\nLumen is a sparse retriever that learns one weight for every vocabulary term. "
    "The main contributions of this paper are as follows:\n\n"
    "First, we present an encoder that scores a query on one CPU core. "
    "Second, we build an inverted index of learned weights that fits in memory."
)
TRAINING = (
    "4 Training\n\nWe trained the encoder for three days on four A100 GPUs. "
    "The encoder is optimised with a margin ranking loss over hard negatives. "
    "The collection is split into passages of at most 100 words before indexing."
)
EVALUATION = (
    "5 Evaluation\n\nThe annotators judged each retrieved passage on a four-point relevance scale. "
    "Queries are written in English and average six words in length."
)
LEAD_IN = "The main contributions of this paper are as follows:"
LOSS = "Which loss function is Lumen trained with?"


class ListRetriever:
    """Every chunk, in order (retrieval is not under test: the model sees all the evidence)."""

    thread_safe = False

    def __init__(self, chunks) -> None:
        self.chunks = chunks

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        return [
            Source(
                chunk_id=c.pk,
                document_id=c.document_id,
                document_title=c.document.title,
                file_name=c.document.original_name,
                page=c.page_start,
                page_end=c.page_end,
                text=c.text,
                query=query,
            )
            for c in self.chunks[:k]
        ]


@pytest.fixture
def lumen(openai_settings, collection):
    from tests.factories import make_chunk, make_document

    doc = make_document(collection=collection, title=TITLE, original_name="lumen.pdf")
    return [
        make_chunk(document=doc, text=text, page_start=page, page_end=page)
        for page, text in ((1, INTRO), (4, TRAINING), (5, EVALUATION))
    ]


def _run(collection, user, chunks, question: str, config: str) -> Run:
    run = services.run_create(
        collection=collection, user=user, question=question, config_name=config, enqueue=False
    )
    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks))
    assert run.status == Run.Status.DONE, run.error
    return run


def _dropped(run: Run) -> list[str]:
    return run.steps.filter(kind="verify").last().output["dropped"]


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_a_lead_in_to_a_list_never_passes_as_an_answer(lumen, fake_openai, collection, alice, config):
    shown: list[dict[int, str]] = []
    fake_openai.responder = citing_responder("as follows", LEAD_IN, shown)

    run = _run(collection, alice, lumen, "What are the main contributions of Lumen?", config)

    # The model read the evidence, but a lead-in is not evidence: it was never offered.
    assert shown and any(
        "Lumen is a sparse retriever" in s for sentences in shown for s in sentences.values()
    )
    assert not any("as follows" in s for sentences in shown for s in sentences.values()), shown
    assert "as follows" not in run.answer, run.answer
    assert run.outcome in (Outcome.PARTIAL, Outcome.REFUSAL), (run.outcome, run.answer)
    assert not run.citations.filter(quote__icontains="as follows").exists()


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_a_supported_sentence_about_another_question_is_dropped(
    lumen, fake_openai, collection, alice, config, monkeypatch
):
    # The relevance rule's drop: the answer gate (RunConfig.answer_gate) would refuse first.
    monkeypatch.setattr(llm_roles_module, "local_refusal", lambda *a, **k: None)
    shown: list[dict[int, str]] = []
    # Faithful to its quote, which is about how the paper was evaluated, not about its loss.
    wrong = "Each retrieved passage was judged on a four-point relevance scale."
    fake_openai.responder = citing_responder("four-point relevance scale", wrong, shown)

    run = _run(collection, alice, lumen, LOSS, config)

    assert any("four-point relevance scale" in s for sentences in shown for s in sentences.values()), shown
    assert "four-point" not in run.answer, run.answer
    assert run.outcome in (Outcome.PARTIAL, Outcome.REFUSAL), (run.outcome, run.answer)
    assert any(d.startswith("off the question") and "four-point" in d for d in _dropped(run)), _dropped(run)


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_the_sentence_that_answers_the_question_is_kept_and_cited(
    lumen, fake_openai, collection, alice, config, monkeypatch
):
    # The verifier keeps it. The answer gate (RunConfig.answer_gate) would refuse: the local need
    # model does not take "a margin ranking loss" as answering "which loss function" on this one
    # page, the gate's known cost (docs/llm.md, "The answer gate").
    monkeypatch.setattr(llm_roles_module, "local_refusal", lambda *a, **k: None)
    right = "Lumen is trained with a margin ranking loss over hard negatives."
    fake_openai.responder = citing_responder("margin ranking loss", right, [])

    run = _run(collection, alice, lumen, LOSS, config)

    assert run.outcome == Outcome.ANSWER, (run.answer, _dropped(run))
    assert "margin ranking loss" in run.answer
    assert run.citations.filter(verified=True, quote__icontains="margin ranking loss").exists()
