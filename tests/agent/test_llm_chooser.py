"""Chooser mode (RunConfig.answer_by = "chooser", agent.llm.chooser): the local roles plan, retrieve,
score and decide as the `local` backend does; for an answer, the model is called once to say which of
the local ranking's best sentences answer (numbers only), and the local generator composes the answer
from them. Through the fake OpenAI server (the real `openai` client) on real pages; each chooser run
is compared with a `local` run of the same question on the same collection."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from agent.configs import build_roles, config_record, get_config
from agent.llm import chooser
from agent.llm.chooser import ChoiceOut, ChooserParams, LLMChooser
from agent.models import Run
from agent.types import Outcome
from tests.agent import papers
from tests.agent.test_llm_writer import BEIR, CHUNKS, HOLE, LONG, OUT_OF_SCOPE, UNANSWERED, _quotes
from tests.agent.test_llm_writer import _run as writer_run
from tests.fake_openai import Reply, error, garbage, numbered_sentences

pytestmark = pytest.mark.django_db

# The writer's pages and questions: the local roles answer CHUNKS with two sentences of 8 ranked, HOLE
# with the one it ranks, and refuse OUT_OF_SCOPE and UNANSWERED.
corpus, collection = papers.fake_model_fixtures("Chooser", [BEIR, LONG], words=300, stride=200)


def _run(collection, user, settings, question: str, *, backend: str = "openai") -> Run:
    return writer_run(collection, user, settings, question, backend=backend, answer_by="chooser")


def _reason(run: Run) -> str:
    return run.steps.filter(kind="audit").last().output["reason"]


def choosing(choose: Callable[[str, dict[int, str]], Any], shown: list[dict[int, str]]) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers only the chooser's schema with `choose(question, numbered sentences)` (the
    reply's content); each prompt's numbered sentences are appended to `shown`."""

    def reply(body: dict[str, Any]) -> Reply:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        assert name == "ChoiceOut", f"chooser mode asked the model for {name}"
        assert not body.get("stream"), "the chooser's reply is a few numbers: nothing to stream"
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        sentences = numbered_sentences(text)
        shown.append(sentences)
        question = text.split("<question>\n", 1)[1].split("\n</question>", 1)[0]
        return Reply(content=choose(question, sentences))

    return reply


def test_choosing_the_local_sentences_keeps_the_local_answer(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    assert local.outcome == Outcome.ANSWER and len(_quotes(local)) == 2
    shown: list[dict[int, str]] = []
    fake_openai.responder = choosing(lambda q, s: {"sentences": [1, 2]}, shown)

    run = _run(collection, user, settings, CHUNKS)

    assert run.config["answer_by"] == "chooser"
    assert len(shown) == 1 and 2 < len(shown[0]) <= ChooserParams().shown, shown
    # The local answer's sentences are shown first (a long one cut), and nothing but sentences.
    assert {next(q for q in _quotes(local) if q.startswith(shown[0][n].removesuffix("..."))) for n in (1, 2)} == \
        _quotes(local)
    assert all(len(t) <= chooser.SENTENCE_CHARS for t in shown[0].values())
    assert (run.outcome, run.answer, _quotes(run)) == (local.outcome, local.answer, _quotes(local))
    assert run.llm_calls == 1 and 0 < run.prompt_tokens < 700 and run.completion_tokens < 30, (
        run.prompt_tokens, run.completion_tokens)
    assert "the model chose sentences 1, 2 of the" in _reason(run)


def test_the_answer_is_composed_from_the_sentence_the_model_chose(collection, fake_openai, settings, monkeypatch):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    # The model's choices only (not the shipped hedge, which keeps the local best after them).
    monkeypatch.setattr(chooser, "DEFAULT_PARAMS", replace(chooser.DEFAULT_PARAMS, take=2, fill_local=False))
    shown: list[dict[int, str]] = []
    fake_openai.responder = choosing(lambda q, s: {"sentences": [next(n for n, t in s.items() if "top 5 or top 10" in t)]},
                                     shown)

    run = _run(collection, user, settings, CHUNKS)

    assert run.outcome == Outcome.ANSWER
    assert _quotes(run) == {"We observe that for different sequence lengths, the best averaged results are obtained "
                            "either from top 5 or top 10."}, run.answer
    assert not _quotes(run) & _quotes(local)


def test_by_default_the_chosen_sentence_goes_first_and_the_local_best_stays(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    assert (chooser.DEFAULT_PARAMS.take, chooser.DEFAULT_PARAMS.fill_local) == (1, True)
    shown: list[dict[int, str]] = []
    fake_openai.responder = choosing(lambda q, s: {"sentences": [next(n for n, t in s.items() if "top 5 or top 10" in t)]},
                                     shown)

    run = _run(collection, user, settings, CHUNKS)

    chosen = "We observe that for different sequence lengths, the best averaged results are obtained either from top 5 or top 10."
    # Two sentences a need: the chosen one, then the local best (the local second-best gives way).
    assert chosen in _quotes(run) and len(_quotes(run)) == 2 and len(_quotes(run) & _quotes(local)) == 1, run.answer


def test_one_candidate_and_nothing_to_lower_costs_no_call(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    fake_openai.responder = lambda body: pytest.fail("the model was asked to choose among one sentence")

    run = _run(collection, user, settings, HOLE)

    assert (run.outcome, run.answer, run.llm_calls) == (local.outcome, local.answer, 0)


def test_choosing_none_keeps_the_local_answer_unless_its_best_sentence_is_weak(collection, fake_openai, settings,
                                                                             monkeypatch):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    fake_openai.responder = choosing(lambda q, s: {"sentences": []}, [])

    kept = _run(collection, user, settings, CHUNKS)

    assert (kept.outcome, kept.answer) == (local.outcome, local.answer)
    assert "the model chose none of the" in _reason(kept)

    monkeypatch.setattr(chooser, "DEFAULT_PARAMS", replace(chooser.DEFAULT_PARAMS, none_below=1.01))
    refused = _run(collection, user, settings, CHUNKS)

    assert refused.outcome == Outcome.REFUSAL and refused.llm_calls == 1
    assert "the model chose no shown sentence as answering" in _reason(refused)
    # The closest evidence the refusal shows is the local answer's best sentence.
    assert _quotes(refused) <= _quotes(local) and _quotes(refused)


@pytest.mark.parametrize("reply", [
    {"sentences": [12, 0, 99]},  # numbers never shown
    {"sentences": ["first"]},  # not numbers
    {"answer": "The study gives the model 5 to 20 chunks."},  # text instead of numbers
])
def test_a_reply_without_a_shown_number_leaves_the_local_answer(collection, fake_openai, settings, reply):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    fake_openai.responder = choosing(lambda q, s: reply, [])

    run = _run(collection, user, settings, CHUNKS)

    assert (run.outcome, run.answer, _quotes(run)) == (local.outcome, local.answer, _quotes(local))
    assert "the model c" in _reason(run)


def test_a_number_past_the_shown_ones_is_ignored_and_said(collection, fake_openai, settings, monkeypatch):
    collection, user = collection
    monkeypatch.setattr(chooser, "DEFAULT_PARAMS", replace(chooser.DEFAULT_PARAMS, shown=2))
    local = _run(collection, user, settings, CHUNKS, backend="local")
    fake_openai.responder = choosing(lambda q, s: {"sentences": [5, 1, 2]}, [])

    run = _run(collection, user, settings, CHUNKS)

    assert run.answer == local.answer
    assert "the model chose sentences 1, 2 of the 2 shown (ignored: 5, not shown)" in _reason(run)


@pytest.mark.parametrize("failure", [lambda: error(401), lambda: garbage(b"not json")])
def test_a_model_that_cannot_be_reached_leaves_the_local_answer(collection, fake_openai, settings, failure):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    settings.LLM_MAX_RETRIES = 0
    fake_openai.responder = lambda body: failure()

    run = _run(collection, user, settings, CHUNKS)

    assert run.status == Run.Status.DONE and (run.outcome, run.answer) == (local.outcome, local.answer)
    assert "the model could not choose" in _reason(run)


def test_a_malformed_reply_twice_leaves_the_local_answer(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    fake_openai.responder = lambda body: Reply(content="I think sentence 2 answers it.")

    run = _run(collection, user, settings, CHUNKS)

    assert (run.outcome, run.answer) == (local.outcome, local.answer)
    assert len(fake_openai.chat_requests) == 2  # the reply, one repair request
    assert "the model could not choose" in _reason(run)


@pytest.mark.parametrize("question", [OUT_OF_SCOPE, UNANSWERED])
def test_a_refusal_is_the_local_roles_own_and_costs_no_call(collection, fake_openai, settings, question):
    collection, user = collection
    local = _run(collection, user, settings, question, backend="local")
    fake_openai.responder = lambda body: pytest.fail("the model was asked about a refusal")

    run = _run(collection, user, settings, question)

    assert run.outcome == local.outcome == Outcome.REFUSAL
    assert run.answer == local.answer
    assert run.llm_calls == 0 and not fake_openai.chat_requests


def test_the_schema_is_bounded_numbers_only():
    from agent.llm.schema import max_tokens_for, schema_response_format

    schema = schema_response_format(ChoiceOut)["json_schema"]["schema"]
    field = schema["properties"]["sentences"]
    assert field["maxItems"] == 3 and (field["items"]["minimum"], field["items"]["maximum"]) == (1, 8)
    assert list(schema["properties"]) == ["sentences"]
    assert max_tokens_for(ChoiceOut) <= 64
    # A server that ignores the schema: stray numbers dropped, order kept, 3 at most.
    assert ChoiceOut.model_validate({"sentences": [2, 9, 2, 0, "3", 1, 4]}).sentences == [2, 3, 1]


def test_the_setting_is_recorded_and_picks_the_roles():
    agentic = get_config("agentic")
    assert config_record(agentic, backend="embedded", model="m", answer_by="chooser")["answer_by"] == "chooser"
    roles = build_roles(replace(agentic, answer_by="chooser"), "openai", client=object())
    assert isinstance(roles.auditor, LLMChooser) and roles.auditor.reads_pool
    assert type(roles.generator).__name__ == "ExtractiveGenerator"
    assert type(roles.planner).__name__ == "RulePlanner"
