"""The premise classifier (agent.local.entailment) and its new surface features, on sentences
written for these tests (none comes from a benchmark), with the real offline embedder and
the fitted weights (agent/local/premise_model.json)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.contradiction import direction, direction_clash, slot_filler
from agent.local.entailment import (
    CLASSES,
    FEATURES,
    Classifier,
    SyntheticPair,
    chose_rejected,
    default_classifier,
    design,
    filler_kind,
    fit_softmax,
    probabilities,
    synthetic_pairs,
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


def test_a_substituted_position_is_a_false_premise(embed):
    # A verdict ("best") moved to another place in a sequence is a cue of its own
    # (agent.local.contradiction.opposites.moved_position); another engine still is not.
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


# The synthesiser of training pairs (bench/calibrate_premise.py --synthetic), on abstracts
# written for this test.
ABSTRACTS = {
    1: ["We trained the Falcon tagger on 120 annotated reports from three hospitals.",
        "The Heron tagger reached an accuracy of 84 % on the held-out reports, and its errors were mostly omissions.",
        "Annotation of the reports took two weeks, which limited the size of the training collection.",
        "Sparrow, a rule-based baseline, reached 61 % accuracy on the same reports."],
    2: ["Daily exercise lowered the blood pressure of 45 patients in the intervention group, as the reports of the nurses show.",
        "The Kestrel questionnaire measured adherence to the exercise programme every week.",
        "Patients in the control group kept their usual medication and reported no change in pressure.",
        "Adherence fell after the sixth week, when the supervision of the sessions ended."],
    3: ["Readers of annotated reports recalled the findings better than readers of plain reports.",
        "The Osprey interface highlighted the accuracy of each finding with a colour.",
        "Highlighting reduced the reading time of the reports by 30 % on average.",
        "Participants preferred the colour scale to the numeric scores of the Merlin interface in the interviews."],
}


@pytest.mark.parametrize("token, position, kind", [
    ("84", 5, "number"), ("12.5%", 3, "number"), ("2019", 4, ""), ("Falcon", 1, "name"), ("BERT", 0, "name"),
    ("We", 0, ""), ("accuracy", 4, ""), ("adherence", 3, "noun"), ("reports", 6, ""), ("trained", 2, ""),
    ("not", 2, ""), ("annotation", 0, "noun")])
def test_filler_kind(token, position, kind):
    assert filler_kind(token, position) == kind


def test_synthetic_pairs_make_the_three_kinds_as_stated():
    from agent.local.text import content_terms

    pairs = synthetic_pairs(ABSTRACTS, seed=3, per_abstract=2)
    by_evidence: dict[tuple[int, int], dict[str, SyntheticPair]] = {}
    for p in pairs:
        assert p.label in CLASSES
    support = [p for p in pairs if p.label == "SUPPORT"]
    contradict = [p for p in pairs if p.label == "CONTRADICT"]
    neutral = [p for p in pairs if p.label == "NEUTRAL"]
    assert len(support) == len(contradict) == len(neutral) >= 3
    for p in support + contradict:
        by_evidence.setdefault((p.doc, p.index), {})[p.label] = p
        assert ABSTRACTS[p.doc][p.index] == p.evidence
    for kinds in by_evidence.values():
        sup, con = kinds["SUPPORT"], kinds["CONTRADICT"]
        # SUPPORT: a shorter statement whose every word is in the sentence, in its order.
        assert sup.premise != sup.evidence and len(sup.premise.split()) < len(sup.evidence.split())
        assert sup.premise in re.sub(r"\s*\([^()]*\)", "", sup.evidence)
        # CONTRADICT: the same clause with exactly one filler swapped for one of its kind
        # that another sentence of the same abstract holds and this sentence does not.
        a, b = sup.premise.split(), con.premise.split()
        assert len(a) == len(b)
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(diff) == 1
        old, new = diff[0]
        position = a.index(old)
        assert filler_kind(new.rstrip(".,"), position) == filler_kind(old.rstrip(".,"), position) != ""
        assert new not in con.evidence.split()
        assert any(new in s.split() for j, s in enumerate(ABSTRACTS[con.doc]) if j != con.index)
    # NEUTRAL: a faithful clause against a sentence of another abstract on the same topic.
    clauses = {p.premise: p.doc for p in support}
    for p in neutral:
        assert p.premise in clauses and p.doc != clauses[p.premise]
        assert ABSTRACTS[p.doc][p.index] == p.evidence
        assert set(content_terms(p.premise)) & set(content_terms(p.evidence))


def test_synthetic_pairs_are_reproducible_and_need_a_rival_filler():
    assert synthetic_pairs(ABSTRACTS, seed=3) == synthetic_pairs(ABSTRACTS, seed=3)
    # No other sentence to draw a filler from: nothing to contradict with, so no pair at all.
    assert synthetic_pairs({1: ABSTRACTS[1][:1], 2: ABSTRACTS[2][:1]}) == []


def test_a_swapped_filler_from_synthetic_pairs_is_told_from_a_faithful_clause():
    """Fitted on synthetic pairs alone, the features separate swapped from faithful clauses
    of abstracts the fit never saw (the premise classifier can learn the kind)."""
    from agent.local.embed import get_embed

    def rows(pairs):
        texts = list(dict.fromkeys(t for p in pairs for t in (p.premise, p.evidence)))
        vec = dict(zip(texts, get_embed()(texts)))
        x = np.vstack([design(p.premise, vec[p.premise], [p.evidence], vec[p.evidence][None, :]) for p in pairs])
        return x, np.array([CLASSES.index(p.label) for p in pairs])

    pairs = synthetic_pairs(ABSTRACTS, seed=2, per_abstract=4)
    # Fit on the clauses of abstracts 1 and 2, test on those of abstract 3.
    source = {p.premise: p.doc for p in pairs if p.label == "SUPPORT"}
    train = [p for p in pairs if source.get(p.premise, p.doc) != 3]
    test = [p for p in pairs if p.doc == 3 and p.label != "NEUTRAL"]
    assert train and {p.label for p in test} == {"SUPPORT", "CONTRADICT"}
    x, y = rows(train)
    mean, scale = x.mean(axis=0), np.where(x.std(axis=0) > 1e-9, x.std(axis=0), 1.0)
    w, b = fit_softmax((x - mean) / scale, y, l2=0.01)
    xt, yt = rows(test)
    p = probabilities(xt, w, b, mean=mean, scale=scale)[:, CLASSES.index("CONTRADICT")]
    assert p[yt == 2].min() > p[yt == 1].max()
