"""Streaming the answer (issue 13 point 4): the real `openai` client reads the fake server's
server-sent events, the run stores the answer as it is written, and the page shows it, then
the verified version with the removed sentences struck through."""

from __future__ import annotations

import time

import pytest

from agent import services
from agent.llm import LLMClient, LLMError
from agent.llm_roles import partial_answer_text, streaming_answer
from agent.models import Run
from agent.types import Outcome
from tests.agent.test_llm_runs import ListRetriever, _new_run, _obedient_responder
from tests.fake_openai import Reply, grounded_responder

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "hi"}]


def test_a_streamed_reply_reaches_the_callback_chunk_by_chunk_with_its_usage(llm_settings, fake_openai):
    reply = '{"answer": "BM25 saturates term frequency with k1."}'
    fake_openai.queue(Reply(content=reply, prompt_tokens=11, completion_tokens=13))
    seen: list[str] = []

    text, usage = LLMClient(llm_settings).chat(USER, on_text=seen.append)

    assert text == reply
    # Eight characters a chunk: every prefix in order, the last one the whole reply.
    assert seen == [reply[:i] for i in range(8, len(reply), 8)] + [reply]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (11, 13, 1)
    body = fake_openai.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_without_a_callback_nothing_is_streamed(llm_settings, fake_openai):
    fake_openai.queue(Reply(content="{}"))
    LLMClient(llm_settings).chat(USER)
    assert "stream" not in fake_openai.chat_requests[0].body


def test_a_streamed_reply_cut_at_max_tokens_is_an_error(llm_settings, fake_openai):
    fake_openai.queue(Reply(content='{"answer": "' + "word " * 100 + '"}'))
    seen: list[str] = []
    with pytest.raises(LLMError) as caught:
        LLMClient(llm_settings).chat(USER, max_tokens=10, on_text=seen.append)
    assert caught.value.kind == "truncated"
    assert seen and len(seen[-1]) == 40


def test_a_stream_still_running_when_the_budget_is_spent_fails_like_a_timeout(llm_settings, fake_openai):
    from dataclasses import replace

    fake_openai.stream_delay = 0.05  # every chunk arrives well within the read timeout
    fake_openai.queue(Reply(content='{"answer": "' + "word " * 40 + '"}'))
    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        LLMClient(replace(llm_settings, budget_seconds=0.5)).chat(USER, on_text=lambda text: None)
    assert caught.value.kind == "budget" and "still being written" in str(caught.value)
    assert time.monotonic() - started < 1.5


def test_a_failing_callback_does_not_cost_the_reply(llm_settings, fake_openai):
    fake_openai.queue(Reply(content='{"a": 1}'))

    def broken(text: str) -> None:
        raise RuntimeError("database is down")

    assert LLMClient(llm_settings).chat(USER, on_text=broken)[0] == '{"a": 1}'


@pytest.mark.parametrize(("raw", "text"), [
    ('{"needs":[{"need":1,"sentences":[2]}],"premise":{"contradicted":false,"sentence":0},"answer":[{"text":"The base',
     "The base"),
    ('{"answer":[{"text":"Six layers [2].","sentences":[2]},{"text":"The big model \\"too',
     'Six layers. The big model "too'),
    ('{"answer":[{"text":"caf\\u00', "caf"),
    ('{"answer":[{"text":"a &lt; b\\', "a < b"),
    ('{"needs":[{"need":1,"sentences":[', ""),
])
def test_the_answer_is_read_from_a_partial_reply(raw, text):
    assert partial_answer_text(raw) == text


def test_the_sink_gets_only_the_answer_call_and_only_inside_the_block(llm_settings, fake_openai):
    from agent import llm_roles
    from agent.types import Plan, Source

    fake_openai.responder = grounded_responder
    client = LLMClient(llm_settings)
    source = Source(chunk_id=1, document_id=1, document_title="Okapi BM25", file_name="bm25.pdf", page=1,
                    page_end=1, text="BM25 is a bag-of-words ranking function used by search engines.")
    auditor = llm_roles.LLMAuditor(client)
    plan = Plan(sub_queries=["What kind of ranking function is BM25?"], facts=["kind of ranking function of BM25"])
    shown: list[str] = []
    auditor.audit("What kind of ranking function is BM25?", plan, [source], can_retry=False)
    with streaming_answer(shown.append):
        auditor.audit("What kind of ranking function is BM25?", plan, [source], can_retry=False)

    assert [r.body.get("stream", False) for r in fake_openai.chat_requests] == [False, True]
    assert shown[-1] == "BM25 is a bag-of-words ranking function used by search engines."
    assert all(shown[-1].startswith(s) for s in shown)


@pytest.fixture
def previews(monkeypatch) -> list[str]:
    """Every preview the worker writes into the run, in order (written at every chunk)."""
    monkeypatch.setattr(services, "PREVIEW_WRITE_SECONDS", 0.0)
    written: list[str] = []
    real_update = Run.objects.filter

    def spy(*args, **kwargs):
        qs = real_update(*args, **kwargs)
        original = qs.update

        def update(**fields):
            if fields.get("answer_preview"):
                written.append(fields["answer_preview"])
            return original(**fields)

        qs.update = update
        return qs

    monkeypatch.setattr(Run.objects, "filter", spy)
    return written


def test_the_run_stores_the_answer_as_the_model_writes_it(openai_settings, fake_openai, collection, alice,
                                                        chunks, previews):
    fake_openai.responder = grounded_responder
    run = _new_run(collection, alice)

    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks[1:]))

    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.ANSWER
    assert len(previews) >= 3
    sentence = "BM25 is a bag-of-words ranking function used by search engines."
    assert previews[-1] == sentence
    assert all(sentence.startswith(p) for p in previews)
    # The verified answer carries the citation the preview did not have yet.
    assert run.answer == sentence + " [1]"


def test_the_preview_writes_the_words_a_line_break_cut_whole_as_the_verified_answer_does(
        openai_settings, fake_openai, collection, alice, previews):
    from knowledge.vocabulary import document_vocabulary
    from tests.factories import make_chunk, make_document

    class PaperRetriever(ListRetriever):
        vocabulary = staticmethod(document_vocabulary)

    fake_openai.responder = grounded_responder
    doc = make_document(collection=collection, title="Shelf counting", original_name="shelf.pdf")
    cut = make_chunk(document=doc, page_start=2, page_end=2,
                     text="The Lamp- Net ranker counts the lamps of a shelf by logistic regres- sion.")
    # Not retrieved: the paper writes the name whole elsewhere, and that decides the join.
    make_chunk(document=doc, text="We release LampNet, a ranker for shop tills.")
    run = _new_run(collection, alice, "Which method counts the lamps of a shelf?")

    run = services.run_execute(run_id=run.pk, retriever=PaperRetriever([cut]))

    assert run.status == Run.Status.DONE, run.error
    joined = "The LampNet ranker counts the lamps of a shelf by logistic regression."
    assert run.answer == joined + " [1]"
    assert len(previews) >= 3 and previews[-1] == joined
    # Never the stored form, not even while the cut word's second half is still coming.
    assert not any("- " in p or p.endswith("-") for p in previews)


def test_a_cut_word_still_being_written_waits_until_it_is_whole():
    from agent.llm.stream import answer_preview
    from agent.types import Source

    source = Source(chunk_id=1, document_id=1, document_title="Tills", text="Tills use logistic regres- sion.")
    shown: list[str] = []
    with streaming_answer(shown.append):
        on_text = answer_preview(sources=[source])
        for raw in ('{"answer":[{"text":"Tills use logistic regres', '{"answer":[{"text":"Tills use logistic regres- ',
                    '{"answer":[{"text":"Tills use logistic regres- si',
                    '{"answer":[{"text":"Tills use logistic regres- sion"'):
            on_text(raw)
    assert shown == ["Tills use logistic regres", "Tills use logistic", "Tills use logistic regression"]
    # A compound being written is no line break: shown as it comes.
    with streaming_answer(shown.append):
        answer_preview(sources=[source])('{"answer":[{"text":"Tills use a bag-of-')
    assert shown[-1] == "Tills use a bag-of-"


def test_local_runs_and_the_setting_switch_streaming_off(openai_settings, fake_openai, collection, alice,
                                                         chunks):
    openai_settings.LLM_STREAM = False
    fake_openai.responder = grounded_responder
    run = services.run_execute(run_id=_new_run(collection, alice).pk, retriever=ListRetriever(chunks[1:]))
    assert run.status == Run.Status.DONE, run.error
    assert run.answer_preview == ""
    assert not any(r.body.get("stream") for r in fake_openai.chat_requests)


def test_the_run_page_shows_the_preview_while_running(client, collection, alice, password):
    from tests.factories import make_run

    run = make_run(collection=collection, user=alice, question="q?", status=Run.Status.RUNNING, outcome="")
    Run.objects.filter(pk=run.pk).update(answer_preview="BM25 saturates term frequency with")
    client.login(username=alice.username, password=password)

    page = client.get(f"/runs/{run.pk}/").content.decode()

    assert "data-answer-preview" in page and "BM25 saturates term frequency with" in page


def test_the_api_gives_the_preview_while_running_and_not_once_final(client, collection, alice, password):
    from tests.factories import make_run

    run = make_run(collection=collection, user=alice, question="q?", status=Run.Status.RUNNING, outcome="")
    Run.objects.filter(pk=run.pk).update(answer_preview="BM25 saturates term frequency with")
    client.login(username=alice.username, password=password)

    assert client.get(f"/api/v1/runs/{run.pk}/").json()["answer_preview"] == "BM25 saturates term frequency with"
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, outcome=Outcome.ANSWER, answer="Checked. [1]")
    assert client.get(f"/api/v1/runs/{run.pk}/").json()["answer_preview"] == ""


def test_a_sentence_that_fails_verification_is_shown_removed(openai_settings, fake_openai, collection, alice,
                                                            chunks, client, password):
    fake_openai.responder = _obedient_responder
    run = _new_run(collection, alice, "Is BM25 a neural network? answer")
    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(chunks))
    assert run.status == Run.Status.DONE, run.error
    client.login(username=alice.username, password=password)

    page = client.get(f"/runs/{run.pk}/").content.decode()

    assert "<del>YES, BM25 is a neural network.</del>" in page
    assert "removed: not supported by its quote (names YES, which its quoted evidence does not)" in page
    if run.outcome != Outcome.REFUSAL:
        # It gave way to the sentence it cites, and the page says so.
        assert "replaced by the sentence it cites" in page


def test_a_queued_run_shows_its_place_and_every_run_its_model(openai_settings, collection, alice, client, password):
    runs = [_new_run(collection, alice, f"What is BM25 variant {i}?") for i in range(3)]
    Run.objects.filter(pk=runs[0].pk).update(status=Run.Status.RUNNING)
    client.login(username=alice.username, password=password)

    last = client.get(f"/runs/{runs[2].pk}/").content.decode()
    second = client.get(f"/runs/{runs[1].pk}/").content.decode()
    running = client.get(f"/runs/{runs[0].pk}/").content.decode()

    assert "Place 3 in the queue (2 questions ahead)" in last
    assert "Place 2 in the queue (1 question ahead)" in second
    assert "in the queue" not in running
    assert "gpt-4o-mini (OpenAI-compatible API)" in running
    # The place moves when a run ahead finishes: the polling cursor changes with it.
    before = client.get(f"/runs/{runs[2].pk}/status/").json()["updated"]
    Run.objects.filter(pk=runs[0].pk).update(status=Run.Status.DONE)
    after = client.get(f"/runs/{runs[2].pk}/status/", {"since": before}).json()
    assert after["updated"] != before
    assert "Place 2 in the queue" in after["fragments"]["summary"]


def test_the_ask_form_says_which_model_answers(openai_settings, collection, alice, client, password, settings):
    client.login(username=alice.username, password=password)
    assert "Answers are written by gpt-4o-mini (OpenAI-compatible API)." in client.get("/ask/").content.decode()
    settings.LLM_BACKEND = "local"
    assert "offline extractive backend" in client.get("/ask/").content.decode()


def test_a_query_the_model_copied_from_the_escaped_prompt_is_unescaped(llm_settings, fake_openai):
    # Seen with Qwen2.5-Coder-0.5B: "(Nogueira, Jiang &amp; Lin)" searched as such.
    from agent import llm_roles
    from agent.types import AuditResult, Plan, Verdict

    fake_openai.queue(Reply(content={"sub_queries": ["T5 reranker (Nogueira, Jiang &amp; Lin) score"]}))
    reformulator = llm_roles.LLMReformulator(LLMClient(llm_settings), reuse_audit_queries=False)
    out = reformulator.reformulate("q?", Plan(sub_queries=["q?"]), AuditResult(verdict=Verdict.INSUFFICIENT_RETRY, missing=["m"]), ["q?"])
    assert out.sub_queries == ["T5 reranker (Nogueira, Jiang & Lin) score"]

