from __future__ import annotations

import pytest

from agent.local.text import offers_answer_type

WORLD_CUP = "Who won the 2022 FIFA World Cup?"


@pytest.mark.parametrize(
    "question, sentence, expected",
    [
        # The In-Context RALM paper's Figure 1 shares every term but "won" and names no winner.
        (WORLD_CUP, "World Cup 2022 was the last with 32 teams, before the increase to 48 in the 2026 tournament.",
         False),
        (WORLD_CUP, "Argentina won the 2022 FIFA World Cup after a penalty shoot-out.", True),
        (WORLD_CUP, "The final was won by Argentina.", True),
        ("How many attention heads does the base Transformer use?",
         "In this work we employ h = 8 parallel attention layers, or heads.", True),
        ("How many attention heads does the base Transformer use?",
         "Multi-head attention allows the model to jointly attend to information.", False),
        ("When was BERT released?", "BERT was released in October 2018.", True),
        ("When was BERT released?", "BERT is pre-trained on unlabeled text.", False),
        # A "when" clause that is not the question, then questions of other shapes: not checked.
        ("When a pretrained T5 model is used as a reranker, how is its output turned into a score?",
         "We rerank the documents according to the probabilities assigned to the true token.", True),
        ("How is the output of T5 turned into a score?", "We rerank by the probability of true.", True),
    ],
)
def test_a_sentence_must_offer_the_kind_of_answer_asked_for(question, sentence, expected):
    assert offers_answer_type(question, sentence) is expected
