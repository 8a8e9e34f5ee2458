"""Writer mode (RunConfig.answer_by = "writer", agent.llm.writer): the local roles plan, audit and
choose the answer's sentences exactly as the `local` backend does, and the model is called once,
for an ANSWER or PARTIAL only, to word the answer from those sentences. Through the fake OpenAI
server (the real `openai` client) on real pages; each writer run is compared with a `local` run
of the same question on the same collection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent import services
from agent.configs import build_roles, config_record, get_config
from agent.llm.writer import LLMWriter, _with_yesno
from agent.models import Run
from agent.types import DraftSentence, Outcome
from tests.agent import papers
from tests.fake_openai import Reply, error, numbered_sentences

pytestmark = pytest.mark.django_db

BEIR = ("2104.08663_beir_neurips2021", "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of Information "
        "Retrieval Models", [9])
LONG = ("2310.03025v2_retrieval_meets_long_context", "Retrieval meets Long Context Large Language Models", [9])

corpus, collection = papers.fake_model_fixtures("Writer", [BEIR, LONG], words=300, stride=200)

# The local roles answer each with the sentences of these pages (one for HOLE, two for CHUNKS).
HOLE = "Which Hole@10 value does the TAS-B retriever reach on TREC-COVID?"
CHUNKS = "How many retrieved chunks does the main comparison give to the model?"
OUT_OF_SCOPE = "Who won the 2018 football world cup?"
UNANSWERED = "How many parameters does the SPARTA model have?"
POOLING = "Does BEIR evaluate on TREC-COVID?"


def _run(collection, user, settings, question: str, *, backend: str = "openai", answer_by: str = "writer") -> Run:
    settings.LLM_BACKEND = backend
    settings.LLM_ANSWER_BY = answer_by
    run = services.run_create(collection=collection, user=user, question=question, config_name="agentic",
                              enqueue=False)
    run = services.run_execute(run_id=run.pk)
    assert run.status == Run.Status.DONE, run.error
    return run


def _quotes(run: Run) -> set[str]:
    return {c.quote for c in run.citations.filter(verified=True)}


def _notes(run: Run) -> list[str]:
    return run.steps.filter(kind="generate").last().output["notes"]


def writer(write: Callable[[str, dict[int, str]], list[dict[str, Any]]],
           shown: list[dict[int, str]]) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers only the writer's schema, with `write(question, numbered sentences)`;
    each prompt's numbered sentences are appended to `shown`."""

    def reply(body: dict[str, Any]) -> Reply:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        assert name == "WriterOut", f"writer mode asked the model for {name}"
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        sentences = numbered_sentences(text)
        shown.append(sentences)
        question = text.split("<question>\n", 1)[1].split("\n</question>", 1)[0]
        return Reply(content={"answer": write(question, sentences)})

    return reply


def test_the_model_words_the_answer_from_the_sentences_the_local_roles_chose(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    shown: list[dict[int, str]] = []
    fake_openai.responder = writer(lambda q, s: [{"text": "The dense retriever TAS-B has a Hole@10 of 31.8%.",
                                                  "sentences": [1]}], shown)

    run = _run(collection, user, settings, HOLE)

    assert run.config["answer_by"] == "writer"
    assert (run.outcome, _quotes(run)) == (local.outcome, _quotes(local)) == (Outcome.ANSWER, _quotes(local))
    # The model was shown the local answer's sentences, and nothing else.
    assert [set(s.values()) for s in shown] == [_quotes(local)]
    assert run.answer == "The dense retriever TAS-B has a Hole@10 of 31.8%. [1]", _notes(run)
    assert run.llm_calls == 1 and 0 < run.prompt_tokens < 600, (run.llm_calls, run.prompt_tokens)
    assert not _notes(run)


def test_a_model_sentence_with_an_invented_number_gives_way_to_the_sentence_it_cites(collection, fake_openai,
                                                                                     settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    fake_openai.responder = writer(lambda q, s: [{"text": "The dense retriever TAS-B has a Hole@10 of 45.2%.",
                                                  "sentences": [1]}], [])

    run = _run(collection, user, settings, HOLE)

    assert "45.2" not in run.answer
    assert run.answer == local.answer and _quotes(run) == _quotes(local)
    assert any(n.startswith("replaced by the sentence it cites: The dense retriever TAS-B has a Hole@10 of 45.2%") and "45.2" in n
               for n in _notes(run)), _notes(run)
    # The run page lists it as removed (the verify step carries the generator's notes).
    assert any("45.2%" in d for d in run.steps.filter(kind="verify").last().output["dropped"])


def test_a_kept_sentence_that_drops_a_number_of_its_extract_is_followed_by_the_extract(collection, fake_openai,
                                                                                        settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    sentence = "Dense retrievers such as TAS-B have a much higher Hole@10."
    fake_openai.responder = writer(lambda q, s: [{"text": sentence, "sentences": [1]}], [])

    run = _run(collection, user, settings, HOLE)

    assert run.answer.startswith(sentence), run.answer
    assert "31.8%" in run.answer and _quotes(run) == _quotes(local)


def test_a_copy_of_one_extract_citing_two_does_not_stand_for_the_second(collection, fake_openai, settings):
    collection, user = collection
    # Two extracts, the second's only numbers the paper's references: no number tells them apart.
    local = _run(collection, user, settings, POOLING, backend="local")
    fake_openai.responder = writer(lambda q, s: [{"text": s[1], "sentences": [1, 2]}], [])

    run = _run(collection, user, settings, POOLING)

    assert _quotes(run) == _quotes(local) and len(_quotes(run)) == 2, run.answer
    # Cited, its words were not said: the second sentence is stated as extracted.
    assert "TREC-COVID used a pooling method" in run.answer, run.answer


def test_a_yes_or_no_the_local_roles_did_not_read_off_the_evidence_is_not_kept(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    fake_openai.responder = writer(lambda q, s: [{"text": "Yes.", "sentences": [1]}], [])

    run = _run(collection, user, settings, HOLE)

    assert run.answer == local.answer
    assert any("decides neither" in n for n in _notes(run)), _notes(run)


def test_the_schema_asks_for_at_least_one_cited_sentence():
    from agent.llm.schema import schema_response_format
    from agent.llm.writer import WriterOut

    schema = schema_response_format(WriterOut)["json_schema"]["schema"]
    claim = schema["$defs"]["WrittenOut"]["properties"]
    assert (schema["properties"]["answer"]["minItems"], schema["properties"]["answer"]["maxItems"]) == (1, 3)
    assert claim["text"]["minLength"] == 1 and claim["sentences"]["minItems"] == 1


def test_an_extract_the_model_leaves_out_is_still_stated(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, CHUNKS, backend="local")
    assert len(_quotes(local)) == 2
    # The model cites the first sentence only, and also writes a sentence citing a number it was not shown.
    fake_openai.responder = writer(lambda q, s: [
        {"text": "The study raises the number of retrieved chunks from 5 to 20 with the Dragon retriever.",
         "sentences": [1]},
        {"text": "More chunks always help.", "sentences": [7]}], [])

    run = _run(collection, user, settings, CHUNKS)

    assert run.outcome == local.outcome
    assert _quotes(run) >= _quotes(local), run.answer
    assert "always help" not in run.answer
    assert any("More chunks always help" in n for n in _notes(run)), _notes(run)


@pytest.mark.parametrize("question", [OUT_OF_SCOPE, UNANSWERED])
def test_a_refusal_is_the_local_roles_own_and_costs_no_call(collection, fake_openai, settings, question):
    collection, user = collection
    local = _run(collection, user, settings, question, backend="local")
    fake_openai.responder = writer(lambda q, s: pytest.fail("the model was asked to write a refusal"), [])

    run = _run(collection, user, settings, question)

    assert run.outcome == local.outcome == Outcome.REFUSAL
    assert run.answer == local.answer
    assert run.llm_calls == 0 and not fake_openai.chat_requests


def test_the_answer_streams_to_the_run_page_as_the_model_writes_it(collection, fake_openai, settings, monkeypatch):
    collection, user = collection
    previews: list[str] = []
    monkeypatch.setattr(services, "_preview_writer", lambda run_id: previews.append)
    sentence = "The dense retriever TAS-B has a Hole@10 of 31.8%."
    fake_openai.responder = writer(lambda q, s: [{"text": sentence, "sentences": [1]}], [])

    run = _run(collection, user, settings, HOLE)

    assert [r.body.get("stream", False) for r in fake_openai.chat_requests] == [True]
    assert len(previews) >= 3 and previews[-1] == sentence, previews
    assert all(sentence.startswith(p) for p in previews)
    assert run.answer == sentence + " [1]"


def test_a_model_that_cannot_be_reached_leaves_the_extractive_answer(collection, fake_openai, settings):
    collection, user = collection
    local = _run(collection, user, settings, HOLE, backend="local")
    fake_openai.queue(error(401))

    run = _run(collection, user, settings, HOLE)

    assert run.status == Run.Status.DONE and run.answer == local.answer
    assert any("could not write the answer" in n for n in _notes(run)), _notes(run)


def test_the_setting_is_recorded_and_picks_the_roles(settings):
    agentic = get_config("agentic")
    assert agentic.answer_by == "model"
    assert config_record(agentic, backend="openai", model="m", answer_by="writer")["answer_by"] == "writer"
    # The local backend has no model to write with: the setting does not change its runs.
    assert config_record(agentic, backend="local", answer_by="writer")["answer_by"] == "model"
    with pytest.raises(ValueError):
        config_record(agentic, backend="openai", answer_by="poet")
    from dataclasses import replace

    roles = build_roles(replace(agentic, answer_by="writer"), "openai", client=object())
    assert isinstance(roles.generator, LLMWriter)
    assert type(roles.auditor).__name__ == "LocalAuditor" and type(roles.planner).__name__ == "RulePlanner"
    assert not isinstance(build_roles(agentic, "openai", client=object()).generator, LLMWriter)


@pytest.mark.parametrize(("written", "expected", "why"), [
    ("The base model has 6 layers.", "Yes: The base model has 6 layers.", None),
    ("Yes, it has 6 layers.", "Yes, it has 6 layers.", None),
    ("No, it has 6 layers.", "No, it has 6 layers.", "says no"),
])
def test_the_local_yes_or_no_is_kept(written, expected, why):
    first = DraftSentence(text="Yes: The encoder has 6 layers.", citations=[1], quote="The encoder has 6 layers.")
    sentence, reason = _with_yesno(DraftSentence(text=written, citations=[1]), first)
    assert sentence.text == expected
    assert (reason or "").startswith(why or "")
    assert (reason is None) == (why is None)
