"""Corrections of a false premise by a contrast after a comma ("A, not B") and by a denial
of the relation a "which ... did X devise" question presupposes (stop 30). Sentences written
for these tests (none comes from a benchmark set or a paper)."""

from __future__ import annotations

import pytest

from agent.local.contradiction import contradiction_cue
from agent.types import Outcome, Verdict
from tests.agent.local.conftest import make_source


@pytest.mark.parametrize(
    "claim, sentence, cue",
    [
        ("Kestrel stores the cached keys on disk", "Kestrel keeps the cached keys in GPU memory, not on disk.",
         "alternative"),
        ("Wren ranks passages by their length", "Wren ranks passages by their overlap with the query, not by length.",
         "alternative"),
        ("Finch trains its encoder on web forums",
         "Finch trains its encoder on news articles, and not on web forums, for licensing reasons.", "alternative"),
        # Without the comma, two negated words of the claim are the negation cue's, as before.
        ("Finch trains its encoder on web forums", "Finch trains its encoder on news articles but not on web forums.",
         "negation"),
        # "Not only" adds: nothing is set aside.
        ("Finch trains its encoder on web forums",
         "Finch trains its encoder on news articles, not only on web forums.", ""),
        # What the comma's clause sets aside belongs to its own relation: a claim sharing only
        # the word set aside is not denied ("required for recall, but not for parsing").
        ("Osprey parses receipts with a lexicon", "The lexicon is required for recall, but not for parsing.", ""),
        # A claim about what is chosen is not denied by it.
        ("Kestrel keeps the cached keys in GPU memory", "Kestrel keeps the cached keys in GPU memory, not on disk.",
         ""),
    ],
)
def test_a_contrast_after_a_comma_sets_its_second_term_aside(claim, sentence, cue):
    assert contradiction_cue(claim, sentence) == cue


TERN = "Tern: Ranking Shipping Notes"


@pytest.mark.parametrize(
    "question, false",
    [
        ("Why does Tern rank shipping notes by their length?", True),
        ("Why does Tern rank shipping notes by their overlap with the query?", False),
    ],
)
def test_the_premise_check_corrects_a_premise_a_comma_sets_aside(pipeline, question, false):
    sources = [make_source(1, "Tern orders the notes of each shipment for a clerk. Tern ranks shipping notes by "
                              "their overlap with the query, not by their length. It runs on one CPU core.",
                           title=TERN)]
    audit, answer = pipeline(question, sources)
    assert (audit.verdict == Verdict.FALSE_PREMISE) is false
    assert (answer.outcome == Outcome.FALSE_PREMISE) is false
    if false:
        assert "not by their length" in answer.citations[0].quote


PETREL = "Petrel: Checking Claims in Invoices"


@pytest.mark.parametrize(
    "question, false",
    [
        # The noun asked about is what an answer fills in: a denial of the relation around it
        # ("is not trained at all") denies that any such loss was devised to train it.
        ("Which ranking loss did the Petrel authors devise to train their checker?", True),
        ("Which language model does the Petrel checker prompt?", False),
    ],
)
def test_a_denied_relation_corrects_a_which_question(pipeline, question, false):
    sources = [make_source(1, "Petrel flags invoice claims that their receipts do not back. The Petrel checker is "
                              "not trained at all: it is an off-the-shelf language model prompted with three "
                              "instructions. We report accuracy on two invoice sets.", title=PETREL)]
    _audit, answer = pipeline(question, sources)
    assert (answer.outcome == Outcome.FALSE_PREMISE) is false
    if false:
        assert "not trained" in answer.citations[0].quote


@pytest.mark.parametrize(
    "claim, sentence, cue",
    [
        # "without B" after the comma sets B aside as "not B" does, and an acronym of the claim
        # written out in full is the same thing.
        ("Gull was tuned with DPO", "Gull was tuned with ranked replies only, without direct preference optimization.",
         "alternative"),
        ("Gull was tuned with ranked replies", "Gull was tuned with ranked replies only, without direct preference "
                                               "optimization.", ""),
        # A fronted "without X," is an ablation's what-if: nothing is set aside.
        ("Gull uses DPO", "It shows that, without direct preference optimization, Gull drifts.", ""),
    ],
)
def test_without_after_a_comma_sets_aside_an_acronym_written_out(claim, sentence, cue):
    assert contradiction_cue(claim, sentence) == cue


GULL = "Gull: A Small Assistant for Clerks"


@pytest.mark.parametrize(
    "question, false",
    [
        # The document never writes "DPO": it is about the premise all but that name, which the
        # sentence sets aside written out.
        ("How was Gull tuned with DPO?", True),
        ("How was Gull tuned with ranked replies?", False),
    ],
)
def test_the_premise_check_reads_an_acronym_set_aside_in_full(pipeline, question, false):
    sources = [make_source(1, "Gull is a small assistant for shipping clerks. Gull was tuned with ranked replies "
                              "only, without direct preference optimization. It has one billion parameters.",
                           title=GULL)]
    _audit, answer = pipeline(question, sources)
    assert (answer.outcome == Outcome.FALSE_PREMISE) is false
