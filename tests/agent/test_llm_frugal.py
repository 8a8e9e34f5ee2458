"""The frugal loop for small models (issue 13 point 2): at most 2 LLM calls, 1,500 prompt tokens
and 200 completion tokens per question on average, measured with the fake server's counts
(4 characters a token) over questions of every kind, answered by a model that behaves like the
real 1.5B one: it cites sentences in its answer and leaves the per-need lists empty, and it
cites nothing when the evidence is off topic.

Before agent/llm/frugal.py, the same model cost 3-5 calls a question: an empty need list read
as "nothing found", so the loop retried twice, each retry a reformulation call and an audit call.
"""

from __future__ import annotations

import re
import statistics

import pytest

from agent import services
from agent.llm import roles as llm_roles_module
from agent.models import Run
from agent.types import Outcome
from tests.agent import papers
from tests.fake_openai import Reply, grounded_responder, numbered_sentences

pytestmark = pytest.mark.django_db

ATTENTION = ("1706.03762v5_attention_is_all_you_need", "Attention Is All You Need", [3, 5, 7, 8])
MONOT5 = ("2003.06713v1_monot5_doc_ranking_seq2seq", "Document Ranking with a Pretrained Sequence-to-Sequence Model",
          [2])
QUESTIONS = {
    "How many attention heads does the base Transformer use?": "answer",
    "What dropout rate did the base Transformer use, and what label smoothing value?": "answer",
    "Compare the number of layers and the model dimension d_model of the base Transformer with those of the big "
    "Transformer": "answer",
    "How does the T5 reranker turn the probabilities of the true and false tokens into a ranking?": "answer",
    "How many images of cats did the CLIP vision encoder see during pretraining?": "refuse",
}
STOP = frozenset(["the", "a", "an", "of", "and", "or", "to", "in", "on", "for", "by", "with", "is", "are", "was", "were", "does", "did", "do", "how", "what", "which", "many", "much", "its", "their", "this", "that", "from", "as", "at", "be", "it", "model", "models", "use", "used", "during"])


# Whole sentences: ~300-word chunks.
corpus, collection = papers.fake_model_fixtures("Frugal", [ATTENTION, MONOT5], words=300, stride=200)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in STOP and len(w) > 1}


def small_model(body: dict) -> Reply:
    """Plans like the fake's cooperative model; answers like the 1.5B model: the sentence that
    shares most words with the question, copied, cited in the answer only (needs left empty);
    nothing when no sentence shares two words with the question."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
    if name != "AnswerOut":
        return grounded_responder(body)
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    question = re.search(r"<question>\n(.*?)\n</question>", text, re.S).group(1)
    sentences = numbered_sentences(text)
    overlap = {n: len(_words(question) & _words(s)) for n, s in sentences.items()}
    best = max(overlap, key=lambda n: (overlap[n], -n), default=None)
    nothing = {"needs": [], "premise": {"contradicted": False, "sentence": 0}, "answer": []}
    if best is None or overlap[best] < 2:
        return Reply(content=nothing)
    return Reply(content={**nothing, "answer": [{"text": sentences[best], "sentences": [best]}]})


def test_a_small_model_costs_at_most_two_calls_1500_prompt_and_200_completion_tokens_a_question(
        collection, fake_openai, monkeypatch):
    # The loop's cost, not the answers: the local gate on every model sentence would refuse the
    # heads question (this model's choice by word overlap answers nothing) and costs no call, and
    # the answer gate (RunConfig.answer_gate) refuses the comparison on these few pages.
    monkeypatch.setattr(llm_roles_module, "GATE_ALL", False)
    monkeypatch.setattr(llm_roles_module, "local_refusal", lambda *a, **k: None)
    collection, user = collection
    fake_openai.responder = small_model

    runs = {}
    for question in QUESTIONS:
        run = services.run_create(collection=collection, user=user, question=question, config_name="agentic",
                                  enqueue=False)
        runs[question] = services.run_execute(run_id=run.pk)

    for question, run in runs.items():
        assert run.status == Run.Status.DONE, run.error
        if QUESTIONS[question] == "answer":
            # The answer's citations count for the needs: no retry spiral, and an answer.
            assert run.outcome in (Outcome.ANSWER, Outcome.PARTIAL), (question, run.outcome, run.answer,
                                                                      run.steps.filter(kind="verify").last().output)
            assert run.retries == 0, question
        else:
            assert run.outcome == Outcome.REFUSAL, (question, run.answer)
        assert run.llm_calls <= 3, (question, run.llm_calls)
    calls = statistics.mean(r.llm_calls for r in runs.values())
    prompt = statistics.mean(r.prompt_tokens for r in runs.values())
    completion = statistics.mean(r.completion_tokens for r in runs.values())
    assert calls <= 2.0 and prompt <= 1500 and completion <= 200, (calls, prompt, completion)
    # Reformulation never asks the model; a retry with no better evidence asks nothing.
    names = [r.body["response_format"]["json_schema"]["name"] for r in fake_openai.chat_requests]
    assert "QueriesOut" not in names
    refusal = runs[next(q for q, kind in QUESTIONS.items() if kind == "refuse")]
    assert refusal.llm_calls <= 2, refusal.llm_calls
