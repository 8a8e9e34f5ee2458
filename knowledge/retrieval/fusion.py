"""Fusion of ranked lists from several retrievers.

Every fused hit keeps, for each retriever that returned it, its 1-based rank and raw score,
so a reader (and the benchmark) can see why a chunk was chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

RRF_K = 60
MINMAX_ALPHA = 0.7  # weight of the dense side in min-max fusion


def pool_size(k: int) -> int:
    """How many candidates each retriever contributes before fusion."""
    return max(3 * k, 20)


@dataclass
class Ranked:
    """One retriever's result: positions best first, with their scores."""

    positions: np.ndarray
    scores: np.ndarray


@dataclass
class Fused:
    position: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


def _collect(results: Mapping[str, Ranked]) -> dict[int, Fused]:
    fused: dict[int, Fused] = {}
    for name, ranked in results.items():
        for rank, (pos, score) in enumerate(zip(ranked.positions.tolist(), ranked.scores.tolist(), strict=True), 1):
            hit = fused.setdefault(pos, Fused(position=pos, score=0.0))
            hit.ranks[name] = rank
            hit.scores[name] = float(score)
    return fused


def _sorted(fused: dict[int, Fused]) -> list[Fused]:
    return sorted(fused.values(), key=lambda h: (-h.score, h.position))


def rrf(results: Mapping[str, Ranked], *, weights: Mapping[str, float] | None = None,
        k: int = RRF_K) -> list[Fused]:
    """Reciprocal Rank Fusion: score = sum over retrievers of w_i / (k + rank_i)."""
    fused = _collect(results)
    for hit in fused.values():
        hit.score = sum((weights or {}).get(name, 1.0) / (k + rank) for name, rank in hit.ranks.items())
    return _sorted(fused)


def _minmax(values: np.ndarray) -> np.ndarray:
    if len(values) == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    # A pool whose scores are all equal carries no ordering; every member counts fully.
    if hi == lo:
        return np.ones_like(values, dtype=np.float64)
    return (values - lo) / (hi - lo)


def minmax(results: Mapping[str, Ranked], *, alpha: float = MINMAX_ALPHA,
           dense: str = "dense", sparse: str = "bm25") -> list[Fused]:
    """Min-max normalise each retriever's pool to [0, 1], then alpha * dense + (1 - alpha) * sparse.

    A chunk missing from one pool gets 0 on that side.
    """
    fused = _collect(results)
    norm: dict[str, dict[int, float]] = {}
    for name, ranked in results.items():
        norm[name] = dict(zip(ranked.positions.tolist(), _minmax(np.asarray(ranked.scores, dtype=np.float64)).tolist(), strict=True))
    weights = {dense: alpha, sparse: 1.0 - alpha}
    for hit in fused.values():
        hit.score = sum(w * norm.get(name, {}).get(hit.position, 0.0) for name, w in weights.items())
    return _sorted(fused)
