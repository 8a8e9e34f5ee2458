"""The rewrite role of follow-up questions: local rules, and the LLM one over the fake server."""

from __future__ import annotations

import json

import pytest

from agent.llm import max_tokens_for, schema_response_format
from agent.llm_rewriter import LLMRewriter, RewriteOut
from agent.local.rewriter import LocalRewriter, subject_of
from agent.threads import Turn, build_rewriter
from tests.fake_openai import unbounded_path

LAYERS = [Turn(question="How many layers does the Transformer encoder have?", titles=("Attention Is All You Need",))]


@pytest.mark.parametrize(("question", "subject"), [
    ("How many layers does the Transformer encoder have?", "the Transformer"),
    ("What dropout rate does BERT-large use?", "BERT-large"),
    ("How does dense passage retrieval compare to BM25?", "BM25"),
    ("how is the learning rate scheduled?", ""),
])
def test_it_finds_the_subject_a_question_names(question, subject):
    assert subject_of(question) == subject


@pytest.mark.parametrize(("follow_up", "standalone"), [
    ("and how many layers does it have?", "How many layers does the Transformer have?"),
    ("What is its learning rate?", "What is the Transformer's learning rate?"),
    ("And what optimizer did this model use?", "What optimizer did the Transformer use?"),
    ("how many heads?", "How many heads in the Transformer?"),
    ("what about BERT?", "How many layers does BERT encoder have?"),
    ("and what is its BLEU score on WMT?", "What is the Transformer's BLEU score on WMT?"),
])
def test_it_rewrites_a_follow_up_against_the_previous_subject(follow_up, standalone):
    rewrite = LocalRewriter().rewrite(follow_up, LAYERS)
    assert (rewrite.question, rewrite.changed) == (standalone, True)


def test_it_leaves_a_question_that_names_its_own_subject_alone():
    rewrite = LocalRewriter().rewrite("What dataset was GPT-4 trained on?", LAYERS)
    assert (rewrite.question, rewrite.changed) == ("What dataset was GPT-4 trained on?", False)
    assert LocalRewriter().rewrite("and what about it?", []).changed is False
    # Its pronoun points at the name it gives first.
    rewrite = LocalRewriter().rewrite("What is BERT and how is it trained?", LAYERS)
    assert (rewrite.question, rewrite.changed) == ("What is BERT and how is it trained?", False)


def test_it_falls_back_to_the_cited_title_when_the_question_named_nothing():
    history = [Turn(question="how is the learning rate scheduled?", titles=("Attention Is All You Need",))]
    rewrite = LocalRewriter().rewrite("and how many layers does it have?", history)
    assert rewrite.question == "How many layers does Attention Is All You Need have?"


def test_a_chain_of_follow_ups_uses_the_last_standalone_question():
    history = [*LAYERS, Turn(question="what about BERT?", searched_as="How many layers does BERT have?")]
    assert LocalRewriter().rewrite("and its hidden size?", history).question == "BERT's hidden size?"


def test_the_rewrite_schema_is_bounded():
    sent = schema_response_format(RewriteOut)["json_schema"]["schema"]
    assert unbounded_path(sent) is None
    assert max_tokens_for(RewriteOut) < 1024


def test_the_llm_rewriter_sends_the_thread_as_escaped_data_and_reads_the_reply(fake_openai, llm_client):
    fake_openai.queue({"standalone": "How many layers does BERT-base have?"})
    history = [Turn(question="How many layers does the </question> Transformer have?", titles=("Attention",))]
    rewrite = LLMRewriter(llm_client, local=LocalRewriter()).rewrite("what about BERT-base?", history)
    assert rewrite.question == "How many layers does BERT-base have?" and rewrite.changed
    assert rewrite.usage.calls == 1
    (request,) = fake_openai.chat_requests
    user = request.body["messages"][-1]["content"]
    assert "&lt;/question&gt; Transformer" in user and "<cited>Attention</cited>" in user
    assert "what about BERT-base?" in user
    assert request.body["response_format"]["json_schema"]["schema"]["properties"]["standalone"]["maxLength"] == 300


def test_the_llm_rewriter_cuts_guessed_numbers_and_skips_the_call_for_a_standalone_question(fake_openai, llm_client):
    fake_openai.queue(json.dumps({"standalone": "Does BERT have 24 layers?"}))
    rewriter = LLMRewriter(llm_client, local=LocalRewriter())
    assert rewriter.rewrite("what about BERT?", LAYERS).question == "Does BERT have layers?"
    assert rewriter.rewrite("What dataset was GPT-4 trained on?", LAYERS).usage.calls == 0
    assert len(fake_openai.chat_requests) == 1


def test_the_llm_rewriter_falls_back_to_the_local_rewrite_on_an_empty_reply(fake_openai, llm_client):
    fake_openai.queue({"standalone": "  "})
    rewrite = LLMRewriter(llm_client, local=LocalRewriter()).rewrite("and how many layers does it have?", LAYERS)
    assert rewrite.question == "How many layers does the Transformer have?" and rewrite.usage.calls == 1


def test_build_rewriter_picks_the_implementation_by_backend(llm_client):
    assert isinstance(build_rewriter("local"), LocalRewriter)
    assert isinstance(build_rewriter("openai", client=llm_client), LLMRewriter)
    with pytest.raises(ValueError, match="Unknown LLM backend"):
        build_rewriter("magic")
