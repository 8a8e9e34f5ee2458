"""A range's end stated as the value, and a count stated for another subject than the quote's
(agent/verify/slots.py, agent/verify/scope.py): the two kinds of wrong answer the real 1.5B model
got past verification (docs/benchmarks.md, stop 24), in forms the stop-25 rules missed. Sentences,
quotes and chunks are written for these tests (no devbench text), checked through
agent.verify.support with the support score disabled (these rules act before it)."""

from __future__ import annotations

import pytest

from agent.verify import support
from agent.verify.slots import misslotted_numbers
from tests.agent.test_llm_slots import _flat


def _check(sentence: str, quote: str, *, question: str = "", chunk: str = "") -> str:
    result = support(sentence, [quote], question=question, chunk=chunk, embed=_flat, support_min=-1.0)
    return "" if result.ok else result.reason


# --- a range or change written without its "from" -------------------------------------------

BARE = "The reader is given 8 to 32 passages per question in the ablation."
SIZES = "Prompt lengths of 256 to 1024 tokens were compared on the held-out split."
CHANGE = "Adding the consistency filter lifts recall from 58% to 64% on the long questions."


@pytest.mark.parametrize("sentence, quote", [
    ("The reader is given 32 passages per question.", BARE),
    ("The reader sees 8 passages per question.", BARE),
    ("The prompt length used was 1024 tokens.", SIZES),
])
def test_an_end_of_a_bare_range_stated_as_the_value_is_dropped(sentence, quote):
    assert "one end of a range" in _check(sentence, quote), sentence


@pytest.mark.parametrize("sentence, quote", [
    ("The reader is given between 8 and 32 passages per question.", BARE),
    ("The reader is given up to 32 passages per question.", BARE),
    ("Prompts of 256-1024 tokens were compared.", SIZES),
])
def test_a_bare_range_restated_passes(sentence, quote):
    assert _check(sentence, quote) == "", sentence


def test_the_end_of_a_change_stated_as_where_it_went_passes():
    # "rose to 64%" states the change the quote's "from 58% to 64%" ends at.
    assert _check("With the consistency filter, recall on the long questions rose to 64%.", CHANGE) == ""
    assert _check("The consistency filter raises recall on the long questions to 64%.", CHANGE) == ""
    # The start of the change is no place it went to, and the end is no value of its own.
    assert "range" in _check("With the consistency filter, recall on the long questions rose to 58%.", CHANGE)
    assert "range" in _check("Recall on the long questions is 64%.", CHANGE)


def test_a_quote_copied_with_its_bare_range_never_conflicts_with_itself():
    for quote in (BARE, SIZES, CHANGE):
        assert misslotted_numbers(quote, [quote]) == []


# --- a count of another subject --------------------------------------------------------------

CHUNK = ("Three learned sparse models are compared with the lexical baseline. SPLADE and uniCOIL re-weight "
         "the terms of each passage with a masked language model. They both beat BM25 on 9 of the 13 test "
         "collections. TILDE, which expands passages instead, beats it on 5.")
PRONOUN = "They both beat BM25 on 9 of the 13 test collections."
TILDE = "On how many test collections does TILDE beat BM25?"


@pytest.mark.parametrize("sentence", [
    "TILDE beats BM25 on 9 of the 13 test collections.",
    "TILDE beats BM25 on 9 out of 13 test collections.",
    # A subject that names nothing takes the question's.
    "It beats BM25 on 9 of the 13 test collections.",
])
def test_a_count_the_quote_gives_for_what_its_pronoun_points_at_is_not_anothers(sentence):
    reason = _check(sentence, PRONOUN, question=TILDE, chunk=CHUNK)
    assert "where its quote gives it for" in reason and "SPLADE" in reason, (sentence, reason)


def test_the_count_passes_for_what_the_pronoun_points_at():
    assert _check("SPLADE beats BM25 on 9 of the 13 test collections.", PRONOUN,
                  question="On how many test collections does SPLADE beat BM25?", chunk=CHUNK) == ""
    # The document's own sentence, copied.
    assert _check(PRONOUN, PRONOUN, question=TILDE, chunk=CHUNK) == ""


def test_a_pronoun_with_nothing_before_it_in_the_chunk_flags_nothing():
    assert _check("TILDE beats BM25 on 9 of the 13 test collections.", PRONOUN, question=TILDE,
                  chunk=CHUNK[CHUNK.index("They both"):]) == ""


NAMED = "SPLADE beats BM25 on 9 of 13 collections, TILDE on 5."


def test_a_count_the_quote_gives_for_another_named_subject_is_dropped():
    reason = _check("TILDE beats BM25 on 9 of 13 collections.", NAMED, question=TILDE)
    assert "9 of 13 for TILDE, where its quote gives it for SPLADE" in reason, reason
    assert _check("SPLADE beats BM25 on 9 of 13 collections.", NAMED, question=TILDE) == ""


def test_a_count_of_the_papers_own_work_goes_to_the_question_subject():
    # "Our model" is the subject the question names (agent.verify.claims lends names the same way).
    own = "Our expansion model beats BM25 on 9 of the 13 test collections."
    assert _check("TILDE beats BM25 on 9 of the 13 test collections.", own, question=TILDE,
                  chunk=f"We present TILDE. {own}") == ""
