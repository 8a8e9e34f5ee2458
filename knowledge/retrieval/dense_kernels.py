"""The compiled scan of dense search's 8-bit first stage (knowledge.retrieval.dense).

`scan(codes, weights, start, stop, allowed, scores, want)` scores rows start:stop of the
uint8 codes against 16-bit integer query weights: an integer dot product per row, exact in
int32 (the weights are scaled so no sum can overflow), which LLVM vectorises into 16-bit
multiply-adds (AVX2 `vpmaddwd`: 16 codes a step): about 2.5x faster than faiss's
IndexScalarQuantizer, which decodes each code to float, and a quarter of the float32
product's memory traffic (docs/benchmarks.md). Each row's sum is written to `scores` (so a pool can later be widened by a
threshold, without a second scan), and the `want` best are kept in a min-heap on the way.
numba is imported and the kernel compiled on first use (cached on disk after that).
"""

from __future__ import annotations

from functools import cache

import numpy as np

NO_MASK = np.zeros(0, dtype=np.uint8)
# The score written for a row the filter leaves out: below any row's sum.
MASKED = np.iinfo(np.int32).min
# Rows scored before their sums are offered to the heap (a few KB of codes, in L1/L2).
_STEP = 64


@cache
def kernels():
    """(scan,), compiled on first use."""
    from numba import njit

    from knowledge.retrieval.bm25_kernels import heap_push

    push = heap_push()

    @njit(cache=True, nogil=True)
    def dots(codes, weights, start, stop, scores):
        """scores[r] = weights . codes[r] for r in start:stop (a tight loop LLVM vectorises)."""
        dim = codes.shape[1]
        for r in range(start, stop):
            acc = np.int32(0)
            for d in range(dim):
                acc += np.int32(np.int16(codes[r, d])) * np.int32(weights[d])
            scores[r] = acc

    @njit(cache=True, nogil=True)
    def scan(codes, weights, start, stop, allowed, scores, want):
        """(rows, sums) of the `want` best rows of start:stop, ascending (more on a tie at the
        cut, fewer when fewer are allowed), every allowed row's sum written to scores[row],
        MASKED for the others."""
        heap = np.empty(max(want, 1), dtype=np.int32)
        size = 0
        filtered = len(allowed) > 0
        for a in range(start, stop, _STEP):
            b = min(a + _STEP, stop)
            if filtered:
                for r in range(a, b):
                    if allowed[r] != 0:
                        dots(codes, weights, r, r + 1, scores)
                    else:
                        scores[r] = MASKED
            else:
                dots(codes, weights, a, b, scores)
            for r in range(a, b):
                if scores[r] != MASKED:
                    size = push(heap, size, want, scores[r])
        # A real sum is never MASKED (the weights keep every sum above it).
        cut = heap[0] if size == want else MASKED + 1
        n_kept = 0
        for r in range(start, stop):
            if scores[r] >= cut:
                n_kept += 1
        rows = np.empty(n_kept, dtype=np.int64)
        sums = np.empty(n_kept, dtype=np.int32)
        n_kept = 0
        for r in range(start, stop):
            if scores[r] >= cut:
                rows[n_kept], sums[n_kept] = r, scores[r]
                n_kept += 1
        return rows, sums

    return (scan,)
