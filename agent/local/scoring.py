"""Claim-vs-sentence scoring shared by the local auditor and its calibration (bench/calibrate_auditor.py).

support = w_coverage * (share of the claim's content terms in the sentence)
        + (1 - w_coverage) * (cosine similarity of the two sentence embeddings)

A sentence contradicts a claim when it is about the same thing (support >= contradict_min)
and disagrees by one of agent.local.contradiction's cues (negation scope, an alternative
chosen instead, another number or a listed alternative in the same relation, an opposite).
The thresholds are parameters (agent.local.auditor.AuditorParams carries the auditor's);
bench/calibrate_auditor.py chooses them on SciFact's calibration claims only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.local.contradiction import contradiction_cue
from agent.local.text import content_terms, coverage, term_set


@dataclass(frozen=True)
class SentenceScore:
    index: int
    support: float
    coverage: float
    similarity: float
    contradiction: str  # "" or the cue of agent.local.contradiction.contradiction_cue


def score_sentences(
    claim: str, claim_vec: np.ndarray, sentences: list[str], sentence_vecs: np.ndarray,
    *, w_coverage: float = 0.5, cues: bool = False, sibling_map: dict[str, set[str]] | None = None,
) -> list[SentenceScore]:
    """Support of each sentence for the claim; with cues=True also its contradiction cue."""
    terms = content_terms(claim)
    sims = sentence_vecs @ claim_vec if len(sentences) else np.zeros(0)
    out = []
    for i, sentence in enumerate(sentences):
        cov = coverage(terms, term_set(sentence))
        sim = float(sims[i])
        support = w_coverage * cov + (1 - w_coverage) * sim
        cue = contradiction_cue(claim, sentence, sibling_map=sibling_map) if cues else ""
        out.append(SentenceScore(i, support, cov, sim, cue))
    return out


def verify_claim(
    scores: list[SentenceScore], *, support_min: float, contradict_min: float, margin: float = 0.05,
) -> Literal["SUPPORT", "CONTRADICT", "NEI"]:
    """SciFact-style three-way decision over one abstract's scored sentences (with cues)."""
    if not scores:
        return "NEI"
    best = max(scores, key=lambda s: s.support)
    if best.support < min(support_min, contradict_min):
        return "NEI"
    relevant = [s for s in scores if s.support >= contradict_min and s.contradiction]
    if relevant and max(relevant, key=lambda s: s.support).support >= best.support - margin:
        return "CONTRADICT"
    return "SUPPORT" if best.support >= support_min else "NEI"
