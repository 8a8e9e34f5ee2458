"""Exact dense retrieval: cosine = dot product of L2-normalised float32 vectors.

Every search is two stages, and the answer is always the exact top k:

1. A fast first stage proposes candidates with approximate scores: a float32 inner product
   (numpy's below NUMPY_MAX_ROWS rows, faiss's `knn_inner_product`, no copy of the matrix,
   above) on a small index, or, from SQ8_MIN_ROWS rows up, an 8-bit scalar-quantised copy
   of the vectors (384 bytes a vector instead of 1,536; faiss's QT_8bit codec makes the
   codes) scanned by our own compiled kernel as integer dot products with 16-bit query
   weights (knowledge.retrieval.dense_kernels).
2. The candidates are rescored exactly from the float32 vectors (`exact_scores`; on disk the
   matrix is memory-mapped, and only the candidates' rows are read, with pread:
   knowledge.retrieval.reads), and the top k taken.

The first stage's error is bounded: |approximate - exact| <= `eps` for every row, where eps
is 1e-4 for faiss's float32 sums (a float32 dot of unit vectors errs by at most
384 x 2^-24 ~ 2.3e-5, in either computation) and, for the 8-bit stage, sum_d |q_d| x err_d
+ the 16-bit weights' rounding + 1e-4, err_d being the largest reconstruction error of
dimension d over the indexed rows (measured when the codes are made: half a quantisation
step). Every row the first stage did not return scores at most the lowest candidate's
approximate score, so at most that plus eps exactly. When the k-th best exact score among
the candidates is above that bound, no other row can enter the top k: the result is
provably the exact one. When it is not (near-ties at the boundary, many near-duplicates),
the float32 stage widens its pool 4x and checks again; the 8-bit stage, which keeps every
row's approximate score from its one scan, rescores every row within eps of the k-th exact
score (`sq8_top_k`). Past a quarter of the rows the whole (allowed) matrix is rescored.
So the ranking is identical to rescoring every row (tested on real MiniLM vectors,
tests/knowledge/test_retrieval_dense.py).

This module is the entry (`dense_search`) and the float32 first stage; the 8-bit first
stage and its codes are knowledge.retrieval.dense_sq8, the exact rescoring
knowledge.retrieval.dense_exact.
"""

from __future__ import annotations

import os
from itertools import pairwise
from pathlib import Path

import numpy as np

from knowledge.retrieval.bm25 import top_k
from knowledge.retrieval.dense_exact import (
    CANDIDATES_PER_HIT,
    FLOAT_EPS,
    PARALLEL_MIN_ROWS,
    exact_scores,
    exact_top_k,
    load_faiss,
    run_jobs,
)
from knowledge.retrieval.dense_sq8 import SQ8Blocks, sq8_top_k

# Below this many rows the float32 first stage is numpy's product (one BLAS gemv and a
# partial sort), from here faiss's knn_inner_product. Measured side by side (k=30, the pool
# of a hybrid k=10; docs/benchmarks.md): numpy is ahead by a tenth of a millisecond up to
# about 5k rows, faiss from there (1.1-1.4 vs 2.1-2.5 ms at 10k): once the matrix outgrows
# the caches, numpy's one-thread gemv reads memory at about half faiss's rate.
NUMPY_MAX_ROWS = 5_000


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _bitmap_selector(allowed: np.ndarray):
    faiss = load_faiss()
    bits = np.packbits(allowed, bitorder="little")
    selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits))
    selector.bits_owner = bits  # keeps the bitmap alive as long as the selector
    return selector


def _numpy_block(
    matrix: np.ndarray, query: np.ndarray, start: int, stop: int, want: int, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """numpy's float32 product (one BLAS gemv) top `want` of rows start:stop, best first."""
    scores = np.asarray(matrix[start:stop]) @ query
    positions = np.arange(start, stop, dtype=np.int64)
    if allowed is not None:
        keep = allowed[start:stop]
        positions, scores = positions[keep], scores[keep]
    if want < len(scores):
        best = np.argpartition(scores, len(scores) - want)[len(scores) - want :]
        positions, scores = positions[best], scores[best]
    order = np.argsort(-scores, kind="stable")
    return positions[order], scores[order]


def _flat_block(
    matrix: np.ndarray, query: np.ndarray, start: int, stop: int, want: int, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """faiss float32 top `want` of rows start:stop: (positions, approximate scores), best first."""
    faiss = load_faiss()
    block = np.ascontiguousarray(matrix[start:stop])  # a view of a C-ordered (memory-mapped) matrix
    want = min(want, stop - start)
    scores = np.empty((1, want), dtype=np.float32)
    labels = np.empty((1, want), dtype=np.int64)
    selector = None if allowed is None else _bitmap_selector(allowed[start:stop])
    faiss.knn_inner_product(
        faiss.swig_ptr(query),
        faiss.swig_ptr(block),
        block.shape[1],
        1,
        stop - start,
        want,
        faiss.swig_ptr(scores),
        faiss.swig_ptr(labels),
        selector,
    )
    keep = labels[0] >= 0  # faiss pads with -1 when fewer rows are allowed
    return labels[0][keep] + start, scores[0][keep]


def _certified_top_k(
    matrix: np.ndarray,
    query: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
    n_allowed: int,
    first_stage,
    eps: float,
    threads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k from a bounded-error first stage (module docstring), widening as needed.

    `first_stage(want)` returns one (positions, approximate scores) pair per part of the
    index, each its part's `want` best: a row not returned scores at most its part's lowest
    returned score. When the candidates do not settle it, the pool is widened 4x (past a
    quarter of the rows, every row is rescored).
    """
    want = max(CANDIDATES_PER_HIT * k, k + 16)
    while want * 4 <= n_allowed:
        parts = first_stage(want)
        positions = np.concatenate([p for p, _ in parts])
        positions.sort()
        best_pos, best_scores = top_k(positions, exact_scores(matrix, positions, query), k)
        # The best score any row outside the candidates can have, exactly.
        full = [s for p, s in parts if len(p) >= want]  # a part that returned fewer has no other rows
        outside = max((float(s[-1]) for s in full), default=-np.inf) + eps
        if not full or (len(best_pos) == k and best_scores[-1] > outside):
            return best_pos, best_scores
        want *= 4
    return exact_top_k(matrix, query, k, allowed, threads)

def _prepare(matrix: np.ndarray, query: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, int]:
    query = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
    n_allowed = matrix.shape[0] if allowed is None else int(np.count_nonzero(allowed))
    return query, n_allowed


def dense_search(
    matrix: np.ndarray,
    query: np.ndarray,
    k: int,
    allowed: np.ndarray | None = None,
    *,
    threads: int = 1,
    sq8: SQ8Blocks | None = None,
    first_stage: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (positions, cosines) of `query` against the rows of `matrix`, exactly.

    `allowed` is an optional boolean mask of rows that may be returned (the first stage
    skips the others, so a filter never starves the candidate pool). `sq8`, the 8-bit copy of
    `matrix`, makes it the first stage; without it faiss's float32 product is. With `threads`
    > 1 a large matrix's parts run on the shared search pool. Ties go to the lower position.
    The float32 stage is numpy's product below NUMPY_MAX_ROWS rows, faiss's from there
    (`first_stage` "numpy" or "faiss" forces one, for the bench).
    """
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    query, n_allowed = _prepare(matrix, query, allowed)
    if n_allowed == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    n = matrix.shape[0]
    parts = max(1, threads) * 2 if threads > 1 and n >= PARALLEL_MIN_ROWS else 1
    bounds = np.linspace(0, n, parts + 1).astype(np.int64).tolist()

    block = (
        _numpy_block
        if (first_stage or ("numpy" if n < NUMPY_MAX_ROWS else "faiss")) == "numpy"
        else _flat_block
    )

    def flat_stage(want: int) -> list:
        return run_jobs(threads, [(block, matrix, query, a, b, want, allowed) for a, b in pairwise(bounds)])

    def flat() -> tuple[np.ndarray, np.ndarray]:
        return _certified_top_k(matrix, query, k, allowed, n_allowed, flat_stage, FLOAT_EPS, threads)

    if sq8 is None:
        return flat()
    return sq8_top_k(matrix, sq8, query, k, allowed, n_allowed, threads)


def search_threads(limit: int, *, loadavg: str = "/proc/loadavg") -> int:
    """How many threads a search should use now: the free cores, at least 1, at most `limit`.

    Read from the kernel's count of runnable tasks at this moment (/proc/loadavg, 4th field,
    which counts this thread): on a machine whose other cores are busy, a second thread only
    waits for a core and adds hand-over costs, so it is not used (bench/retrieval.py measures
    both). Where the count is unavailable, `limit`.
    """
    if limit <= 1:
        return 1
    try:
        running = int(Path(loadavg).read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return limit
    free = (os.cpu_count() or 1) - (running - 1)
    return max(1, min(limit, free))
