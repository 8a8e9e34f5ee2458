"""Exact dense retrieval: cosine = dot product of L2-normalised float32 vectors.

Every search is two stages, and the answer is always the exact top k:

1. A fast first stage proposes candidates with approximate scores: a float32 inner product
   (numpy's below NUMPY_MAX_ROWS rows, faiss's `knn_inner_product`, no copy of the matrix,
   above) on a small index, or an 8-bit
   scalar-quantised copy of the vectors (faiss `IndexScalarQuantizer`, QT_8bit: 384 bytes a
   vector instead of 1,536) from SQ8_MIN_ROWS rows up.
2. The candidates are rescored exactly from the float32 vectors (`exact_scores`; on disk the
   matrix is memory-mapped, so only the candidates' rows are read), and the top k taken.

The first stage's error is bounded: |approximate - exact| <= `eps` for every row, where eps
is 1e-4 for faiss's float32 sums (a float32 dot of unit vectors errs by at most
384 x 2^-24 ~ 2.3e-5, in either computation) and, for SQ8, sum_d |q_d| x err_d + 1e-4, err_d
being the largest reconstruction error of dimension d over the indexed rows (measured when
the codes are made: half a quantisation step). Every row the first stage did not return scores
at most the lowest candidate's approximate score, so at most that plus eps exactly. When the
k-th best exact score among the candidates is above that bound, no other row can enter the
top k: the result is provably the exact one. When it is not (near-ties at the boundary, many
near-duplicates), the candidate pool is widened 4x and the check repeated; past a quarter of
the rows the whole (allowed) matrix is rescored. The 8-bit stage does not widen: when it
cannot prove the order, the float32 stage answers instead. So the ranking is identical to rescoring
every row (tested on real MiniLM vectors, tests/knowledge/test_retrieval_dense.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np

from knowledge.retrieval import parallel
from knowledge.retrieval.bm25 import top_k

# Below this many rows a search takes a few milliseconds on one thread, and what handing
# blocks to the pool saves is hardly worth a thread (docs/retrieval.md).
PARALLEL_MIN_ROWS = 50_000
# From this many rows up the first stage is the 8-bit copy (bench/retrieval.py --full,
# "dense first stage" table, docs/benchmarks.md: SQ8 + rescoring is faster than the
# float32 product from about this size, and it saves 3/4 of the resident memory).
SQ8_MIN_ROWS = 50_000
# Below this many rows the float32 first stage is numpy's product (one BLAS gemv and a
# partial sort), from here faiss's knn_inner_product. Measured side by side (k=30, the pool
# of a hybrid k=10; docs/benchmarks.md): numpy is ahead by a tenth of a millisecond up to
# about 5k rows, faiss from there (1.1-1.4 vs 2.1-2.5 ms at 10k): once the matrix outgrows
# the caches, numpy's one-thread gemv reads memory at about half faiss's rate.
NUMPY_MAX_ROWS = 5_000
# First-stage candidates per requested hit, at least (the floor: 10 x k).
CANDIDATES_PER_HIT = 10
# Row blocks of the 8-bit copy: each block is its own faiss index, so blocks can run on
# different threads of the search pool.
SQ8_BLOCK_ROWS = 131_072
# Float32 error allowance of either computation of a unit-vector dot product (see above).
FLOAT_EPS = 1e-4
# Rows rescored per step when the whole matrix is rescored (a bounded temporary).
_RESCORE_BLOCK = 16_384


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


@cache
def _faiss():
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
    return (np.asarray(matrix[rows]) * query).sum(axis=1, dtype=np.float64)


def _exact_all(matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None,
               start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top k by rescoring every (allowed) row of start:stop, in bounded blocks."""
    stop = matrix.shape[0] if stop is None else stop
    best_pos, best_scores = np.zeros(0, dtype=np.int64), np.zeros(0)
    for a in range(start, stop, _RESCORE_BLOCK):
        b = min(a + _RESCORE_BLOCK, stop)
        rows = np.arange(a, b, dtype=np.int64)
        if allowed is not None:
            rows = rows[allowed[a:b]]
        scores = (np.asarray(matrix[a:b]) * query).sum(axis=1, dtype=np.float64)
        if allowed is not None:
            scores = scores[allowed[a:b]]
        best_pos, best_scores = top_k(np.concatenate([best_pos, rows]), np.concatenate([best_scores, scores]), k)
    return best_pos, best_scores


def _bitmap_selector(allowed: np.ndarray):
    faiss = _faiss()
    bits = np.packbits(allowed, bitorder="little")
    selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits))
    selector.bits_owner = bits  # keeps the bitmap alive as long as the selector
    return selector


def _numpy_block(matrix: np.ndarray, query: np.ndarray, start: int, stop: int, want: int,
                 allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """numpy's float32 product (one BLAS gemv) top `want` of rows start:stop, best first."""
    scores = np.asarray(matrix[start:stop]) @ query
    positions = np.arange(start, stop, dtype=np.int64)
    if allowed is not None:
        keep = allowed[start:stop]
        positions, scores = positions[keep], scores[keep]
    if want < len(scores):
        best = np.argpartition(scores, len(scores) - want)[len(scores) - want:]
        positions, scores = positions[best], scores[best]
    order = np.argsort(-scores, kind="stable")
    return positions[order], scores[order]


def _flat_block(matrix: np.ndarray, query: np.ndarray, start: int, stop: int, want: int,
                allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """faiss float32 top `want` of rows start:stop: (positions, approximate scores), best first."""
    faiss = _faiss()
    block = np.ascontiguousarray(matrix[start:stop])  # a view of a C-ordered (memory-mapped) matrix
    want = min(want, stop - start)
    scores = np.empty((1, want), dtype=np.float32)
    labels = np.empty((1, want), dtype=np.int64)
    selector = None if allowed is None else _bitmap_selector(allowed[start:stop])
    faiss.knn_inner_product(faiss.swig_ptr(query), faiss.swig_ptr(block), block.shape[1], 1, stop - start,
                            want, faiss.swig_ptr(scores), faiss.swig_ptr(labels), selector)
    keep = labels[0] >= 0  # faiss pads with -1 when fewer rows are allowed
    return labels[0][keep] + start, scores[0][keep]


@dataclass
class SQ8Blocks:
    """An 8-bit scalar-quantised copy of the vectors, in row blocks, with its error bound."""

    blocks: list  # faiss.IndexScalarQuantizer, one per SQ8_BLOCK_ROWS rows
    starts: np.ndarray  # first row of each block
    error: np.ndarray  # float32 (dim,): the largest |x_d - decoded x_d| over all rows

    @classmethod
    def build(cls, matrix: np.ndarray) -> SQ8Blocks:
        trained, codes, error = encode_sq8(matrix)
        return cls.from_codes(trained, codes, error)

    @classmethod
    def from_codes(cls, trained: np.ndarray, codes: np.ndarray, error: np.ndarray) -> SQ8Blocks:
        """Blocks from `encode_sq8`'s output (as stored on disk)."""
        faiss = _faiss()
        empty = faiss.deserialize_index(np.asarray(trained, dtype=np.uint8))
        blocks, starts = [], []
        for start in range(0, len(codes), SQ8_BLOCK_ROWS):
            index = faiss.clone_index(empty)
            part = np.ascontiguousarray(codes[start : start + SQ8_BLOCK_ROWS])
            faiss.copy_array_to_vector(part.ravel(), index.codes)
            index.ntotal = len(part)
            blocks.append(index)
            starts.append(start)
        return cls(blocks=blocks, starts=np.asarray(starts, dtype=np.int64),
                   error=np.asarray(error, dtype=np.float32))

    def search_block(self, b: int, query: np.ndarray, want: int, allowed: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        index, start = self.blocks[b], int(self.starts[b])
        params = None
        if allowed is not None:
            params = _faiss().SearchParameters(sel=_bitmap_selector(allowed[start : start + index.ntotal]))
        scores, labels = index.search(query[None, :], min(want, index.ntotal), params=params)
        keep = labels[0] >= 0
        return labels[0][keep] + start, scores[0][keep]


def encode_sq8(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(serialised trained quantiser, uint8 codes (n, dim), per-dimension max error) of `matrix`.

    The quantiser's range per dimension is the rows' min and max, so no row is clipped, and
    the error is measured on every row (block by block), not assumed.
    """
    faiss = _faiss()
    n, dim = matrix.shape
    index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    index.train(np.ascontiguousarray(matrix, dtype=np.float32))
    codes = np.empty((n, index.sa_code_size()), dtype=np.uint8)
    error = np.zeros(dim, dtype=np.float32)
    for a in range(0, n, _RESCORE_BLOCK):
        rows = np.ascontiguousarray(matrix[a : a + _RESCORE_BLOCK], dtype=np.float32)
        codes[a : a + len(rows)] = index.sa_encode(rows)
        error = np.maximum(error, np.abs(index.sa_decode(codes[a : a + len(rows)]) - rows).max(axis=0))
    return faiss.serialize_index(index), codes, error


def _run(threads: int, jobs: list) -> list:
    """Run (fn, *args) jobs, on the search pool when there are several and threads > 1."""
    if threads <= 1 or len(jobs) <= 1:
        return [fn(*args) for fn, *args in jobs]
    futures = [parallel.submit(threads, fn, *args) for fn, *args in jobs]
    return [f.result() for f in futures]


def _certified_top_k(matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None,
                     n_allowed: int, first_stage, eps: float, threads: int,
                     fallback=None) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k from a bounded-error first stage (module docstring), widening as needed.

    `first_stage(want)` returns one (positions, approximate scores) pair per part of the
    index, each its part's `want` best: a row not returned scores at most its part's lowest
    returned score. When the candidates do not settle it, the pool is widened 4x, or
    `fallback()` answers when given (else every row is rescored).
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
        if fallback is not None:
            break
        want *= 4
    if fallback is not None:
        return fallback()
    return _exact_all_parallel(matrix, query, k, allowed, threads)


def _exact_all_parallel(matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None,
                        threads: int) -> tuple[np.ndarray, np.ndarray]:
    n = matrix.shape[0]
    parts = max(1, threads) if n >= PARALLEL_MIN_ROWS else 1
    bounds = np.linspace(0, n, parts + 1).astype(np.int64).tolist()
    found = _run(threads, [(_exact_all, matrix, query, k, allowed, a, b) for a, b in pairwise(bounds)])
    return top_k(np.concatenate([p for p, _ in found]), np.concatenate([s for _, s in found]), k)


def _prepare(matrix: np.ndarray, query: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, int]:
    query = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
    n_allowed = matrix.shape[0] if allowed is None else int(np.count_nonzero(allowed))
    return query, n_allowed


def dense_search(matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None = None,
                 *, threads: int = 1, sq8: SQ8Blocks | None = None,
                 first_stage: str | None = None) -> tuple[np.ndarray, np.ndarray]:
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

    block = _numpy_block if (first_stage or ("numpy" if n < NUMPY_MAX_ROWS else "faiss")) == "numpy" else _flat_block

    def flat_stage(want: int) -> list:
        return _run(threads, [(block, matrix, query, a, b, want, allowed) for a, b in pairwise(bounds)])

    def flat() -> tuple[np.ndarray, np.ndarray]:
        return _certified_top_k(matrix, query, k, allowed, n_allowed, flat_stage, FLOAT_EPS, threads)

    if sq8 is None:
        return flat()
    eps = float(np.abs(query) @ sq8.error) + FLOAT_EPS

    def first_stage(want: int) -> list:
        return _run(threads, [(sq8.search_block, b, query, want, allowed) for b in range(len(sq8.blocks))])

    # When the 8-bit candidates cannot prove the order (near-duplicates within its error of
    # the k-th score, as in the tiled MiniLM set of bench/retrieval.py), the float32 stage
    # answers: one more scan, which measured far cheaper than a faiss range search over the
    # 8-bit codes or widening it (bench/retrieval.py --realistic, docs/benchmarks.md).
    return _certified_top_k(matrix, query, k, allowed, n_allowed, first_stage, eps, threads, flat)


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
