"""The premise classifier (agent.local.entailment) and its new surface features, on sentences
written for these tests (none comes from a benchmark), with the real offline embedder and
the fitted weights (agent/local/premise_model.json)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.contradiction import direction, direction_clash, slot_filler
from agent.local.entailment import (
    CLASSES,
    FEATURES,
    Classifier,
    chose_rejected,
    default_classifier,
    fit_softmax,
    probabilities,
)
from agent.local.planner import RulePlanner
from agent.types import Verdict
from tests.agent.local.conftest import make_source


@pytest.mark.parametrize(
    "claim, sentence, expected",
    [
        # Another common noun between the same neighbours: a different position.
        ("Readers recall facts best when the key passage is in the middle of the input",
         "Readers recall facts best when the key passage comes at the start or the end of the input.", (1.0, 0.0)),
        # Another name in the same relation: scored as a value too.
        ("Lumen fetches its web results from the Bing API", "Lumen fetches its web results from the Google API.",
         (1.0, 1.0)),
        ("The tagger uses 8 heads", "The tagger uses 16 heads.", (1.0, 1.0)),
        # The same statement, or one that shares too little of the claim, has no slot.
        ("Lumen fetches its web results from the Bing API", "Lumen fetches its web results from the Bing API.",
         (0.0, 0.0)),
        ("Lumen fetches its web results from the Bing API", "Receipts are scanned at 300 dpi.", (0.0, 0.0)),
        # One neighbour only (the term ends the claim): half the score.
        ("The index is stored on disk", "The index is stored in memory.", (0.5, 0.0)),
    ],
)
def test_same_relation_different_filler(claim, sentence, expected):
    assert slot_filler(claim, sentence) == expected


def test_direction_reads_negation_and_irregular_verbs():
    assert direction("Caching raised the hit rate") == 1
    assert direction("The hit rate fell after caching") == -1
    assert direction("Caching did not improve the hit rate") == -1
    assert direction("Caching improved some rates and reduced others") == 0
    assert direction_clash("The vaccine raised antibody levels", "Antibody levels fell after vaccination.")
    assert not direction_clash("The vaccine raised antibody levels", "Antibody levels rose after vaccination.")


def test_a_claim_that_sets_b_aside_is_contradicted_by_a_sentence_that_chooses_b():
    claim = "The team trained with SGD instead of Adagrad"
    assert chose_rejected(claim, "In the end the team trained every model with Adagrad.")
    assert not chose_rejected(claim, "The team trained every model with SGD, not Adagrad.")


def test_fit_softmax_learns_a_separable_three_way_problem():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    x = rng.normal(0, 0.3, (300, 2)) + np.array([[0, 0], [2, 0], [0, 2]])[y]
    mean, scale = x.mean(axis=0), x.std(axis=0)
    w, b = fit_softmax((x - mean) / scale, y, l2=0.01)
    predicted = probabilities(x, w, b, mean=mean, scale=scale).argmax(axis=1)
    assert (predicted == y).mean() > 0.95


def test_the_shipped_classifier_matches_the_feature_list():
    model = default_classifier()
    assert np.asarray(model.weights).shape == (len(CLASSES), len(FEATURES))
    assert len(model.mean) == len(model.scale) == len(FEATURES)


def _p_false(embed, claim: str, sentences: list[str]) -> np.ndarray:
    vecs = embed([claim, *sentences])
    return default_classifier().contradiction(claim, vecs[0], sentences, vecs[1:])[0]


def test_a_denial_scores_above_a_paraphrase_that_agrees(embed):
    claim = "Compressing the index slows down query processing"
    denial, agreement, aside = _p_false(embed, claim, [
        "Compressing the index does not slow query processing; queries run faster than before.",
        "Query processing becomes slower once the index is compressed.",
        "We compress the index to a tenth of its size before training.",
    ])
    threshold = AuditorParams().premise_false_min
    assert denial >= threshold > max(agreement, aside)


def test_an_opposite_direction_without_a_listed_antonym_scores_above_agreement(embed):
    claim = "The new diet raised cholesterol levels in adults"
    clash, agreement = _p_false(embed, claim, ["Cholesterol levels in adults fell on the new diet.",
                                               "Cholesterol levels in adults rose on the new diet."])
    assert clash > agreement


def _audit(embed, question: str, sources):
    plan = RulePlanner().plan(question)
    return LocalAuditor(embed=embed).audit(question, plan, sources, can_retry=False)


def test_a_true_premise_worded_differently_is_not_corrected(embed):
    sources = [make_source(41, "Brightwell keeps a small cache of recent pages in memory. The cache is flushed "
                               "whenever the crawler restarts, so stale pages never survive a restart.",
                           title="Brightwell: a polite crawler")]
    audit = _audit(embed, "Why does Brightwell empty its page cache when the crawler restarts?", sources)
    assert audit.verdict != Verdict.FALSE_PREMISE


@pytest.mark.xfail(strict=True, reason=(
    "a common noun substituted in the same relation (a position, an engine) has no surface cue, and the "
    "SciFact calibration claims give the same-relation-different-filler feature almost no weight: their "
    "supporting rationales paraphrase into the slot as often as contradicting ones replace it"))
def test_a_substituted_position_is_a_false_premise(embed):
    sources = [make_source(51, "Readers recall facts best when the key passage comes at the start or the end of "
                               "the input, and worst when it sits in between.", title="Where readers look")]
    audit = _audit(embed, "Why do readers recall facts best when the key passage is in the middle of the input?",
                   sources)
    assert audit.verdict == Verdict.FALSE_PREMISE


@pytest.mark.xfail(strict=True, reason=(
    "an opposite direction that the classifier sees (direction_clash) moves P(CONTRADICT) from about 0.3 to "
    "about 0.45, under the calibrated premise_false_min: SciFact calibration weighs it, but not enough alone"))
def test_an_opposite_direction_alone_is_a_false_premise(embed):
    sources = [make_source(61, "In our trial, cholesterol levels in adults fell steadily on the new diet.",
                           title="A diet trial")]
    audit = _audit(embed, "Why did the new diet raise cholesterol levels in adults?", sources)
    assert audit.verdict == Verdict.FALSE_PREMISE


def _direction_only() -> Classifier:
    """A classifier that says CONTRADICT exactly when the directions clash (to test the wiring)."""
    d = len(FEATURES)
    weights = [[0.0] * d, [0.0] * d, [0.0] * d]
    weights[CLASSES.index("CONTRADICT")][FEATURES.index("direction_clash")] = 10.0
    return Classifier(weights=tuple(map(tuple, weights)), bias=(0.0, 0.0, -5.0), mean=(0.0,) * d, scale=(1.0,) * d)


def test_a_sentence_the_classifier_flags_without_a_cue_makes_the_premise_false(embed):
    # "lowered" is no listed opposite of "raised": no surface cue, only the classifier.
    sources = [make_source(71, "Across the trial, the new diet lowered cholesterol levels in adults.",
                           title="A diet trial")]
    question = "Why did the new diet raise cholesterol levels in adults?"
    plan = RulePlanner().plan(question)
    flagged = LocalAuditor(embed=embed, params=AuditorParams(premise_model=_direction_only())).audit(
        question, plan, sources, can_retry=False)
    assert flagged.verdict == Verdict.FALSE_PREMISE
    assert flagged.premise.chunk_id == 71 and "lowered cholesterol" in flagged.premise.quote
    assert "classifier" in flagged.premise.reason
    off = LocalAuditor(embed=embed, params=AuditorParams(premise_model=_direction_only(), premise_false_min=1.01))
    assert off.audit(question, plan, sources, can_retry=False).verdict != Verdict.FALSE_PREMISE
