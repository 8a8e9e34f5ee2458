"""Premise checks for more question forms and contradiction kinds (stop 26), on sentences
written for these tests (none comes from a benchmark or from bench/premise_questions.jsonl)."""

from __future__ import annotations

import pytest

from agent.local.contradiction import contradiction_cue, reversed_ranking
from agent.local.contradiction.opposites import antonym_in_slot
from agent.local.contradiction.origin import credited_elsewhere
from agent.local.planner import RulePlanner, presupposition
from agent.types import Outcome, Verdict
from agent.verify.form import form_check
from tests.agent.local.conftest import make_source


@pytest.mark.parametrize(
    "question, premise",
    [
        # A dash inside a name is no second question.
        ("How was Harrow \u2013 Chat tuned with ranking losses?", "Harrow \u2013 Chat tuned with ranking losses"),
        # A dash before a question word still cuts the second question off.
        ("How large is the Quill index \u2014 how many pages does it hold?", "the Quill index"),
        # A question about a motive presupposes what was done.
        ("What motivated the Lumen team to build a byte-level tokenizer?",
         "the Lumen team build a byte-level tokenizer"),
        ("What prompted Quill to drop page images?", "Quill drop page images"),
        ("What led the authors to freeze the encoder?", "the authors freeze the encoder"),
    ],
)
def test_every_question_form_states_its_presupposition(question, premise):
    assert presupposition(question) == premise


def test_a_relation_between_two_things_keeps_the_question_premise():
    plan = RulePlanner().plan("How does Lumen use the widest gaps between header lines and footer lines?")
    assert plan.premise == "Lumen use the widest gaps between header lines and footer lines"


def test_a_comparison_between_two_things_presupposes_nothing():
    assert RulePlanner().plan("What is the difference between Lumen and Quill?").premise == ""


def test_a_premise_number_is_searched_without_it():
    plan = RulePlanner().plan("Why is the Quill batch size set to 512 by default?")
    assert plan.sub_queries[1] == "the Quill batch size set to by default"
    # A name with a number is no value to drop, and a premise without numbers adds no query.
    assert RulePlanner().plan("Why does Quill use Harrow-2 embeddings?").sub_queries == [
        "Why does Quill use Harrow-2 embeddings?"]


@pytest.mark.parametrize(
    "claim, sentence",
    [
        ("Lumen avoid recurrence to encode page order",
         "We present Lumen, an encoder eschewing recurrence and instead relying on page offsets."),
        ("Quill fine-tune the reader on receipts", "Quill forgoes fine-tuning the reader on receipts altogether."),
    ],
)
def test_setting_a_thing_aside_denies_using_it(claim, sentence):
    assert contradiction_cue(claim.replace("avoid", "use"), sentence) == "alternative"


def test_a_ranking_after_a_comma_ranks_the_sentence_subject():
    sentence = "Averaged page vectors scored poorly on every receipt task (Table 2), worse than plain word counts."
    assert reversed_ranking("averaged page vectors outperform plain word counts on receipt tasks", sentence)
    assert not reversed_ranking("averaged page vectors do worse than plain word counts on receipt tasks", sentence)


@pytest.mark.parametrize(
    "claim, sentence, opposite",
    [
        ("Quill keeps the longest spans between two headers", "Quill keeps the shortest spans between two headers.",
         True),
        ("Lumen picks the highest scoring page", "Lumen picks the lowest scoring page of each receipt.", True),
        # An opposite in another slot speaks of something else.
        ("Lumen picks the highest scoring page", "Lumen picks a page, and the shortest receipts come first.", False),
    ],
)
def test_superlatives_are_opposites_in_their_slot(claim, sentence, opposite):
    assert antonym_in_slot(claim, sentence) is opposite


@pytest.mark.parametrize(
    "claim, sentence, credited",
    [
        # The thing made, with a citation attached: someone else made it.
        ("the Lumen authors invent the sliding page encoder",
         "Lumen uses a sliding page encoder based on the design described in Okafor et al. (2019).", True),
        ("Quill introduce the receipt tokenizer", "Quill relies on the receipt tokenizer [14] for all inputs.", True),
        # A citation in another clause credits another thing.
        ("Quill introduce the receipt tokenizer",
         "We call this step the receipt tokenizer, although it resembles earlier splitters (Ng, 2015).", False),
        # The sentence says its authors made it.
        ("Quill introduce the receipt tokenizer",
         "We propose the receipt tokenizer, which extends byte splitting (Ng, 2015).", False),
        # No claim of making anything.
        ("Quill uses the receipt tokenizer", "Quill relies on the receipt tokenizer [14] for all inputs.", False),
    ],
)
def test_a_cited_origin_denies_an_invention(claim, sentence, credited):
    assert credited_elsewhere(claim, sentence) is credited


def test_a_correction_quoting_premise_and_source_does_not_repeat_itself():
    # The premise and the sentence that denies it share six words: the writer repeated nothing.
    quote = "At every step, Quill routes each page to two readers and merges their outputs."
    text = f'The premise does not hold ("at every step Quill routes each page to three readers"): the source says "{quote}"'
    kept, why, _ = form_check(text, question="Why does Quill route each page to three readers at every step?",
                              quotes=[quote], earlier=[])
    assert why == ""
    assert kept
    # A run said twice outside quotations still repeats itself.
    twice = "Quill routes each page to two readers. Quill routes each page to two readers."
    assert form_check(twice, question="How does Quill route pages?", quotes=[quote], earlier=[])[1] == "it repeats itself"


def test_numbers_clash_only_in_the_same_slot():
    from agent.local.contradiction import number_substitution

    assert number_substitution("Quill stacks 8 parallel reader heads", "Quill stacks 16 parallel reader heads.")
    # A label or a reference is no value, and a shared word on the other side is another slot.
    assert not number_substitution("Quill stacks 8 parallel reader heads",
                                   "Quill counters this with reader heads as described in section 3.2.")
    assert not number_substitution("Quill truncates each receipt to 400 tokens",
                                   "Ng et al. proposed expanding each receipt before indexing [101].")


LUMEN = [
    make_source(
        301,
        "Lumen reads receipts page by page. Lumen uses a sliding page encoder based on the design described in "
        "Okafor et al. (2019) and trained on scanned receipts.",
        title="Lumen: reading receipts",
    ),
    make_source(302, "The sliding page encoder of Lumen keeps 12 pages in memory while it reads.",
                title="Lumen: reading receipts"),
]


def test_an_invention_credited_to_a_cited_work_is_corrected(pipeline):
    audit, answer = pipeline("What motivated the Lumen authors to invent the sliding page encoder?", LUMEN)
    assert audit.verdict == Verdict.FALSE_PREMISE and "origin" in audit.premise.reason
    assert answer.outcome == Outcome.FALSE_PREMISE
    assert "Okafor et al. (2019)" in answer.citations[0].quote


HARBOR = [
    make_source(
        401,
        "We compare each Harbor parser with its page-level counterpart on receipts that fit both windows. "
        "When a receipt fits the window of both a parser and its page-level counterpart, their accuracy is "
        "nearly identical. Page-level parsers are not necessarily better at reading their whole input.",
        title="Harbor: parsing long receipts",
    ),
]


def test_a_denial_of_another_relation_does_not_correct_a_true_premise(pipeline):
    audit, _ = pipeline("Why do parsers often have identical accuracy to their page-level counterparts?", HARBOR)
    assert audit.verdict != Verdict.FALSE_PREMISE
