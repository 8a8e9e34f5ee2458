"""Two wrong answers of the real 1.5B model that passed verification (docs/benchmarks.md, "LLM
backend"), replayed through the fake OpenAI server on the real pages of the two papers:

- value mixing: the model cited "dense retrieval systems like ANCE and TAS-B have a much higher
  Hole@10 of 14.4% and 31.8%" and wrote that TAS-B had 14.4% (ANCE's value). Every number and
  name is in the quote; only the pairing is wrong.
- another method: the model cited the monoT5 paper's description of the generic classifier
  formulation (which the paper contrasts its own method with) for how T5 scores documents.

Each run ends with the right number cited, or PARTIAL/REFUSAL, never the wrong pairing, with
both the agentic loop (the audit call drafts the answer) and the single-pass hybrid baseline.
"""

from __future__ import annotations

import pytest

from agent import services
from agent.llm import roles as llm_roles_module
from agent.models import Run
from agent.types import Outcome
from tests.agent import papers
from tests.fake_openai import citing_responder

pytestmark = pytest.mark.django_db

BEIR = ("2104.08663_beir_neurips2021", "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of Information "
        "Retrieval Models", [9])
MONOT5 = ("2003.06713v1_monot5_doc_ranking_seq2seq", "Document Ranking with a Pretrained Sequence-to-Sequence Model",
          [1, 2])
HOLE = "Which Hole@10 value does the TAS-B retriever reach on TREC-COVID?"
SCORE = "How does the T5 reranker use the probability that a document belongs to the relevant class to rank the candidates?"


# Page 9 of BEIR and pages 1-2 of the monoT5 paper as ~300-word chunks (whole sentences).
corpus, collection = papers.fake_model_fixtures("Pairing", [BEIR, MONOT5], words=300, stride=200)


def _run(collection, user, question: str, config: str) -> Run:
    run = services.run_create(collection=collection, user=user, question=question, config_name=config, enqueue=False)
    run = services.run_execute(run_id=run.pk)
    assert run.status == Run.Status.DONE, run.error
    return run


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_a_value_moved_to_another_row_of_its_quote_never_ends_verified(collection, fake_openai, config):
    collection, user = collection
    shown: list[dict[int, str]] = []
    fake_openai.responder = citing_responder("ANCE and TAS-B", "TAS-B had a Hole@10 of 14.4%.", shown)

    run = _run(collection, user, HOLE, config)

    # The replay did reach the model with the quote that holds both values.
    assert any("14.4%" in s and "31.8%" in s for sentences in shown for s in sentences.values())
    # The model's pairing never stands: its sentence is dropped, or gives way to the sentence it
    # cites, verbatim, which pairs each value with its system ("ANCE and TAS-B ... 14.4% and 31.8%").
    assert "TAS-B had a Hole@10 of 14.4%" not in run.answer, run.answer
    assert run.outcome == Outcome.REFUSAL or "ANCE and TAS-B have a much higher Hole@10 of 14.4% and 31.8%" in run.answer
    verify = run.steps.filter(kind="verify").last().output
    assert any("14.4% for TAS-B" in d and "ANCE" in d for d in verify["dropped"]), verify


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_the_right_value_from_the_same_quote_is_answered_and_cited(collection, fake_openai, config):
    collection, user = collection
    fake_openai.responder = citing_responder("ANCE and TAS-B", "TAS-B had a Hole@10 of 31.8%.", [])

    run = _run(collection, user, HOLE, config)

    assert run.outcome == Outcome.ANSWER, (run.answer, run.steps.filter(kind="verify").last().output)
    assert "31.8%" in run.answer
    assert any("31.8%" in c.quote and c.verified for c in run.citations.all())


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_a_quote_about_another_method_does_not_support_an_answer_about_t5(collection, fake_openai, config):
    collection, user = collection
    shown: list[dict[int, str]] = []
    # The 1.5B model's sentence names no method: its subject is the question's, T5.
    wrong = ("The model's output is turned into a relevance score for ranking by deploying a classifier that "
             "estimates the probability each document belongs to the relevant class, and then sorting all the "
             "candidates by these estimates.")
    fake_openai.responder = citing_responder("simplest formulation is to deploy", wrong, shown)

    run = _run(collection, user, SCORE, config)

    assert any("simplest formulation is to deploy" in s for sentences in shown for s in sentences.values()), shown
    assert "classifier" not in run.answer, run.answer
    assert run.outcome in (Outcome.PARTIAL, Outcome.REFUSAL), (run.outcome, run.answer)
    verify = run.steps.filter(kind="verify").last().output
    assert any("never mentions T5" in d for d in verify["dropped"]), verify


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_the_papers_own_method_quoted_with_we_still_answers(collection, fake_openai, config, monkeypatch):
    # The verifier's rule on "we" (the local gate on every model sentence sets this answer aside:
    # the local auditor would not answer with the sentence; docs/benchmarks.md, "The local gate").
    monkeypatch.setattr(llm_roles_module, "GATE_ALL", False)
    collection, user = collection
    right = "T5 reranks the documents according to the probabilities assigned to the true token."
    fake_openai.responder = citing_responder("we rerank the documents", right, [])

    run = _run(collection, user, SCORE, config)

    assert run.outcome == Outcome.ANSWER, (run.answer, run.steps.filter(kind="verify").last().output)
    assert "true" in run.answer and run.citations.filter(verified=True).exists()
