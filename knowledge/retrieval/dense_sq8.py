"""The 8-bit first stage of dense search (knowledge.retrieval.dense): from SQ8_MIN_ROWS rows up.

An 8-bit scalar-quantised copy of the vectors (384 bytes a vector instead of 1,536;
faiss's QT_8bit codec makes the codes, `encode_sq8`, stored beside the index by
knowledge.retrieval.store) is scanned by our own compiled kernel as integer dot products with
16-bit query weights (knowledge.retrieval.dense_kernels), and the candidates are rescored
exactly (knowledge.retrieval.dense_exact). The error bound that makes the result exact is
in knowledge.retrieval.dense's docstring and `SQ8Blocks.query_weights`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from knowledge.retrieval.bm25 import top_k
from knowledge.retrieval.dense_exact import (
    CANDIDATES_PER_HIT,
    FLOAT_EPS,
    RESCORE_BLOCK,
    exact_scores,
    exact_top_k,
    load_faiss,
    run_jobs,
)
from knowledge.retrieval.parallel import borrowed

# From this many rows up the first stage is the 8-bit copy (bench/retrieval.py --full,
# "dense first stage" table, docs/benchmarks.md: SQ8 + rescoring is faster than the
# float32 product from about this size, and it saves 3/4 of the resident memory).
SQ8_MIN_ROWS = 50_000
# Row blocks of the 8-bit scan on the search pool (at least two per thread, so BM25, run
# beside them, and the blocks even out across threads).
SQ8_BLOCK_ROWS = 131_072
# The approximate sum of a row a filter leaves out (dense_kernels.MASKED).
MASKED = np.iinfo(np.int32).min


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
        faiss = load_faiss()
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
    faiss = load_faiss()
    n, dim = matrix.shape
    index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    index.train(np.ascontiguousarray(matrix, dtype=np.float32))
    codes = np.empty((n, index.sa_code_size()), dtype=np.uint8)
    error = np.zeros(dim, dtype=np.float32)
    for a in range(0, n, RESCORE_BLOCK):
        rows = np.ascontiguousarray(matrix[a : a + RESCORE_BLOCK], dtype=np.float32)
        codes[a : a + len(rows)] = index.sa_encode(rows)
        error = np.maximum(error, np.abs(index.sa_decode(codes[a : a + len(rows)]) - rows).max(axis=0))
    return faiss.serialize_index(index), codes, error


def sq8_top_k(
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
    # Every row's sum, for the widening in 3. (lent per search: parallel.borrowed).
    with borrowed("sq8_sums", n, lambda m: (np.empty(m, dtype=np.int32),)) as (sums,):
        want = max(CANDIDATES_PER_HIT * k, k + 16)
        blocks = max(threads * 2, -(-n // SQ8_BLOCK_ROWS)) if threads > 1 else 1
        bounds = np.linspace(0, n, blocks + 1).astype(np.int64).tolist()
        scan = kernels()[0]
        found = run_jobs(threads, [(scan, codes, weights, a, b, mask, sums, want) for a, b in pairwise(bounds)])
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
        rows = np.flatnonzero(sums >= floor)
        if len(rows) * 4 > n_allowed:
            return exact_top_k(matrix, query, k, allowed, threads)
        return top_k(rows, exact_scores(matrix, rows, query), k)
