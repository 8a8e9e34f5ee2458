"""Exact dense retrieval: cosine = dot product of L2-normalised float32 vectors."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from knowledge.retrieval import parallel
from knowledge.retrieval.bm25 import top_k

# Below this many rows a search takes a few milliseconds on one thread, and what handing
# blocks to the pool saves is hardly worth a thread. Above it the pool pays: hybrid search
# at 100k chunks 1.23x faster on 2 threads (bench/retrieval.py --full, docs/benchmarks.md).
PARALLEL_MIN_ROWS = 50_000
# Blocks per thread: several, so that BM25 running beside them on the same pool is
# balanced out across the threads (docs/retrieval.md).
BLOCKS_PER_THREAD = 4


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _block_top_k(matrix: np.ndarray, query: np.ndarray, start: int, stop: int, k: int,
                 allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of rows start:stop, as positions in the whole matrix."""
    scores = matrix[start:stop] @ query
    positions = np.arange(start, stop, dtype=np.int64)
    if allowed is not None:
        keep = np.flatnonzero(allowed[start:stop])
        positions, scores = positions[keep], scores[keep]
    return top_k(positions, scores, k)


def dense_search(matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None = None,
                 *, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (positions, cosines) of `query` against the rows of `matrix`.

    A matrix-vector product over every row (exact, no ANN), then a partial sort.
    `allowed` is an optional boolean mask of rows that may be returned. With `threads` > 1
    a large matrix is scored in row blocks on the shared search pool, each block keeps its
    own top-k, and the blocks' winners are merged: the same ranking as one product, because
    every global winner is among its own block's top-k under the same order
    (score, then lower position).
    """
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32)
    n = matrix.shape[0]
    if threads <= 1 or n < PARALLEL_MIN_ROWS:
        return _block_top_k(matrix, query, 0, n, k, allowed)
    bounds = np.linspace(0, n, threads * BLOCKS_PER_THREAD + 1).astype(np.int64)
    futures = [parallel.submit(threads, _block_top_k, matrix, query, a, b, k, allowed)
               for a, b in pairwise(bounds.tolist())]
    parts = [f.result() for f in futures]
    return top_k(np.concatenate([p for p, _ in parts]), np.concatenate([s for _, s in parts]), k)
