"""Exact dense scoring: the rescoring stage of dense search (knowledge.retrieval.dense).

Cosine = dot product of L2-normalised float32 vectors. `exact_scores` rescores a first
stage's candidates; `exact_top_k` rescores every (allowed) row, the fallback of either first
stage when its candidates cannot settle the top k. Also what both first stages share:
faiss with its thread count set, the candidate pool size, the float32 error allowance, and
the runner of a search's blocks on the shared pool.
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise

import numpy as np

from knowledge.retrieval import parallel, reads
from knowledge.retrieval.bm25 import top_k

# Below this many rows a search takes a few milliseconds on one thread, and what handing
# blocks to the pool saves is hardly worth a thread (docs/retrieval.md).
PARALLEL_MIN_ROWS = 50_000
# First-stage candidates per requested hit, at least (the floor: 10 x k).
CANDIDATES_PER_HIT = 10
# Float32 error allowance of either computation of a unit-vector dot product (knowledge.retrieval.dense's
# docstring).
FLOAT_EPS = 1e-4
# Rows rescored per step when the whole matrix is rescored (a bounded temporary).
RESCORE_BLOCK = 16_384


@cache
def load_faiss():
    """faiss, imported on first use, with its OpenMP pool at one thread.

    A one-query search in faiss runs on one thread anyway; more OpenMP threads only spin
    at barriers, which on a busy machine made a search 4.3x slower (issue 19). Parallelism
    comes from our own pool, whose idle threads sleep.
    """
    import faiss

    faiss.omp_set_num_threads(1)
    return faiss


def exact_scores(matrix: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Exact cosines (float64) of `rows` of `matrix` against `query`.

    Products in float32, summed in float64 along each row: the result for a row depends on
    that row and the query alone, never on which other rows are scored with it (a BLAS
    product's rounding can depend on the row's place in its block), so rescoring a few
    candidates and rescoring everything rank the same rows identically.
    """
    if len(rows) == 0:
        return np.zeros(0)
    return (reads.take(matrix, rows) * query).sum(axis=1, dtype=np.float64)


def _exact_all(
    matrix: np.ndarray,
    query: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
    start: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top k by rescoring every (allowed) row of start:stop, in bounded blocks."""
    stop = matrix.shape[0] if stop is None else stop
    best_pos, best_scores = np.zeros(0, dtype=np.int64), np.zeros(0)
    for a in range(start, stop, RESCORE_BLOCK):
        b = min(a + RESCORE_BLOCK, stop)
        rows = np.arange(a, b, dtype=np.int64)
        if allowed is not None:
            rows = rows[allowed[a:b]]
        scores = (np.asarray(matrix[a:b]) * query).sum(axis=1, dtype=np.float64)
        if allowed is not None:
            scores = scores[allowed[a:b]]
        best_pos, best_scores = top_k(
            np.concatenate([best_pos, rows]), np.concatenate([best_scores, scores]), k
        )
    return best_pos, best_scores


def run_jobs(threads: int, jobs: list) -> list:
    """Run (fn, *args) jobs, on the search pool when there are several and threads > 1."""
    if threads <= 1 or len(jobs) <= 1:
        return [fn(*args) for fn, *args in jobs]
    futures = [parallel.submit(threads, fn, *args) for fn, *args in jobs]
    return [f.result() for f in futures]


def exact_top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None, threads: int
) -> tuple[np.ndarray, np.ndarray]:
    """The top k by rescoring every (allowed) row, in parts on the search pool from
    PARALLEL_MIN_ROWS rows up."""
    n = matrix.shape[0]
    parts = max(1, threads) if n >= PARALLEL_MIN_ROWS else 1
    bounds = np.linspace(0, n, parts + 1).astype(np.int64).tolist()
    found = run_jobs(threads, [(_exact_all, matrix, query, k, allowed, a, b) for a, b in pairwise(bounds)])
    return top_k(np.concatenate([p for p, _ in found]), np.concatenate([s for _, s in found]), k)
