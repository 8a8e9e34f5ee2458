"""A multi-part answer states each part's best sentence, in part order, and names the part it
has no evidence for (agent.local.generator._missing_parts), on passages written for these tests."""

from __future__ import annotations

from agent.local.generator import ExtractiveGenerator
from agent.types import AuditResult, FactAudit, Outcome, SupportingSentence, SupportLabel, Verdict
from tests.agent.local.conftest import make_source

TEXT = ("Osprey plugs in the Tessel tokenizer as its segmenter. "
        "Tessel needs no vocabulary file, so Osprey starts in seconds.")
FIRST = "Osprey plugs in the Tessel tokenizer as its segmenter."
SECOND = "Tessel needs no vocabulary file, so Osprey starts in seconds."
QUESTION = "Which tokenizer does Osprey plug in, and what advantage do the authors give for that choice?"
FACTS = ["Which tokenizer does Osprey plug in", "what advantage do the authors give for the choice of the tokenizer?"]


def sentence(quote: str, score: float = 0.3) -> SupportingSentence:
    return SupportingSentence(chunk_id=1, quote=quote, label=SupportLabel.SUPPORTED, score=score,
                              quote_start=TEXT.index(quote))


def test_each_part_is_answered_by_its_own_best_sentence_in_part_order(embed):
    audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact=FACTS[0], label=SupportLabel.SUPPORTED, sentences=[sentence(FIRST)]),
        FactAudit(fact=FACTS[1], label=SupportLabel.SUPPORTED, sentences=[sentence(SECOND)]),
    ])
    draft = ExtractiveGenerator(embed=embed).generate(QUESTION, [make_source(1, TEXT)], audit)
    assert draft.outcome == Outcome.ANSWER
    assert [s.text for s in draft.sentences] == [FIRST, SECOND]
    assert draft.missing_note == ""


def test_a_part_without_evidence_is_named_by_its_place_in_the_question(embed):
    audit = AuditResult(verdict=Verdict.PARTIALLY_SUFFICIENT, missing=[FACTS[1]], facts=[
        FactAudit(fact=FACTS[0], label=SupportLabel.SUPPORTED, sentences=[sentence(FIRST)]),
        FactAudit(fact=FACTS[1], label=SupportLabel.UNSUPPORTED),
    ])
    draft = ExtractiveGenerator(embed=embed).generate(QUESTION, [make_source(1, TEXT)], audit)
    assert draft.outcome == Outcome.PARTIAL
    assert [s.text for s in draft.sentences] == [FIRST]
    assert draft.missing_note == f"No supporting evidence was found for: part 2 of 2: {FACTS[1]}"


def test_an_answer_that_says_nothing_of_a_part_is_partial_whatever_the_verdict(embed):
    # The second part's only sentence is in no source handed to the generator.
    stray = SupportingSentence(chunk_id=9, quote=SECOND, label=SupportLabel.SUPPORTED, score=0.3)
    audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact=FACTS[0], label=SupportLabel.SUPPORTED, sentences=[sentence(FIRST)]),
        FactAudit(fact=FACTS[1], label=SupportLabel.SUPPORTED, sentences=[stray]),
    ])
    draft = ExtractiveGenerator(embed=embed).generate(QUESTION, [make_source(1, TEXT)], audit)
    assert draft.outcome == Outcome.PARTIAL
    assert "part 2 of 2" in draft.missing_note


def test_a_part_stated_by_another_parts_sentence_is_not_missing(embed):
    # Both parts are answered by one sentence: it is said once, and no part is missing.
    audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact=FACTS[0], label=SupportLabel.SUPPORTED, sentences=[sentence(FIRST)]),
        FactAudit(fact=FACTS[1], label=SupportLabel.SUPPORTED, sentences=[sentence(FIRST, 0.2)]),
    ])
    draft = ExtractiveGenerator(embed=embed).generate(QUESTION, [make_source(1, TEXT)], audit)
    assert draft.outcome == Outcome.ANSWER
    assert [s.text for s in draft.sentences] == [FIRST]


def test_a_one_part_question_names_its_need_without_a_part_number(embed):
    audit = AuditResult(verdict=Verdict.PARTIALLY_SUFFICIENT, missing=[FACTS[0]], facts=[
        FactAudit(fact=FACTS[0], label=SupportLabel.PARTIAL, sentences=[sentence(FIRST)]),
    ])
    draft = ExtractiveGenerator(embed=embed).generate("Which tokenizer does Osprey plug in?",
                                                      [make_source(1, TEXT)], audit)
    assert draft.missing_note == f"No supporting evidence was found for: {FACTS[0]}"
