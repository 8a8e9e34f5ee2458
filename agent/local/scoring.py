"""Claim-vs-sentence scoring shared by the local auditor and its calibration (bench/calibrate_auditor.py).

support = W_COVERAGE * (share of the claim's content terms in the sentence)
        + (1 - W_COVERAGE) * (cosine similarity of the two sentence embeddings)

A sentence contradicts a claim when it is about the same thing (support >= CONTRADICT_MIN)
and disagrees: a negation one side has and the other lacks, an antonym, or a different
percentage/decimal for the same quantity. Constants come from bench/calibrate_auditor.py
(SciFact train claims, calibration split; see docs/benchmarks.md for the held-out accuracy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.local.text import (
    antonym_clash,
    content_terms,
    coverage,
    negation_count,
    number_clash,
    term_set,
)

# Calibrated by bench/calibrate_auditor.py (grid search on the 493 calibration claims of
# SciFact's 809 labelled train claims; held-out accuracy 0.601 vs majority 0.411).
W_COVERAGE = 0.5
SUPPORT_MIN = 0.52  # below: the sentence does not speak to the claim (NEI)
# Not fitted by SciFact (it has no "partial" label): one step of 0.1 below SUPPORT_MIN.
PARTIAL_MIN = 0.42
# SciFact's contradictions are mostly paraphrases with no surface cue, so the fit pushes this
# high; the premise check uses its own, devbench-calibrated PREMISE_CONTRADICT_MIN.
CONTRADICT_MIN = 0.78


@dataclass(frozen=True)
class SentenceScore:
    index: int
    support: float
    coverage: float
    similarity: float
    contradiction: str  # "" or the cue: "negation", "antonym", "number"


def contradiction_cue(claim: str, sentence: str) -> str:
    if (negation_count(claim) > 0) != (negation_count(sentence) > 0):
        return "negation"
    if antonym_clash(claim, sentence):
        return "antonym"
    if number_clash(claim, sentence):
        return "number"
    return ""


def score_sentences(
    claim: str, claim_vec: np.ndarray, sentences: list[str], sentence_vecs: np.ndarray,
    *, w_coverage: float = W_COVERAGE,
) -> list[SentenceScore]:
    terms = content_terms(claim)
    sims = sentence_vecs @ claim_vec if len(sentences) else np.zeros(0)
    out = []
    for i, sentence in enumerate(sentences):
        cov = coverage(terms, term_set(sentence))
        sim = float(sims[i])
        support = w_coverage * cov + (1 - w_coverage) * sim
        out.append(SentenceScore(i, support, cov, sim, contradiction_cue(claim, sentence)))
    return out


def verify_claim(
    claim: str, claim_vec: np.ndarray, sentences: list[str], sentence_vecs: np.ndarray,
    *, w_coverage: float = W_COVERAGE, support_min: float = SUPPORT_MIN, contradict_min: float = CONTRADICT_MIN,
) -> Literal["SUPPORT", "CONTRADICT", "NEI"]:
    """SciFact-style three-way decision over one abstract (used for calibration and reporting)."""
    scores = score_sentences(claim, claim_vec, sentences, sentence_vecs, w_coverage=w_coverage)
    if not scores:
        return "NEI"
    best = max(scores, key=lambda s: s.support)
    if best.support < min(support_min, contradict_min):
        return "NEI"
    relevant = [s for s in scores if s.support >= contradict_min and s.contradiction]
    if relevant and max(relevant, key=lambda s: s.support).support >= best.support - 0.05:
        return "CONTRADICT"
    return "SUPPORT" if best.support >= support_min else "NEI"
