"""Rerankers of a fused candidate pool, behind one interface.

No cross-encoder model ships inside a PyPI package, so there are two real ones:

- `SentenceReranker` (offline): a chunk is as relevant as its best sentence. Sentence
  vectors are computed when the index is built (through the embedding cache), so a query
  costs one small matrix product over the candidates' sentences. The final score mixes
  the min-max-normalised best-sentence cosine with the min-max-normalised fused score.
- `LLMReranker`: one call to a chat model scores every candidate 0-10 (through a
  `score_fn` the Django edge builds on agent.llm); the fused score breaks ties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from knowledge.retrieval.fusion import Fused
from knowledge.retrieval.store import IndexData

# Weight of the best-sentence cosine against the fused score, tuned on SciFact train
# (0.2 and 0.35 tie at 0.7207 nDCG@10, 0.5 gives 0.7153; docs/benchmarks.md).
SENTENCE_BETA = 0.35


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Fused],
               data: IndexData) -> list[Fused]:
        """The candidates in a new order; each keeps its ranks and gains its own."""
        ...


def _minmax(values: np.ndarray) -> np.ndarray:
    lo, hi = float(values.min()), float(values.max())
    return np.ones_like(values) if hi == lo else (values - lo) / (hi - lo)


def _record(candidates: list[Fused], name: str, raw: np.ndarray, combined: np.ndarray) -> list[Fused]:
    order = np.lexsort((np.arange(len(candidates)), -combined))
    for rank, i in enumerate(order.tolist(), 1):
        candidates[i].ranks[name] = rank
        candidates[i].scores[name] = float(raw[i])
        candidates[i].score = float(combined[i])
    return [candidates[i] for i in order.tolist()]


def best_sentence_scores(data: IndexData, positions: Sequence[int], query_vector: np.ndarray) -> np.ndarray:
    """For each chunk position, the highest cosine of one of its sentences to the query.

    A chunk without sentence vectors (a table, a heading) falls back to its chunk vector.
    """
    offsets = data.sent_offsets
    rows: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    fallback: list[int] = []
    for i, pos in enumerate(positions):
        start, end = int(offsets[pos]), int(offsets[pos + 1])
        if end > start:
            rows.append(np.arange(start, end))
            owners.append(np.full(end - start, i))
        else:
            fallback.append(i)
    best = np.full(len(positions), -np.inf, dtype=np.float32)
    q = np.asarray(query_vector, dtype=np.float32)
    if rows:
        sims = np.asarray(data.sent_vectors[np.concatenate(rows)]) @ q
        np.maximum.at(best, np.concatenate(owners), sims)
    for i in fallback:
        best[i] = float(np.asarray(data.vectors[positions[i]]) @ q)
    return best


class SentenceReranker:
    name = "sentence"

    def __init__(self, *, beta: float = SENTENCE_BETA) -> None:
        self.beta = beta

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Fused],
               data: IndexData) -> list[Fused]:
        if query_vector is None:
            raise ValueError("The sentence reranker needs the query vector.")
        if not candidates:
            return candidates
        best = best_sentence_scores(data, [c.position for c in candidates], query_vector)
        fused = np.array([c.score for c in candidates], dtype=np.float64)
        combined = self.beta * _minmax(best.astype(np.float64)) + (1 - self.beta) * _minmax(fused)
        return _record(candidates, self.name, best, combined)


# (query, passages) -> one relevance score per passage, higher is better.
ScoreFn = Callable[[str, list[str]], list[float]]


class LLMReranker:
    name = "llm"

    def __init__(self, score_fn: ScoreFn, text_of: Callable[[int], str], *, limit: int = 20) -> None:
        self.score_fn = score_fn
        self.text_of = text_of  # chunk position -> its text (the edge reads it from the DB)
        self.limit = limit

    def rerank(self, query: str, query_vector: np.ndarray | None, candidates: list[Fused],
               data: IndexData) -> list[Fused]:
        head, tail = candidates[: self.limit], candidates[self.limit :]
        if not head:
            return candidates
        raw = np.asarray(self.score_fn(query, [self.text_of(c.position) for c in head]), dtype=np.float64)
        if raw.shape != (len(head),):
            raise ValueError(f"The LLM reranker scored {raw.size} passages, expected {len(head)}.")
        fused = np.array([c.score for c in head], dtype=np.float64)
        # The model's grade decides; the fused score (scaled below one grade step) breaks ties.
        combined = raw + 0.5 * _minmax(fused)
        return _record(head, self.name, raw, combined) + tail
