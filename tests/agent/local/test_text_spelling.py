"""British spellings in American (agent.local.text.american): a question saying "normalised"
is scored against a sentence saying "normalized" (the planner respells its needs)."""

from __future__ import annotations

from agent.local.text import american, american_spelling, content_terms


def test_a_british_spelling_respelled_shares_the_american_terms():
    for british, us in (("the vectors are normalised", "the vectors are normalized"),
                        ("its neighbouring passages", "its neighboring passages"),
                        ("we analyse the centre", "we analyze the center")):
        assert content_terms(american_spelling(british)) == content_terms(us)


def test_words_whose_ise_is_no_suffix_stay():
    for word in ("precise", "premise", "exercise", "promise", "surprise", "otherwise", "pairwise", "noise",
                 "raise", "comprise", "supervised", "unsupervised", "expertise", "analyses", "unprecise"):
        assert american(word) == word


def test_a_search_keeps_the_askers_word_and_adds_the_american_one():
    assert american_spelling("Which optimiser was used?", both=True) == "Which optimiser (optimizer) was used?"
    assert american_spelling("Which optimizer was used?", both=True) == "Which optimizer was used?"
    assert american_spelling("Normalised how?") == "Normalized how?"
