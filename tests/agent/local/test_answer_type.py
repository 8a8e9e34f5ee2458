"""agent.local.answer_type.points_elsewhere: a sentence that says where the paper treats
something is told from one that states it."""

from __future__ import annotations

import pytest

from agent.local.answer_type import points_elsewhere


@pytest.mark.parametrize(
    "sentence",
    [
        "In Section 5, we describe the experiments on the new collection.",
        "Details of the training setup are given in Appendix B.",
        "The next section describes our retrieval model.",
        "Section 3 presents the results of the user study.",
        "We discuss limitations in Sec. 7 and conclude in Sec. 8.",
        "The encoder uses attention in three different ways:",
    ],
)
def test_a_sentence_about_where_something_is_said_points_elsewhere(sentence):
    assert points_elsewhere(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "We train for 3 epochs, as described in Section 4.",
        "In Section 4, we show that the reranker beats the baseline by 5 points.",
        "We compare sparse and dense retrievers on eighteen datasets.",
        "The architecture is presented in Figure 2.",
    ],
)
def test_a_sentence_that_states_something_does_not(sentence):
    assert not points_elsewhere(sentence)
