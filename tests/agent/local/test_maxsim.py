"""agent.local.maxsim: token-level MaxSim of a need against a sentence, on made-up word-piece
vectors (no model)."""

from __future__ import annotations

import numpy as np

from agent.local.maxsim import content_piece, maxsim, need_weights


def _unit(*rows):
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_stopwords_and_punctuation_carry_no_weight():
    words = ("which", "optimiser", "trains", "the", "parser", "?")
    assert [content_piece(w) for w in words] == [False, True, True, False, True, False]
    assert need_weights(words, None, 1.0).tolist() == [0, 1, 1, 0, 1, 0]


def test_a_rare_word_weighs_more_than_a_common_one_and_an_unseen_one_the_most():
    from agent.local.text import stem

    idf = {stem("optimiser"): 2.0, stem("trains"): 0.5}
    weights = need_weights(("optimiser", "trains", "parser"), idf, unseen=3.0)
    assert weights.tolist() == [2.0, 0.5, 3.0]


def test_each_need_piece_takes_its_best_match_in_the_sentence():
    need = _unit([1, 0, 0], [0, 1, 0])
    sentence = _unit([1, 0, 0], [0, 0, 1], [0.6, 0.8, 0])
    # first piece: 1.0 (exact); second: 0.8 (the third sentence piece)
    assert np.isclose(maxsim(need, np.array([1.0, 1.0]), sentence), 0.9)
    assert np.isclose(maxsim(need, np.array([3.0, 1.0]), sentence), (3 * 1.0 + 0.8) / 4)


def test_nothing_to_match_scores_zero():
    need = _unit([1, 0, 0])
    assert maxsim(need, np.array([0.0]), _unit([1, 0, 0])) == 0.0
    assert maxsim(need, np.array([1.0]), np.zeros((0, 3), dtype=np.float32)) == 0.0
