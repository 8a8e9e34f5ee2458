"""Pure parts of the agent: the verifier, the planner, configuration hashes."""

from __future__ import annotations

from agent.configs import CONFIGS, config_hash, config_record, get_config
from agent.local.planner import RulePlanner
from agent.types import Complexity, Draft, DraftSentence, Outcome, Source
from agent.verify import CitationVerifier, find_quote, quote_span, strip_markers

SOURCES = [
    Source(chunk_id=11, document_title="Doc2query", text="We do not put any special markup to distinguish the "
           "original document text from the predicted queries. The details of the training are in [3] and in the appendix."),
    Source(chunk_id=12, document_title="SBERT", text="Our default pooling strategy is MEAN."),
]


def test_it_finds_quotes_ignoring_case_and_whitespace():
    assert find_quote("we do NOT   put any\nspecial markup", SOURCES[0].text) == 0
    assert find_quote("we always put special markup", SOURCES[0].text) == -1


def test_a_stale_quote_offset_is_not_trusted():
    text = "alpha beta gamma beta"
    assert quote_span("beta", text, 17) == (17, 21)
    assert quote_span("beta", text, 0) == (6, 10)
    assert quote_span("beta", text, 2) == (6, 10)
    assert quote_span("delta", text, 0) is None
    assert quote_span("", text) is None


def test_the_quote_span_is_found_as_the_verifier_finds_quotes():
    # Across a paragraph break, in other case, and across a line-break hyphen; the span is
    # in the original text, so it covers the line breaks the quote was written without.
    text = "3 Method\n\nOur method predicts queries. Its perfor-\nmance is good."
    assert quote_span("Method Our method", text, 2) == (2, 20)
    assert quote_span("OUR METHOD predicts", text) == (10, 29)
    start, end = quote_span("its performance is good", text)
    assert text[start:end] == "Its perfor-\nmance is good" and start == find_quote("its performance is good", text)


def test_it_drops_a_fabricated_quote_and_keeps_the_real_one():
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text="Doc2query does not put any special markup into the document.", citations=[1],
                      quote="We do not put any special markup"),
        DraftSentence(text="SBERT uses max pooling.", citations=[2], quote="Our default pooling strategy is MAX."),
    ])
    answer = CitationVerifier().verify(draft, SOURCES)
    assert [s.text for s in answer.sentences] == ["Doc2query does not put any special markup into the document."]
    assert [(c.marker, c.chunk_id, c.verified) for c in answer.citations] == [(1, 11, True)]
    assert any("does not support" in d for d in answer.dropped)


def test_it_drops_markers_to_chunks_that_were_not_retrieved():
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text="Our default pooling strategy is MEAN.", citations=[7, 2]),
    ])
    answer = CitationVerifier().verify(draft, SOURCES)
    assert answer.sentences[0].citations == [1]
    assert answer.citations[0].chunk_id == 12
    assert any("[7]" in d for d in answer.dropped)


def test_it_never_reads_markers_inside_chunk_text():
    # The chunk's own "[3]" (a reference in the paper) must not become a citation.
    quote = "The details of the training are in [3] and in the appendix."
    draft = Draft(outcome=Outcome.ANSWER, sentences=[DraftSentence(text=quote, citations=[1], quote=quote)])
    answer = CitationVerifier().verify(draft, SOURCES)
    assert "[3]" not in answer.sentences[0].text
    assert answer.text.endswith("[1]") and len(answer.citations) == 1


def test_an_answer_with_no_supported_sentence_becomes_a_refusal():
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text="Cats are great.", citations=[1], quote="Cats are great."),
    ])
    assert CitationVerifier().verify(draft, SOURCES).outcome == Outcome.REFUSAL


def test_it_splits_inline_markers():
    assert strip_markers("It works [1][2, 3].") == ("It works.", [1, 2, 3])


def test_it_plans_a_comparison_into_two_sub_queries():
    plan = RulePlanner().plan("How do ColBERT and SPLADE differ in index size?")
    assert plan.complexity == Complexity.COMPARISON
    assert plan.sub_queries == ["ColBERT index size", "SPLADE index size"]


def test_it_takes_a_stated_claim_as_the_premise():
    plan = RulePlanner().plan("Following earlier parsers, Lumen strips page footers by default. "
                              "Why was stripping preferred?")
    assert plan.premise == "Lumen strips page footers by default"
    assert RulePlanner().plan("Why does Lumen tag tables with markup?").premise == "Lumen tag tables with markup"


def test_it_splits_a_two_part_question():
    plan = RulePlanner().plan("How many heads does the base Transformer use, and what is the dimension of each head?")
    assert plan.complexity == Complexity.MULTI_PART
    assert len(plan.facts) == 2 and len(plan.sub_queries) == 2


def test_config_hashes_are_stable_and_distinct():
    hashes = {name: config_hash(config_record(c, backend="local")) for name, c in CONFIGS.items()}
    assert len(set(hashes.values())) == len(CONFIGS) == 8
    assert hashes["agentic"] == config_hash(config_record(get_config("agentic"), backend="local"))
    assert hashes["agentic"] != config_hash(config_record(get_config("agentic"), backend="openai", model="gpt-4o-mini"))
