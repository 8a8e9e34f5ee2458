"""Exact dense retrieval: cosine = dot product of L2-normalised float32 vectors."""

from __future__ import annotations

import numpy as np

from knowledge.retrieval.bm25 import top_k


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def dense_search(matrix: np.ndarray, query: np.ndarray, k: int,
                 allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (positions, cosines) of `query` against the rows of `matrix`.

    One matrix-vector product over every row (exact, no ANN), then a partial sort.
    `allowed` is an optional boolean mask of rows that may be returned.
    """
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores = matrix @ np.asarray(query, dtype=np.float32)
    positions = np.arange(len(scores), dtype=np.int64)
    if allowed is not None:
        positions = np.flatnonzero(allowed)
        scores = scores[positions]
    return top_k(positions, scores, k)
