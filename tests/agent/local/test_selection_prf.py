"""bench/selection_prf.py's pseudo-relevance feedback (RM1 expansion of a need's terms), on
made-up feedback texts (no database, no question-set data)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def prf():
    sys.path.insert(0, str(BENCH))
    try:
        import selection_prf

        yield selection_prf
    finally:
        sys.path.remove(str(BENCH))


FEEDBACK = [
    "The Quillfeather tagger is regularised with dropout of 0.3 and label smoothing.",
    "Regularisation of the Quillfeather tagger uses dropout on every recurrent layer.",
    "Harbour cranes were painted blue in the spring of the survey year.",
]


def test_the_relevance_model_weights_texts_that_hold_the_need(prf):
    from agent.local.text import content_terms

    need = content_terms("Which regularisation does the Quillfeather tagger use?")
    model = prf._relevance_model(need, [Counter(prf.content_terms_all(t)) for t in FEEDBACK])
    crane = content_terms("cranes")[0]
    dropout = content_terms("dropout")[0]
    assert model[dropout] > model.get(crane, 0.0)
    assert abs(sum(model.values()) - 1.0) < 1e-9


def test_the_expansion_leaves_out_the_need_and_covers_a_sentence_in_other_words(prf):
    from agent.local.text import content_terms, term_set

    need = content_terms("Which regularisation does the Quillfeather tagger use?")
    model = prf._relevance_model(need, [Counter(prf.content_terms_all(t)) for t in FEEDBACK])
    expansion = prf._expansion(model, set(need), 5)
    assert not set(need) & set(expansion)
    assert content_terms("dropout")[0] in expansion
    answer = term_set("We apply dropout after each layer.")
    unrelated = term_set("The harbour is quiet at night.")
    assert prf._covered(expansion, answer) > prf._covered(expansion, unrelated) == 0.0


def test_given_weights_replace_the_query_likelihood(prf):
    docs = [Counter({"alpha": 2}), Counter({"beta": 2})]
    model = prf._relevance_model(["gamma"], docs, weights=[1.0, 0.0])
    assert model["alpha"] == 1.0 and model.get("beta", 0.0) == 0.0
    assert prf._covered({}, {"alpha"}) == 0.0


def test_ranked_feedback_expands_from_the_best_candidates_by_the_weights(prf):
    import numpy as np

    need = "Which regularisation does the Quillfeather tagger use?"
    quotes = np.array([f"{need} || {s}" for s in (
        "Regularisation of the Quillfeather tagger relies on dropout everywhere.",
        "We apply dropout after each layer.",
        "The harbour is quiet at night.",
    )])
    x = np.array([[1.0], [0.0], [0.0]])
    groups = np.array(["Q1/0"] * 3)
    col = prf.ranked_feedback(x, quotes, groups, np.array([5.0]), 1, 5)
    assert col[1] > 0.0 and col[2] == 0.0
