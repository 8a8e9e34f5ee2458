"""Bounded structured output: every role's schema caps its strings and arrays, requests carry a
max_tokens sized from the schema, and the fake server's small-model modes show what happens
otherwise (a model looping inside an unbounded string until it is cut off)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import BaseModel

from agent import llm_roles
from agent.llm import LLMClient, LLMError, max_tokens_for, schema_response_format
from agent.llm_roles import Items, Text
from agent.types import AuditResult, Plan, Source, Verdict
from tests.agent.test_llm import bow_embed
from tests.fake_openai import FakeOpenAI, Reply, grounded_responder, unbounded_path

ROLE_SCHEMAS = [llm_roles.PlanOut, llm_roles.AnswerOut, llm_roles.QueriesOut, llm_roles.RerankOut]
USER = [{"role": "user", "content": "Describe BM25."}]


class Loose(BaseModel):
    summary: str
    tags: list[str]


class Tight(BaseModel):
    summary: Text(60)
    tags: Items(Text(12), 2)


LONG = {"summary": "BM25 is a bag-of-words ranking function " * 5, "tags": ["lexical-retrieval", "ranking", "ir"]}


@pytest.fixture
def small_model(llm_settings):
    with FakeOpenAI(small_model=True) as server:
        yield server, LLMClient(replace(llm_settings, base_url=server.base_url, max_retries=2))


@pytest.mark.parametrize("schema", ROLE_SCHEMAS, ids=lambda s: s.__name__)
def test_every_role_schema_bounds_its_strings_and_arrays(schema):
    sent = schema_response_format(schema)["json_schema"]["schema"]

    # What the strict schema sent to the server keeps: maxLength/maxItems everywhere.
    assert unbounded_path(sent) is None
    assert max_tokens_for(schema) < 1024


def test_an_unbounded_schema_is_detected():
    assert unbounded_path(schema_response_format(Loose)["json_schema"]["schema"]) == "summary"
    assert max_tokens_for(Loose) == 4096


def test_a_request_carries_max_tokens_sized_from_the_schema(fake_openai, llm_client):
    fake_openai.queue({"summary": "BM25 ranks documents.", "tags": ["ir"]})

    llm_client.structured(USER, Tight)

    assert fake_openai.chat_requests[0].body["max_tokens"] == max_tokens_for(Tight)


def test_a_small_model_loops_in_an_unbounded_schema_and_the_client_stops_at_once(small_model):
    server, client = small_model
    server.queue(*[LONG] * 3)

    with pytest.raises(LLMError) as caught:
        client.structured(USER, Loose)

    assert caught.value.kind == "truncated"
    assert "max_tokens=4096" in str(caught.value) and "finish_reason length" in str(caught.value)
    # The same greedy request would be cut the same way: no retry, no repair request.
    assert len(server.chat_requests) == 1
    assert caught.value.usage.calls == 1 and caught.value.usage.completion_tokens == 4096


def test_the_same_reply_under_a_bounded_schema_parses_on_the_small_model(small_model):
    server, client = small_model
    server.queue(LONG)

    out, usage = client.structured(USER, Tight)

    assert len(out.summary) <= 60 and out.summary.startswith("BM25 is a bag-of-words")
    # The grammar lets no more through than the bounds: two tags of at most 12 characters.
    assert out.tags == ["lexical-retr", "ranking"]
    assert usage.calls == 1 and usage.completion_tokens <= max_tokens_for(Tight)


def test_a_reply_cut_at_max_tokens_is_an_error_not_a_retry(fake_openai, llm_client):
    fake_openai.queue(Reply(content='{"summary": "BM25 is', finish_reason="length"), {"summary": "x", "tags": []})

    with pytest.raises(LLMError) as caught:
        llm_client.structured(USER, Tight)

    assert caught.value.kind == "truncated"
    assert len(fake_openai.chat_requests) == 1


def test_the_server_cuts_a_reply_longer_than_max_tokens(fake_openai, llm_client):
    fake_openai.queue({"summary": "x" * 400, "tags": []})

    with pytest.raises(LLMError) as caught:
        llm_client.chat(USER, max_tokens=20)

    assert caught.value.kind == "truncated" and caught.value.usage.completion_tokens == 20


def test_a_small_model_without_json_schema_wraps_json_in_prose_and_the_mode_is_remembered(llm_settings):
    with FakeOpenAI(small_model=True, json_schema_supported=False) as server:
        server.queue({"summary": "BM25 ranks documents.", "tags": ["ir"]}, {"summary": "again", "tags": []})
        first = LLMClient(replace(llm_settings, base_url=server.base_url))
        out, _ = first.structured(USER, Tight)
        # A new client for the same server and model (the next run) does not ask again.
        second = LLMClient(replace(llm_settings, base_url=server.base_url))
        again, _ = second.structured(USER, Tight)

        kinds = [r.body["response_format"]["type"] for r in server.chat_requests]
    assert out.summary == "BM25 ranks documents." and again.summary == "again"
    assert kinds == ["json_schema", "json_object", "json_object"]


def test_a_small_model_that_answers_in_prose_fails_after_one_repair(llm_settings):
    with FakeOpenAI(small_model=True, json_schema_supported=False, no_schema_reply="prose") as server:
        server.queue({"summary": "x", "tags": []}, {"summary": "x", "tags": []})
        client = LLMClient(replace(llm_settings, base_url=server.base_url))

        with pytest.raises(LLMError) as caught:
            client.structured(USER, Tight)

        assert len(server.chat_requests) == 3  # rejected json_schema, then the reply and one repair
    assert caught.value.kind == "bad_reply"


def test_every_llm_role_gets_a_valid_reply_from_the_small_model(small_model):
    server, client = small_model
    server.responder = grounded_responder
    sources = [Source(chunk_id=1, document_title="Okapi", text="BM25 is a bag-of-words ranking function used by "
                                                                "search engines to rank matching documents.")]
    roles = llm_roles.llm_roles(client, plan_simple_locally=False, embed=bow_embed)

    plan = roles["planner"].plan("How do BM25 and TF-IDF differ?")
    audit = roles["auditor"].audit("How do BM25 and TF-IDF differ?", plan, sources, can_retry=True)
    reform = llm_roles.LLMReformulator(client, reuse_audit_queries=False).reformulate(
        "q", plan, AuditResult(verdict=Verdict.INSUFFICIENT_RETRY), tried=[])
    scores = llm_roles.llm_scorer(client)("bm25", ["a", "b"])

    assert isinstance(plan, Plan) and audit.verdict == Verdict.SUFFICIENT
    assert reform.sub_queries and len(scores) == 2
    assert all(r.body["max_tokens"] < 1024 for r in server.chat_requests)
