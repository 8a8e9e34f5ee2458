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
score (`_sq8_top_k`). Past a quarter of the rows the whole (allowed) matrix is rescored.
So the ranking is identical to rescoring every row (tested on real MiniLM vectors,
tests/knowledge/test_retrieval_dense.py).
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np

from knowledge.retrieval import parallel, reads
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
# Row blocks of the 8-bit scan on the search pool (at least two per thread, so BM25, run
# beside them, and the blocks even out across threads).
SQ8_BLOCK_ROWS = 131_072
# Float32 error allowance of either computation of a unit-vector dot product (see above).
FLOAT_EPS = 1e-4
# Rows rescored per step when the whole matrix is rescored (a bounded temporary).
_RESCORE_BLOCK = 16_384
# The approximate sum of a row a filter leaves out (dense_kernels.MASKED).
MASKED = np.iinfo(np.int32).min
_SCRATCH = threading.local()


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
    for a in range(start, stop, _RESCORE_BLOCK):
        b = min(a + _RESCORE_BLOCK, stop)
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


def _bitmap_selector(allowed: np.ndarray):
    faiss = _faiss()
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
    faiss = _faiss()
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


@dataclass
class SQ8Blocks:
    """An 8-bit scalar-quantised copy of the vectors, with its error bound.

    Row i decodes to vmin + (codes[i] + 0.5) x step (faiss's QT_8bit codec, which made the
    codes), so a query's approximate score of a row is an integer dot product with the
    codes plus a constant (`query_weights`). The codes may be memory-mapped from disk: they
    are the part of the index every search reads, so they are its resident memory.
    """

    codes: np.ndarray  # uint8 (n, dim)
    vmin: np.ndarray  # float64 (dim,)
    step: np.ndarray  # float64 (dim,): the quantisation step, (max - min) / 255
    error: np.ndarray  # float32 (dim,): the largest |x_d - decoded x_d| over all rows

    @classmethod
    def build(cls, matrix: np.ndarray) -> SQ8Blocks:
        trained, codes, error = encode_sq8(matrix)
        return cls.from_codes(trained, codes, error)

    @classmethod
    def from_codes(cls, trained: np.ndarray, codes: np.ndarray, error: np.ndarray) -> SQ8Blocks:
        """From `encode_sq8`'s output (as stored on disk; the codes are not copied)."""
        faiss = _faiss()
        index = faiss.deserialize_index(np.asarray(trained, dtype=np.uint8))
        dim = index.d
        if index.sq.qtype != faiss.ScalarQuantizer.QT_8bit or index.sa_code_size() != dim:
            raise ValueError("not an 8-bit scalar quantiser")
        vmin, vdiff = faiss.vector_to_array(index.sq.trained).astype(np.float64).reshape(2, dim)
        return cls(codes=codes, vmin=vmin, step=vdiff / 255, error=np.asarray(error, dtype=np.float32))

    def query_weights(self, query: np.ndarray) -> tuple[np.ndarray, float, float, float]:
        """(16-bit weights, scale, constant, error bound) of `query`.

        Its approximate score of row i is constant + scale x (weights . codes[i]), summed in
        int32, and |that - exact cosine| <= the bound: the quantisation error sum_d |q_d| x
        error_d, plus the weights' own rounding (each code is at most 255), plus FLOAT_EPS
        for float32 products and float64 sums. The scale keeps every weight within int16
        and any row's sum within int32.
        """
        q = np.asarray(query, dtype=np.float64)
        w = q * self.step
        constant = float(q @ (self.vmin + 0.5 * self.step))
        total = float(np.abs(w).sum())
        if total == 0:
            return np.zeros(len(w), dtype=np.int16), 1.0, constant, FLOAT_EPS
        scale = max(float(np.abs(w).max()) / 32767, total * 255 / (2**31 - 1 - 255 * len(w)))
        weights = np.rint(w / scale).astype(np.int16)
        rounding = 255 * float(np.abs(w - scale * weights).sum())
        return weights, scale, constant, float(np.abs(q) @ self.error) + rounding + FLOAT_EPS


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
    return _exact_all_parallel(matrix, query, k, allowed, threads)


def _sq8_top_k(
    matrix: np.ndarray,
    sq8: SQ8Blocks,
    query: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
    n_allowed: int,
    threads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact top k through the 8-bit first stage.

    1. Scan every (allowed) row's codes (`dense_kernels.scan`, in row blocks on the pool),
       keeping each row's integer sum and each block's `want` best.
    2. Rescore the `want` best of all blocks exactly; s_k is the k-th best exact score.
    3. A row outside them scores at most (the lowest approximate score of a full block, or
       the merge's cut-off) + eps exactly. When s_k is above that, done. Otherwise (near-
       duplicates within eps of each other) every row whose approximate score reaches
       s_k - eps is taken from the kept sums, no second scan, and rescored: any other row
       scores below s_k, and the k rows that gave s_k are among them. Past a quarter of the
       rows, every row is rescored instead.
    """
    from knowledge.retrieval.dense_kernels import NO_MASK, kernels

    weights, scale, constant, eps = sq8.query_weights(query)
    n = len(sq8.codes)
    codes = np.asarray(sq8.codes).view(np.ndarray)
    mask = NO_MASK if allowed is None else np.ascontiguousarray(allowed, dtype=bool).view(np.uint8)
    sums = _scan_scratch(n)
    want = max(CANDIDATES_PER_HIT * k, k + 16)
    blocks = max(threads * 2, -(-n // SQ8_BLOCK_ROWS)) if threads > 1 else 1
    bounds = np.linspace(0, n, blocks + 1).astype(np.int64).tolist()
    scan = kernels()[0]
    found = _run(threads, [(scan, codes, weights, a, b, mask, sums, want) for a, b in pairwise(bounds)])
    rows = np.concatenate([r for r, _ in found])
    approx = np.concatenate([v for _, v in found])
    # Rows cut from a full block score at most its lowest kept sum; rows cut here at most `cut`.
    cut = max((int(v.min()) for r, v in found if len(r) >= want), default=None)
    if len(rows) > want:
        keep = np.argpartition(approx, len(approx) - want)[len(approx) - want :]
        cut = max(cut if cut is not None else MASKED, int(approx[keep].min()))
        rows = rows[keep]
    rows.sort()
    best_pos, best_scores = top_k(rows, exact_scores(matrix, rows, query), k)
    if cut is None or (len(best_pos) == k and best_scores[-1] > constant + scale * cut + eps):
        return best_pos, best_scores
    floor = max(math.floor((best_scores[-1] - eps - constant) / scale) - 1, MASKED + 1)
    rows = np.flatnonzero(sums[:n] >= floor)
    if len(rows) * 4 > n_allowed:
        return _exact_all_parallel(matrix, query, k, allowed, threads)
    return top_k(rows, exact_scores(matrix, rows, query), k)


def _scan_scratch(n: int) -> np.ndarray:
    """This thread's int32 array of at least n approximate sums (the blocks of one search,
    possibly on other threads, fill disjoint parts of it), made once."""
    sums = getattr(_SCRATCH, "sums", None)
    if sums is None or len(sums) < n:
        sums = _SCRATCH.sums = np.empty(n, dtype=np.int32)
    return sums


def _exact_all_parallel(
    matrix: np.ndarray, query: np.ndarray, k: int, allowed: np.ndarray | None, threads: int
) -> tuple[np.ndarray, np.ndarray]:
    n = matrix.shape[0]
    parts = max(1, threads) if n >= PARALLEL_MIN_ROWS else 1
    bounds = np.linspace(0, n, parts + 1).astype(np.int64).tolist()
    found = _run(threads, [(_exact_all, matrix, query, k, allowed, a, b) for a, b in pairwise(bounds)])
    return top_k(np.concatenate([p for p, _ in found]), np.concatenate([s for _, s in found]), k)


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
        return _run(threads, [(block, matrix, query, a, b, want, allowed) for a, b in pairwise(bounds)])

    def flat() -> tuple[np.ndarray, np.ndarray]:
        return _certified_top_k(matrix, query, k, allowed, n_allowed, flat_stage, FLOAT_EPS, threads)

    if sq8 is None:
        return flat()
    return _sq8_top_k(matrix, sq8, query, k, allowed, n_allowed, threads)


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
