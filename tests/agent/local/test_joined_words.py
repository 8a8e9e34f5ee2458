"""The local roles read a word a line break cut ("Lamp- Net") whole, as the paper writes it
elsewhere, while the quotes they hand on stay the stored text. Passages and questions are
written for these tests; none comes from a benchmark."""

from __future__ import annotations

import pytest

from agent.local.auditor import LocalAuditor
from agent.local.candidates import candidates, read_sources
from agent.local.planner import RulePlanner
from agent.types import Verdict
from agent.verify import line_break_joiner, quote_span
from knowledge.text import Vocabulary
from tests.agent.local.conftest import make_source

TITLE = "Ranking streets by their lighting at night"
# The paper writes its ranker's name whole in chunks the question did not retrieve.
PAPER = Vocabulary.of(["We present LampNet, a ranker for night-time street images.",
                       "LampNet runs on a phone in under a second."])
QUESTION = "How does the LampNet ranker count lit windows?"


def _sources(name: str):
    return [
        make_source(1, f"Counting is done per frame. The {name} ranker counts the lit windows in each frame "
                       "and scores a street by the share of windows that are lit.", title=TITLE),
        make_source(2, "The ranker was trained on four thousand night-time images taken in four towns.", title=TITLE),
        make_source(3, "Streets with more lit windows were judged safer by residents in our survey.", title=TITLE),
    ]


def _audit(embed, sources, vocabulary=lambda document_id: PAPER):
    return LocalAuditor(embed=embed, vocabulary=vocabulary).audit(QUESTION, RulePlanner().plan(QUESTION), sources,
                                                                  can_retry=False)


@pytest.mark.parametrize("broken", ["Lamp- Net", "Lamp-\nNet"])
def test_a_name_a_line_break_cut_is_answered_as_when_it_is_stored_whole(embed, broken):
    whole = _audit(embed, _sources("LampNet"))
    cut = _audit(embed, _sources(broken))
    assert whole.verdict == Verdict.SUFFICIENT
    assert cut.verdict == whole.verdict
    assert cut.premise.confirmed


def test_the_quotes_handed_on_are_the_stored_text(embed):
    sources = _sources("Lamp-\nNet")
    audit = _audit(embed, sources)
    quote = audit.facts[0].sentences[0]
    assert quote.quote.startswith("The Lamp- Net ranker counts")
    stored = sources[0].text
    assert quote.quote_start == quote_span(quote.quote, stored)[0] == stored.index("The Lamp-")


def test_without_the_papers_word_a_name_before_a_name_stays_cut(embed):
    # Nothing says "LampNet" is one word: the retrieved chunks alone leave "Lamp- Net" as it is.
    audit = _audit(embed, _sources("Lamp- Net"), vocabulary=None)
    assert audit.verdict == Verdict.INSUFFICIENT_REFUSE


def test_candidates_score_the_joined_words_and_embed_the_stored_sentence():
    sources = _sources("Lamp- Net")
    join = line_break_joiner(sources, lambda document_id: PAPER)
    found = {c.quote: c for c in candidates([QUESTION], "", sources, join=join)}
    cand = found["The LampNet ranker counts the lit windows in each frame and scores a street by the share of "
                 "windows that are lit."]
    assert "lampnet" in cand.terms
    assert cand.raw.startswith("The Lamp- Net ranker")  # what the index embedded
    assert cand.stored.startswith("The Lamp- Net ranker")
    # An uncut sentence is read as stored.
    plain = found["Streets with more lit windows were judged safer by residents in our survey."]
    assert plain.stored == ""
    read = read_sources(sources, join)
    assert "The LampNet ranker" in read[0].text and read[1] is sources[1]


def test_a_compound_cut_at_its_hyphen_keeps_the_hyphen():
    sources = [make_source(1, "We train on MS- MARCO passages. The MS-MARCO dev set has 6,980 queries.")]
    read = read_sources(sources, line_break_joiner(sources))
    assert read[0].text.startswith("We train on MS-MARCO passages.")


def test_the_answer_cites_the_stored_sentence_and_reads_the_joined_name(embed):
    from agent.local.generator import ExtractiveGenerator
    from agent.types import Outcome
    from agent.verify import CitationVerifier

    sources = _sources("Lamp-\nNet")
    audit = _audit(embed, sources)
    answer = CitationVerifier().verify(ExtractiveGenerator(embed=embed).generate(QUESTION, sources, audit), sources,
                                       question=QUESTION, vocabulary=lambda document_id: PAPER)
    assert answer.outcome == Outcome.ANSWER
    assert answer.sentences[0].text.startswith("The LampNet ranker counts the lit windows")
    citation = answer.citations[0]
    assert sources[0].text[citation.quote_start:].startswith("The Lamp-\nNet ranker")
