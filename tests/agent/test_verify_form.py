"""agent.verify.form: sentences that assert nothing (issue #13), and answers that do."""

from __future__ import annotations

import pytest

from agent.verify.form import form_check, restates

RERANK = ("When a pretrained T5 model is used as a passage reranker, how is the model's output turned into a "
          "relevance score for ranking?")


@pytest.mark.parametrize("sentence, reason", [
    ("The model's output is turned into a relevance score for ranking.", "only restates the question"),
    ("How is the model's output turned into a relevance score?", "a question"),
    ("19.4% & 20.9% (+19.4% & 20.9%)", "only numbers and symbols"),
    ("The output is ranked against a pool of 1 million随机", "CJK characters"),
    ("The score is the probability of true: The score is the probability of true: [", "repeats itself"),
])
def test_a_sentence_that_asserts_nothing_is_dropped(sentence, reason):
    text, why, _ = form_check(sentence, question=RERANK, quotes=["Documents are ranked by the probability."],
                              earlier=[])

    assert text == "" and reason in why, why


def test_a_restating_lead_is_cut_and_the_rest_kept():
    text, why, notes = form_check(
        "The model's output is turned into a relevance score for ranking. Documents are ranked by the "
        "probability of the token true.", question=RERANK, quotes=[], earlier=[])

    assert not why and text == "Documents are ranked by the probability of the token true."
    assert notes and "restates the question" in notes[0]


def test_a_repeat_of_an_earlier_sentence_is_dropped_and_new_facts_are_kept():
    earlier = ["The encoder has 6 layers and 8 heads."]

    assert form_check("The encoder has 6 layers.", question="", quotes=[], earlier=earlier)[1] == \
        "it repeats an earlier sentence"
    assert form_check("The encoder has 12 layers.", question="", quotes=[], earlier=earlier)[1] == ""


@pytest.mark.parametrize("sentence, question", [
    # An answer adds a number, a name or a word the question lacks.
    ("The base Transformer uses 8 attention heads.", "How many attention heads does the base Transformer use?"),
    ("Ragas asks an LLM to split the answer into statements.", "How does Ragas compute faithfulness?"),
    # A yes/no question is answered by restating it, or by its negation.
    ("Doc2query follows the warmup schedule of the Transformer.", "Does Doc2query follow the warmup schedule?"),
    ("The warmup schedule is not the Transformer's.", "Which warmup schedule does Doc2query use?"),
])
def test_answers_are_not_restatements(sentence, question):
    assert not restates(sentence, question)
    assert form_check(sentence, question=question, quotes=[], earlier=[])[0] == sentence


def test_letters_of_the_questions_or_quotes_script_are_kept():
    sentence = "The similarity is scaled by a temperature τ = 0.01."

    assert form_check(sentence, question="What temperature?", quotes=["a temperature τ = 0.01"], earlier=[])[0] \
        == sentence
    assert "GREEK" in form_check(sentence, question="What temperature?", quotes=["a temperature of 0.01"],
                                 earlier=[])[1]


@pytest.mark.parametrize("sentence", [
    "The main contributions of Lumen are as follows:",
    "Lumen is trained in three stages, which we describe in the following.",
    "We consider the following:",
])
def test_a_sentence_that_only_introduces_a_list_asserts_nothing(sentence):
    text, why, notes = form_check(sentence, question="What are the contributions of Lumen?",
                                  quotes=["Lumen learns one weight for every vocabulary term."], earlier=[])

    assert text == "" and why == "it only introduces what follows", why
    assert notes and "only introduces what follows" in notes[0]


def test_a_lead_in_sentence_is_cut_from_its_claim_and_a_colon_inside_a_sentence_is_not_one():
    text, why, notes = form_check("The parts of Lumen are the following. Its encoder learns one weight per term.",
                                  question="What does Lumen learn?", quotes=[], earlier=[])
    assert not why and text == "Its encoder learns one weight per term.", (text, notes)

    inline = "Lumen has two parts as follows: an encoder and an index of learned weights."
    assert form_check(inline, question="What does Lumen learn?", quotes=[], earlier=[])[:2] == (inline, "")


# --- sentences a small model cut off or garbled while copying (0.5B, held-out devbench) -----

HARROW = ("Harrowgate first trains a filter model on the noisy pairs, and then ranks each pair "
          "against a pool of random passages (Okafor et al., 2021).")


@pytest.mark.parametrize("sentence, reason", [
    ("Harrowgate first trains a filter model on the noisy pairs, and then a [1][2]", "cut off"),
    ("Harrowgate ranks each pair against a pool (Okafor [1]", "cut off"),
    ("Harrowgate trains a filter model on the noisy pairs and then ranks each pair against random passges.",
     "neither in its evidence nor in English: passges"),
    ("Harrowgate first trains a filtermodelling step on the noisy pairs.", "filtermodelling"),
    ("Harrowgate ranks each pair against a pool of randomm passages.", "randomm"),
    ("Harrowgate first trains a filter model on the noisy pairs, andranks each pair.", "andranks"),
    # A copy of its quote that stops inside the quoted sentence without ending.
    ("Harrowgate first trains a filter model on the noisy pairs, and then ranks each pair", "cut off"),
])
def test_a_sentence_cut_off_or_garbled_in_copying_is_dropped(sentence, reason):
    text, why, _ = form_check(sentence, question="How does Harrowgate filter its pairs?", quotes=[HARROW],
                              earlier=[], passages=HARROW)

    assert text == "" and reason in why, why


@pytest.mark.parametrize("sentence", [
    # Its own words, inflected, or new words that resemble none of the evidence's: a paraphrase.
    "Harrowgate trains a filter model first and then uses it to rank every pair against random passages [1]",
    "The filtering outperforms keyword heuristics because it ranks each pair [1]",
    "The nonrandom pairs are ranked against random passages [1]",
    # Part of the quoted sentence, ended: a claim of its own.
    "Harrowgate first trains a filter model on the noisy pairs.",
    # The sentence copied whole: the document's wording, whatever it ends on.
    "Harrowgate first trains a filter model on the noisy pairs, and then ranks each pair against a pool of "
    "random passages (Okafor et al., 2021).",
])
def test_a_paraphrase_or_a_whole_copy_is_not_taken_for_a_garble(sentence):
    text, why, _ = form_check(sentence, question="How does Harrowgate filter its pairs?", quotes=[HARROW],
                              earlier=[], passages=HARROW)

    assert not why and text == sentence


def test_naming_the_asked_number_restates_a_how_many_question():
    question = "How many GPUs did Harrowgate use for pre-training?"

    assert restates("The number of GPUs Harrowgate used for pre-training [2]", question)
    assert not restates("Harrowgate used 64 GPUs for pre-training [2]", question)


def test_a_document_sentence_that_says_a_run_twice_is_its_own_wording():
    # Copied whole from its quote, the repeated run is the paper's parallel wording, not a loop.
    quote = ("Recall metrics are important for judging the quality of the index, while precision metrics "
             "are important for judging the quality of the index shards.")
    kept, why, _ = form_check(quote, question="Which metrics matter for the index?", quotes=[quote],
                              earlier=[])
    assert why == "" and kept

    # The same run written twice by a model, not copied, still repeats itself.
    looped = "Recall is important for judging the quality of the index and important for judging the quality of the index."
    assert form_check(looped, question="Which metrics matter?", quotes=[quote], earlier=[])[1] == "it repeats itself"
