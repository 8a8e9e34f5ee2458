"""Hybrid search over one loaded index: BM25, dense, their fusion, and an optional rerank.

Pure: takes an IndexData (or a SegmentedIndex: several segments searched as one) and a
query (text plus, when a mode needs it, its vector) and returns SearchHit dataclasses. The
Django edge (knowledge.indexing) loads the index, embeds the query and checks the hits
against the database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from knowledge.retrieval import parallel, reads
from knowledge.retrieval.dense import search_threads
from knowledge.retrieval.dense_exact import PARALLEL_MIN_ROWS
from knowledge.retrieval.fusion import Fused, Ranked, minmax, pool_size, rrf
from knowledge.retrieval.rerank import Reranker
from knowledge.retrieval.store import IndexData
from knowledge.retrieval.tokenize import query_terms

if TYPE_CHECKING:
    from knowledge.retrieval.segments import SegmentedIndex

MODES = ("bm25", "dense", "rrf", "minmax")
DENSE_MODES = ("dense", "rrf", "minmax")
# Reference-list chunks match many queries on author names and title words without saying
# anything themselves; their fused score is multiplied by this (docs/retrieval.md).
REFERENCE_WEIGHT = 0.8
DEFAULT_WEIGHTS: Mapping[str, float] = {"bm25": 1.0, "dense": 1.0}


@dataclass
class SearchHit:
    chunk_id: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    document_id: int = 0
    position: int = -1  # row in the index, for callers that need the vector


def needs_vector(mode: str, rerank: str | None) -> bool:
    return mode in DENSE_MODES or rerank == "sentence"


class HybridSearcher:
    """Search one immutable index. Safe to share between threads (it never mutates).

    `threads` > 1 lets a large index (PARALLEL_MIN_ROWS chunks and up) use the shared search
    pool: the dense product in row blocks, with BM25 beside them (knowledge.retrieval.parallel).
    """

    def __init__(self, data: IndexData | SegmentedIndex, *, weights: Mapping[str, float] | None = None,
                 alpha: float = 0.7, reference_weight: float = REFERENCE_WEIGHT, threads: int = 1) -> None:
        self.data = data
        self.weights = dict(weights or DEFAULT_WEIGHTS)
        self.alpha = alpha
        self.reference_weight = reference_weight
        self.threads = max(1, threads)

    def _bm25(self, query: str, pool: int, allowed: np.ndarray | None) -> Ranked:
        return Ranked(*self.data.bm25.top(query_terms(query), pool, allowed))

    def _dense(self, vector: np.ndarray, pool: int, allowed: np.ndarray | None, threads: int = 1) -> Ranked:
        return Ranked(*self.data.dense_top(vector, pool, allowed, threads))

    def candidates(self, query: str, *, query_vector: np.ndarray | None, k: int, mode: str,
                   allowed: np.ndarray | None = None) -> list[Fused]:
        """Ranked candidates of `mode`, best first, at most pool_size(k) per retriever."""
        if mode not in MODES:
            raise ValueError(f"Unknown search mode {mode!r}: use one of {', '.join(MODES)}.")
        if self.data.size == 0 or k <= 0:
            return []
        if mode in DENSE_MODES and query_vector is None:
            raise ValueError(f"Mode {mode!r} needs the query vector.")
        pool = pool_size(k)
        results: dict[str, Ranked] = {}
        # Decided per query from the cores free right now (dense.search_threads).
        threads = search_threads(self.threads) if self.data.size >= PARALLEL_MIN_ROWS else 1
        if mode in ("rrf", "minmax") and threads > 1:
            # BM25 goes to the pool first, so one thread scores it while the others start on
            # the dense blocks queued behind it.
            bm25 = parallel.submit(threads, self._bm25, query, pool, allowed)
            dense = self._dense(query_vector, pool, allowed, threads)
            results = {"bm25": bm25.result(), "dense": dense}
        else:
            if mode in ("bm25", "rrf", "minmax"):
                results["bm25"] = self._bm25(query, pool, allowed)
            if mode in DENSE_MODES:
                results["dense"] = self._dense(query_vector, pool, allowed, threads)
        if mode == "rrf":
            fused = rrf(results, weights=self.weights)
        elif mode == "minmax":
            fused = minmax(results, alpha=self.alpha)
        else:
            # A single retriever: its own order and scores, no reference penalty (nothing is fused).
            single = rrf(results)
            for hit in single:
                hit.score = hit.scores[mode]
            return single
        reference = _at(self.data.is_reference, [hit.position for hit in fused])
        for hit in fused:
            if reference[hit.position]:
                hit.score *= self.reference_weight
        fused.sort(key=lambda h: (-h.score, h.position))
        return fused

    def search(self, query: str, *, query_vector: np.ndarray | None = None, k: int = 5,
               mode: str = "rrf", allowed: np.ndarray | None = None,
               reranker: Reranker | None = None) -> list[SearchHit]:
        fused = self.candidates(query, query_vector=query_vector, k=k, mode=mode, allowed=allowed)
        if reranker is not None and fused:
            fused = reranker.rerank(query, query_vector, fused[: pool_size(k)], self.data)
        positions = [f.position for f in fused[:k]]
        chunk_ids, document_ids = _at(self.data.chunk_ids, positions), _at(self.data.document_ids, positions)
        return [SearchHit(chunk_id=chunk_ids[f.position], score=float(f.score), ranks=dict(f.ranks),
                          scores=dict(f.scores), document_id=document_ids[f.position], position=f.position)
                for f in fused[:k]]


def _at(array: np.ndarray, positions: list[int]) -> dict:
    """{position: array[position]} as Python values, read with pread from a memory-mapped
    file (knowledge.retrieval.reads: through the mapping, a few hundred searches' reads of
    ten ids each made the whole 8 MB id file of a 1M-chunk index resident)."""
    rows = np.unique(np.asarray(positions, dtype=np.int64))
    return dict(zip(rows.tolist(), reads.take(array, rows).tolist(), strict=True))
