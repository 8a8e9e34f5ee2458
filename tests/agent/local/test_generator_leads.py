"""The extractive answer states a best sentence together with the sentence before it when it
leans on it (agent.local.generator.lead_sentence), on passages written for these tests."""

from __future__ import annotations

import pytest

from agent.local.generator import ExtractiveGenerator, lead_sentence
from agent.types import AuditResult, Conflict, FactAudit, SupportingSentence, SupportLabel, Verdict
from tests.agent.local.conftest import make_source

HEADS = ("The Brindle encoder stacks six blocks, each with four parallel attention heads. "
         "For each of these we use a key size of 32.")


def test_a_sentence_opening_with_a_back_reference_gets_the_sentence_before():
    quote = "For each of these we use a key size of 32."
    lead = lead_sentence("what key size does each Brindle attention head have?", quote, HEADS)
    assert lead == "The Brindle encoder stacks six blocks, each with four parallel attention heads."


def test_a_sentence_that_names_the_subject_itself_stands_alone():
    text = "Brindle was trained on invoices from four countries. Brindle uses a key size of 32 in every head."
    assert lead_sentence("what key size does Brindle use?", "Brindle uses a key size of 32 in every head.",
                         text) == ""


def test_a_sentence_that_only_omits_the_subject_stands_alone():
    # It does not refer back: the sentence before adds words, not what it is about.
    text = ("Marlowe-QA pairs each question with a scanned page. Pages come from 1,204 municipal archives, "
            "and every page was checked by two annotators.")
    quote = "Pages come from 1,204 municipal archives, and every page was checked by two annotators."
    assert lead_sentence("how many archives does Marlowe-QA draw its pages from?", quote, text) == ""


def test_a_pronoun_after_the_sentences_own_subject_is_no_back_reference():
    # "its" is Brindle's, named in the same sentence: the sentence before is not needed.
    text = "Brindle answers questions about invoices. Brindle keeps its key size at 32 in every head."
    assert lead_sentence("what key size does Brindle keep in each head?",
                         "Brindle keeps its key size at 32 in every head.", text) == ""


@pytest.mark.parametrize("before", [
    "In this paper we describe the Brindle encoder and its attention heads.",  # the paper, not the heads
    "The Brindle encoder is configured as follows:",  # points at what follows
])
def test_this_paper_and_pointers_are_not_leads(before):
    quote = "In this work we set the key size of every Brindle attention head to 32."
    assert lead_sentence("what key size does each Brindle attention head have?", quote,
                         f"{before} {quote}") == ""


def test_the_first_sentence_of_a_chunk_has_no_lead():
    assert lead_sentence("what key size does each head have?", "For each of these we use a key size of 32.",
                         "For each of these we use a key size of 32. Training takes two days.") == ""


def test_the_answer_reads_the_lead_then_the_value_in_place_of_a_second_best_sentence(embed):
    other = make_source(2, "Brindle reaches 88.1% field accuracy. It is trained for two days on one GPU.")
    sources = [make_source(1, HEADS), other]
    value = "For each of these we use a key size of 32."
    second = "Brindle reaches 88.1% field accuracy."
    third = "It is trained for two days on one GPU."
    audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact="what key size does each Brindle attention head have?", label=SupportLabel.SUPPORTED,
                  sentences=[SupportingSentence(chunk_id=1, quote=value, label=SupportLabel.SUPPORTED, score=0.3,
                                                quote_start=HEADS.index(value)),
                             SupportingSentence(chunk_id=2, quote=second, label=SupportLabel.SUPPORTED,
                                                score=0.29, quote_start=0)]),
        FactAudit(fact="how long is Brindle trained?", label=SupportLabel.SUPPORTED,
                  sentences=[SupportingSentence(chunk_id=2, quote=third, label=SupportLabel.SUPPORTED, score=0.3,
                                                quote_start=other.text.index(third))]),
    ])
    draft = ExtractiveGenerator(embed=embed).generate("What key size does each Brindle head have, and how long "
                                                      "is it trained?", sources, audit)
    texts = [s.text for s in draft.sentences]
    assert texts == ["The Brindle encoder stacks six blocks, each with four parallel attention heads.", value, third]
    assert [s.citations for s in draft.sentences] == [[1], [1], [2]]


def test_a_disputed_sentence_gets_no_lead(embed):
    other = make_source(2, "Brindle uses a key size of 64 in every head.")
    sources = [make_source(1, HEADS), other]
    value = "For each of these we use a key size of 32."
    rival = "Brindle uses a key size of 64 in every head."
    fact = "what key size does each Brindle attention head have?"
    audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact=fact, label=SupportLabel.PARTIAL, sentences=[
            SupportingSentence(chunk_id=1, quote=value, label=SupportLabel.PARTIAL, score=0.3,
                               quote_start=HEADS.index(value))]),
    ], conflicts=[Conflict(fact=fact, chunk_ids=[1, 2], quotes=[value, rival], cue="number")])
    draft = ExtractiveGenerator(embed=embed).generate("What key size does each Brindle head have?", sources, audit)
    assert not any(s.text.startswith("The Brindle encoder stacks") for s in draft.sentences)
    assert any("disagree" in s.text for s in draft.sentences)
