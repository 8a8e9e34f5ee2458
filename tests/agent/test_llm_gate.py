"""Support, not presence, for sentences a model writes (issue 13, its first promise), replayed through
the fake OpenAI server (the real `openai` client) on real pages:

- a number of the quote put in another slot: the end of a sweep "from 5 to 20" stated as the
  number the main comparison uses (the 1.5B model's D41 answer, in other words);
- a collective subject: "They both ..." answering a question about one system (its D08 answer);
- the local gate on every model sentence (agent.llm.roles.GATE_ALL): a sentence copied from an
  on-topic sentence that answers nothing passes every verifier rule, and is kept only if the local
  auditor would answer the question with that sentence too.
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
BEIR_V1 = ("2104.08663v1_beir_arxiv_v1", "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of Information "
           "Retrieval Models (preprint)", [7])
LONG = ("2310.03025v2_retrieval_meets_long_context", "Retrieval meets Long Context Large Language Models", [9])
HOLE = "Which Hole@10 value does the TAS-B retriever reach on TREC-COVID?"
CHUNKS = "How many retrieved chunks does the main comparison give to the model?"
RERANK = "How often does re-ranking with the cross-encoder beat BM25 across the datasets?"

corpus, collection = papers.fake_model_fixtures("Gate", [BEIR, BEIR_V1, LONG], words=300, stride=200)


def _run(collection, user, question: str, config: str = "agentic") -> Run:
    run = services.run_create(collection=collection, user=user, question=question, config_name=config, enqueue=False)
    run = services.run_execute(run_id=run.pk)
    assert run.status == Run.Status.DONE, run.error
    return run


def _dropped(run: Run) -> list[str]:
    return run.steps.filter(kind="verify").last().output["dropped"]


# (the fragment of the sentence the model cites, what it writes, the question, the verifier's reason)
WRONG = {
    # The end of a sweep "from 5 to 20" stated as the number the main comparison uses (D41's kind).
    "sweep end as the value": ("from 5 to 20", "The main comparison gives the model 20 retrieved chunks.", CHUNKS,
                               "one end of a range"),
    # "They both" answering a question about one system (D08's kind).
    "they both for one system": ("11 out of 17", "They both beat BM25 on 11 of the 17 datasets.", RERANK,
                                 "names nothing"),
}


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_quoted_number_in_another_slot_or_a_wider_subject_never_ends_verified(collection, fake_openai, config,
                                                                                case):
    fragment, wrong, question, reason = WRONG[case]
    collection, user = collection
    shown: list[dict[int, str]] = []
    fake_openai.responder = citing_responder(fragment, wrong, shown)

    run = _run(collection, user, question, config)

    assert any(fragment in s for sentences in shown for s in sentences.values()), shown
    # Dropped: the run refuses, or the cited sentence itself stands in (the paper's own words).
    assert wrong.rstrip(".") not in run.answer, run.answer
    assert any(reason in d for d in _dropped(run)), _dropped(run)


# On page 9 of BEIR: about the question's subject, answers nothing the question asks.
ON_TOPIC = "In order to study the impact of this particular type of bias, we conducted a study on the recent TREC-COVID dataset."


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_a_copied_on_topic_sentence_that_answers_nothing_is_set_aside_by_the_gate(collection, fake_openai, config):
    collection, user = collection
    fake_openai.responder = citing_responder("particular type of bias", ON_TOPIC, [])

    run = _run(collection, user, HOLE, config)

    assert "particular type of bias" not in run.answer, run.answer
    assert run.outcome == Outcome.REFUSAL, (run.outcome, run.answer)
    assert any("offline auditor would answer" in d for d in _dropped(run)), _dropped(run)


def test_without_the_gate_the_same_sentence_passes_every_verifier_rule(collection, fake_openai, monkeypatch):
    # Why the gate: the verifier alone keeps it (a copy, relevant to the question, eligible).
    monkeypatch.setattr(llm_roles_module, "GATE_ALL", False)
    collection, user = collection
    fake_openai.responder = citing_responder("particular type of bias", ON_TOPIC, [])

    run = _run(collection, user, HOLE)

    assert run.outcome == Outcome.ANSWER and "particular type of bias" in run.answer, (run.outcome, run.answer)


@pytest.mark.parametrize("config", ["agentic", "hybrid"])
def test_the_gate_keeps_a_sentence_citing_the_answer(collection, fake_openai, config):
    collection, user = collection
    fake_openai.responder = citing_responder("ANCE and TAS-B", "TAS-B reaches a Hole@10 of 31.8% on TREC-COVID.", [])

    run = _run(collection, user, HOLE, config)

    assert run.outcome == Outcome.ANSWER, (run.answer, _dropped(run))
    assert "31.8%" in run.answer and run.citations.filter(verified=True).exists()


# --- the answer gate: the local auditor's decision on the question (RunConfig.answer_gate) -------

# The model copies a true sentence about the asked system that does not answer what is asked. It
# passes every verifier rule, and the sentence-level gate above too (the local auditor would answer
# a need about SPARTA with it); only the question-level decision refuses.
UNASKED = ("How many parameters does the SPARTA model have?", "SPARTA outperforms BM25",
           "SPARTA outperforms BM25 by a large margin on the in-domain dataset, but performs poorly on BEIR datasets.")


def _answer_gate(monkeypatch, gate: str) -> None:
    from dataclasses import replace

    from agent import configs

    monkeypatch.setitem(configs.CONFIGS, "agentic", replace(configs.CONFIGS["agentic"], answer_gate=gate))


def test_an_answer_the_local_auditor_would_refuse_ends_in_the_usual_refusal(collection, fake_openai):
    question, fragment, copied = UNASKED
    collection, user = collection
    fake_openai.responder = citing_responder(fragment, copied, [])

    run = _run(collection, user, question)

    assert run.config["answer_gate"] == "needs"
    assert run.outcome == Outcome.REFUSAL, (run.outcome, run.answer)
    assert "Searched for:" in run.answer and "performs poorly" not in run.answer.split("closest")[0], run.answer
    assert any("offline auditor would refuse" in d and "SPARTA outperforms" in d for d in _dropped(run)), _dropped(run)


def test_without_the_answer_gate_the_same_answer_stands(collection, fake_openai, monkeypatch):
    _answer_gate(monkeypatch, "off")
    question, fragment, copied = UNASKED
    collection, user = collection
    fake_openai.responder = citing_responder(fragment, copied, [])

    run = _run(collection, user, question)

    assert run.config["answer_gate"] == "off"
    assert run.outcome == Outcome.ANSWER and "performs poorly" in run.answer, (run.outcome, run.answer)


def test_an_unknown_answer_gate_is_an_error():
    from agent.llm.drafts import local_refusal

    with pytest.raises(ValueError, match="Unknown answer gate"):
        local_refusal("How many layers?", [], gate="maybe")
