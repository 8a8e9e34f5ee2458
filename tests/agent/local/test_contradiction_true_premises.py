"""True premises that the contradiction cues must not read as corrected: a number written
with a thousands separator is one number ("4,096"), not two that may clash with the
premise's other numbers; an agent noun ("the reviewers") is not denied by a denial of its
deed ("without reviews"), though the stemmer gives both one stem. Sentences written for
these tests (none comes from a benchmark set); each case also keeps a true correction."""

from __future__ import annotations

import pytest

from agent.local.contradiction import contradiction_cue, number_substitution
from agent.local.contradiction.terms import different_words
from agent.types import Verdict


@pytest.mark.parametrize(
    "claim, sentence, clash",
    [
        # The sentence states both of the premise's values: no clash, whatever words sit around them.
        ("Osprey limits every parser to 4,096 bytes even though the readers accept 8,192",
         "Osprey limits each parser to a buffer of 4,096 bytes, even though the readers accept 8,192 bytes.", False),
        ("the archive holds 12,500 scans", "The archive holds 12,500 scans in total.", False),
        # Another value in the same slot is still a clash.
        ("the archive holds 12,500 scans", "The archive holds 17,300 scans in total.", True),
        ("Osprey limits every parser to 4,096 bytes", "Osprey limits each parser to 16,384 bytes.", True),
    ],
)
def test_a_thousands_separator_joins_one_number(claim, sentence, clash):
    assert number_substitution(claim, sentence) is clash
    assert (contradiction_cue(claim, sentence) == "number") is clash


@pytest.mark.parametrize(
    "claim, sentence, corrected",
    [
        # The people who review are not their reviews: a tool that works without expert
        # reviews does not deny that two expert reviewers disagreed.
        ("the two expert annotators of the Heron corpus disagree on the labels",
         "Heron scores each label automatically, without relying on expert annotations.", False),
        # Denying the deed still denies the deed.
        ("the Heron corpus labels come from expert annotations",
         "Heron labels are produced automatically, without any expert annotations.", True),
        ("the Heron corpus labels come from expert annotations",
         "Heron does not use expert annotations for its corpus labels.", True),
    ],
)
def test_an_agent_noun_is_not_denied_by_a_denial_of_its_deed(claim, sentence, corrected):
    assert bool(contradiction_cue(claim, sentence)) is corrected


def test_different_words_of_one_stem():
    assert different_words("the annotators agree", "without annotations") == {"annot"}
    assert different_words("annotations were kept", "without annotations") == set()
    # "order" and "number" keep their ending under the stemmer: no agent nouns.
    assert different_words("the order of layers", "ordering the layers") == set()


_OSPREY = "Osprey: streaming parsers for sensor logs"


def _osprey():
    from tests.agent.local.conftest import make_source

    return [
        make_source(91, "Osprey ran every parser with a maximum buffer of 4096 bytes, even though the log readers "
                        "support buffers of 8192 bytes.", title=_OSPREY),
        make_source(92, "Osprey parsers flush the buffer every 64 bytes so that a crash loses little of the log.",
                    title=_OSPREY),
    ]


def test_another_quantity_of_the_same_unit_does_not_correct_a_premise_a_sentence_states(pipeline):
    # "every 64 bytes" counts bytes too, but the sentence that gives the premise's own 4096
    # bytes is at least as close to it: the premise is stated, not corrected.
    audit, _ = pipeline("Why did Osprey cap every parser at 4096 bytes even though the log readers handle 8192?",
                        _osprey())
    assert audit.verdict != Verdict.FALSE_PREMISE


def test_another_value_in_the_stated_slot_is_still_corrected(pipeline):
    audit, _ = pipeline("Why did Osprey cap every parser at 1000 bytes even though the log readers handle 8192?",
                        _osprey())
    assert audit.verdict == Verdict.FALSE_PREMISE
