"""Support is also about WHOSE number and WHICH method: a sentence may not move a number of its
quote to another name, nor borrow a quote about another method (agent.verify.pairing, claims)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.verify import mispaired_numbers, missing_names, pairings, support
from agent.verify.claims import off_subject

# Written for these tests: two systems, two metrics, in the shapes papers use.
BOTH = "In contrast, the dense retrievers Falcon and Heron miss 12.5% and 27.1% of the judged passages."
LEXICAL = "Lexical systems like Okapi and Tern reach a recall of 0.61 and 0.58, respectively."
ROW = "Falcon 12.5 Heron 27.1 Okapi 3.2"
PAREN = "Falcon (12.5%) trails Heron (27.1%) on this measure."
ONE = "Heron reaches 27.1% on the held-out queries."
CONTRAST = ("The simplest formulation is to train a classifier on BLEU-labelled pairs that estimates the probability "
            "each passage is relevant, and then sort the candidates by these estimates.")
OWN = "We rank the passages by the probability our model assigns to the token yes."


def _values(text):
    return {(name, str(q.value)) for name, q in pairings(text)}


def test_the_pairs_a_quote_states_are_read_from_lists_rows_parentheses_and_single_names():
    assert _values(BOTH) == {("Falcon", "12.5"), ("Heron", "27.1")}
    assert _values(LEXICAL) == {("Okapi", "0.61"), ("Tern", "0.58")}
    assert _values(ROW) == {("Falcon", "12.5"), ("Heron", "27.1"), ("Okapi", "3.2")}
    assert _values(PAREN) == {("Falcon", "12.5"), ("Heron", "27.1")}
    assert _values(ONE) == {("Heron", "27.1")}


def test_an_ambiguous_clause_and_labels_pair_nothing():
    # Two names and one number: whose is it? The quote does not say, so nothing is paired.
    assert pairings("Heron beats Falcon by 4.2 points.") == []
    # Reference markers, table and section numbers and years are labels, not values.
    assert pairings("Heron [12] is described in Table 3 of the 2021 report.") == []


@pytest.mark.parametrize("quote", [BOTH, ROW, PAREN])
def test_a_value_moved_to_the_other_name_is_flagged(quote):
    problems = mispaired_numbers("Heron misses 12.5% of the judged passages.", [quote])
    assert len(problems) == 1 and "12.5" in problems[0] and "Falcon" in problems[0]


@pytest.mark.parametrize("sentence", [
    "Heron misses 27.1% of the judged passages.",
    "Falcon and Heron miss 12.5% and 27.1% of the judged passages, respectively.",
    "Heron misses 27.1%, more than twice Falcon's 12.5%.",
    "The share of missed passages is 12.5% for Falcon and 27.1% for Heron.",
    "Compared with Falcon (12.5%), Heron misses 27.1%.",
    "Heron misses 27.1% whereas Falcon misses 12.5%.",
])
def test_a_correct_pairing_in_any_word_order_passes(sentence):
    assert mispaired_numbers(sentence, [BOTH]) == []


def test_swapped_lists_are_flagged_and_a_number_of_no_listed_name_is_left_to_the_presence_check():
    assert len(mispaired_numbers("Falcon and Heron miss 27.1% and 12.5% of the passages.", [BOTH])) == 2
    # 3.2 is nobody's in BOTH: the pairing check has nothing to say (missing_numbers has).
    assert mispaired_numbers("Heron misses 3.2%.", [BOTH]) == []


def _flat(texts):
    return np.ones((len(texts), 2)) / np.sqrt(2)


def test_support_drops_the_mixed_value_and_keeps_the_right_one():
    wrong = support("Heron misses 12.5% of the judged passages.", [BOTH], embed=_flat, support_min=-1.0)
    right = support("Heron misses 27.1% of the judged passages.", [BOTH], embed=_flat, support_min=-1.0)
    assert not wrong.ok and "12.5% for Heron" in wrong.reason
    assert right.ok, right.reason


def test_a_question_name_is_lent_by_a_quote_about_the_papers_own_work_only():
    question = "How does the Kestrel reranker score a passage?"
    chunk = f"Kestrel is our reranker. {CONTRAST} {OWN}"
    sentence = "The Kestrel reranker ranks the passages by the probability assigned to the token yes."
    assert missing_names(sentence, OWN, question=question, chunk=chunk) == []
    # The quote about the contrasted formulation names BLEU, and never Kestrel: not lent.
    assert missing_names("The Kestrel reranker sorts the candidates by a classifier's estimates.", CONTRAST,
                         question=question, chunk=chunk) == ["Kestrel"]
    # A quote that names nothing else stands for the chunk's subject.
    plain = "The passages are sorted by the probability of the token yes."
    assert missing_names("The Kestrel reranker sorts the passages by the probability of yes.", plain, question=question,
                         chunk=chunk) == []


def test_a_sentence_without_names_must_rest_on_a_quote_about_the_questions_subject():
    question = "How does the Kestrel reranker turn its output into a relevance score?"
    sentence = ("The output is turned into a score by a classifier that estimates the probability each passage "
                "is relevant.")
    reason = off_subject(sentence, CONTRAST, context="Passage Ranking 1 Introduction", question=question)
    assert "BLEU" in reason and "Kestrel" in reason
    assert off_subject(sentence, OWN, context="Passage Ranking 2 Method", question=question) == ""
    # A quote that names nothing is left to the support score.
    assert off_subject(sentence, "A classifier estimates the probability that each passage is relevant.",
                       question=question) == ""
    # The title spells out the acronym the question uses: the quote is about the subject.
    assert off_subject("It covers refusing to answer.", "Negative Rejection covers refusing to answer.",
                       context="Retrieval-Augmented Generation: A Survey",
                       question="Which RAG ability covers refusing?") == ""


def test_support_reports_the_other_method():
    question = "How does the Kestrel reranker turn its output into a relevance score?"
    result = support("The output is turned into a score by a classifier that estimates the probability each "
                     "passage is relevant.", [CONTRAST], context="Passage Ranking", question=question,
                     chunk=f"Kestrel is our reranker. {CONTRAST}", embed=_flat, support_min=-1.0)
    assert not result.ok and "never mentions Kestrel" in result.reason
