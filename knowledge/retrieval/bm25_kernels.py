"""The compiled kernels of knowledge.retrieval.bm25 and their per-thread working arrays.

`kernels()` returns the two walks over a BM25Index's term-major arrays: `matching` (every
chunk holding a query term, scored from the float64 weights) and `top` (8-bit
impacts walked rare terms first with MaxScore skipping, then the chunks near the k-th best
rescored exactly); bm25.py's module docstring and docs/retrieval.md say what they compute. numba is
imported and the kernels compiled on first use (cached on disk after that), so importing
this module stays cheap.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from functools import cache

import numpy as np

from knowledge.retrieval.bm25_postings import ONE, codec
from knowledge.retrieval.parallel import borrowed

NO_MASK = np.zeros(0, dtype=np.uint8)
# Impact sums are int32: (65,535 + 257) x the query's term count must fit (bm25.BM25Index.quantize).
MAX_QUERY_TERMS = 30_000
# What a binary search of a posting list costs, in postings walked (a rough guess).
_LOOKUP_COST = 32
# What selecting the best of the touched chunks costs, a chunk, in postings walked (a guess:
# with it, 1.4% fewer instructions than trying whenever m <= left[i], docs/benchmarks.md).
_SELECT_COST = 4
# When most chunks were touched, `top` samples every _SAMPLE_STRIDE-th chunk's impact sum first.
_SAMPLE_STRIDE = 32


def top_scratch(n: int) -> AbstractContextManager[tuple[np.ndarray, ...]]:
    """(impact sums, seen, chunk list, values) arrays of length n for `top`, lent for a
    block (parallel.borrowed): the kernel leaves the first two zeroed."""
    return borrowed("bm25_top", n, lambda m: (np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.uint8),
                                              np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)))


def scratch(n: int) -> AbstractContextManager[tuple[np.ndarray, ...]]:
    """(scores, seen, touched) arrays of length n for `matching`, lent for a block: the
    kernel leaves the first two zeroed; the last is working space."""
    return borrowed("bm25_matching", n, lambda m: (np.zeros(m), np.zeros(m, dtype=np.uint8),
                                                   np.empty(m, dtype=np.int32)))


@cache
def heap_push():
    """The compiled min-heap insertion `push(heap, size, k, v)` (also used by the dense scan)."""
    from numba import njit

    @njit(cache=True, nogil=True, inline="always")
    def push(heap, size, k, v):
        """Keep the k largest values in a min-heap (heap[0] the smallest kept); returns the size."""
        if size == k:
            if v <= heap[0]:
                return size
            i = 0  # replace the root and sift it down
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] >= v:
                    break
                heap[i] = heap[c]
                i = c
            heap[i] = v
            return size
        i = size  # append and sift up
        while i > 0:
            parent = (i - 1) >> 1
            if heap[parent] <= v:
                break
            heap[i] = heap[parent]
            i = parent
        heap[i] = v
        return size + 1

    return push


@cache
def kernels():
    """The compiled walks (numba is imported and the kernels compiled on first use, cached
    on disk after that): (matching, top, finish, gather)."""
    from numba import njit

    push = heap_push()
    block, read, seek, find = codec()

    @njit(cache=True, nogil=True)
    def term_order(indptr, data, ids, counts, term_max):
        """(order, bound): the query terms by decreasing bound (count x largest weight; ties
        by term id), the order every kernel sums in. A term's largest weight not yet known is
        computed now."""
        nt = len(ids)
        bound = np.empty(nt)
        for j in range(nt):
            t = ids[j]
            mx = term_max[t]
            if mx != mx:
                mx = -np.inf
                for p in range(indptr[t], indptr[t + 1]):
                    mx = max(mx, data[p])
                term_max[t] = mx
            bound[j] = counts[j] * mx
        return np.argsort(-bound, kind="mergesort"), bound

    @njit(cache=True, nogil=True)
    def matching(indptr, indices, data, ids, counts, term_max, scores, seen, touched):
        order, _ = term_order(indptr, data, ids, counts, term_max)
        m = 0
        for j in order:
            c = counts[j]
            for p in range(indptr[ids[j]], indptr[ids[j] + 1]):
                d = indices[p]
                if seen[d] == 0:
                    seen[d] = 1
                    touched[m] = d
                    m += 1
                scores[d] += c * data[p]
        # As the sparse product, a chunk whose terms sum to exactly 0 (an idf of 0: a term in
        # exactly half the chunks) is not returned.
        kept = 0
        for i in range(m):
            if scores[touched[i]] != 0.0:
                kept += 1
        positions = np.empty(kept, dtype=np.int64)
        values = np.empty(kept)
        kept = 0
        for i in range(m):
            d = touched[i]
            if scores[d] != 0.0:
                positions[kept] = d
                values[kept] = scores[d]
                kept += 1
            scores[d] = 0.0
            seen[d] = 0
        return positions, values

    @njit(cache=True, nogil=True)
    def kth_largest(values, m, k):
        """The k-th largest of values[:m] (1 <= k <= m), reordering values[:m] (quickselect)."""
        r = m - k
        lo, hi = 0, m - 1
        while lo < hi:
            a, b, c = values[lo], values[(lo + hi) >> 1], values[hi]
            pivot = max(min(a, b), min(max(a, b), c))
            i, j = lo, hi
            while i <= j:
                while values[i] < pivot:
                    i += 1
                while values[j] > pivot:
                    j -= 1
                if i <= j:
                    values[i], values[j] = values[j], values[i]
                    i += 1
                    j -= 1
            if r <= j:
                hi = j
            elif r >= i:
                lo = i
            else:
                break
        return values[r]

    @njit(cache=True, nogil=True)
    def top(indptr, skip_ptr, skip_doc, skip_off, gaps, data, impacts, mult, error, step, ids, counts, term_max,
            k, allowed, acc, seen, touched, values):
        """(near, where, counts, done): the chunks that may be in the top k and where their
        weights are (`finish` scores them), or done = False when the query has a negative
        term (the bounds do not hold: the caller scores it exactly). The float64 weights are
        not read here: the caller reads those few (knowledge.retrieval.reads), so a
        memory-mapped weights file is not paged in around them."""
        n = len(acc)
        nt = len(ids)
        order, bound = term_order(indptr, data, ids, counts, term_max)
        total = 0
        cm = np.empty(nt, dtype=np.int64)  # count x multiplier: what a term's impact is worth
        for j in range(nt):
            if bound[j] < 0:
                return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.int64), np.empty(0, dtype=np.int64), False
            cm[j] = counts[j] * mult[ids[j]]
            total += counts[j] * error[ids[j]]
        # Integer sums of the impacts are exact; term t's impact x mult[t] is within error[t]
        # of its weight x 1/step (measured when the impacts were made), so a chunk's sum is
        # within `slack` of its exact score / step (with room for the float64 rounding).
        slack = total + 2
        qmax = np.empty(nt, dtype=np.int64)
        rest = np.zeros(nt + 1, dtype=np.int64)  # rest[i]: the most terms order[i:] can add
        left = np.zeros(nt + 1, dtype=np.int64)  # left[i]: their postings
        for i in range(nt - 1, -1, -1):
            j = order[i]
            t = ids[j]
            qmax[j] = int(term_max[t] / step) + 1 + error[t]  # impact x mult is at most this
            rest[i] = rest[i + 1] + counts[j] * qmax[j]
            left[i] = left[i + 1] + indptr[t + 1] - indptr[t]
        filtered = len(allowed) > 0
        m = 0
        tracking = True  # touched[:m] lists every chunk touched; off once that is most of them
        stop = nt
        theta = 0
        for i in range(nt):
            # MaxScore: the k chunks with the best partial sums so far get their sums
            # completed by looking the remaining terms up; the k-th best of those complete
            # sums (theta) is at most the final k-th best. Once it is above what the
            # remaining terms can add, no untouched chunk can reach the top k, and of the
            # touched ones only those whose partial sum plus that reaches theta can: the
            # remaining terms are looked up for them instead of walked. Tried while the
            # selection and lookups cost less than the walk they may save.
            if tracking and i > 0 and k <= m and m * _SELECT_COST <= left[i]:
                for x in range(m):
                    values[x] = acc[np.uint64(touched[x])]
                best = kth_largest(values, m, k)
                n_top = 0
                for x in range(m):
                    if acc[np.uint64(touched[x])] >= best:
                        n_top += 1
                if n_top * (nt - i) * _LOOKUP_COST <= left[i]:
                    complete = np.empty(n_top, dtype=np.int64)
                    n_top = 0
                    for x in range(m):
                        d = touched[x]
                        if acc[np.uint64(d)] >= best:
                            complete[n_top] = acc[np.uint64(d)]
                            for i2 in range(i, nt):
                                j = order[i2]
                                p = find(indptr, skip_ptr, skip_doc, skip_off, gaps, ids[j], d)
                                if p >= 0:
                                    complete[n_top] += cm[j] * impacts[p]
                            n_top += 1
                    theta = kth_largest(complete, n_top, k)
                    if rest[i] + 2 * slack < theta:
                        n_cand = 0
                        for x in range(m):
                            if acc[np.uint64(touched[x])] + rest[i] + 2 * slack >= theta:
                                n_cand += 1
                        if n_cand * (nt - i) * _LOOKUP_COST <= left[i]:
                            stop = i
                            break
            j = order[i]
            c = cm[j]
            t = ids[j]
            lo, hi = indptr[t], indptr[t + 1]
            if tracking and m + (hi - lo) > n // 4:
                tracking = False
            for b in range(skip_ptr[t], skip_ptr[t + 1]):
                p0, nb, w, d, o = block(skip_ptr, skip_doc, skip_off, t, b, lo, hi)
                if w == 1 and not tracking and not filtered:
                    # Most postings: one-byte gaps, nothing to record (the loop without
                    # those tests is about twice as fast). Indexed with unsigned integers:
                    # numba tests a signed index for a negative value on every access, which
                    # made this loop 2.7x slower (docs/benchmarks.md).
                    du, pu, ou = np.uint64(d), np.uint64(p0), np.uint64(o)
                    acc[du] += c * impacts[pu]
                    for x in range(1, nb):
                        xu = np.uint64(x)
                        du += np.uint64(gaps[ou + xu - ONE])
                        acc[du] += c * impacts[pu + xu]
                    continue
                if tracking and not filtered:
                    # Listing each chunk on its first touch without a branch: whether a
                    # posting's chunk is new is unpredictable, and a mispredicted branch
                    # costs more than always writing touched[m] (m < n // 4 here).
                    for x in range(nb):
                        if x > 0:
                            d += read(gaps, o, w)
                            o += w
                        du = np.uint64(d)
                        touched[m] = d
                        m += 1 - np.int64(seen[du])
                        seen[du] = 1
                        acc[du] += c * impacts[np.uint64(p0 + x)]
                    continue
                for x in range(nb):
                    if x > 0:
                        d += read(gaps, o, w)
                        o += w
                    du = np.uint64(d)
                    if filtered and allowed[du] == 0:
                        continue
                    if tracking and seen[du] == 0:
                        seen[du] = 1
                        touched[m] = d
                        m += 1
                    acc[du] += c * impacts[np.uint64(p0 + x)]
        if stop < nt:
            # The candidates: touched chunks whose partial sum plus the rest can reach theta;
            # touched[:n_cand] after this, sorted, and every other chunk reset.
            floor = theta - 2 * slack - rest[stop]
            n_cand = 0
            for x in range(m):
                du = np.uint64(touched[x])
                seen[du] = 0
                if acc[du] >= floor:
                    touched[n_cand] = touched[x]
                    n_cand += 1
                else:
                    acc[du] = 0
            m = n_cand
            touched[:m].sort()
            for i in range(stop, nt):
                j = order[i]
                c = cm[j]
                t = ids[j]
                lo, hi = indptr[t], indptr[t + 1]
                if m * 20 < hi - lo:
                    for x in range(m):  # few candidates: searches, moving forward
                        lo, d = seek(indptr, skip_ptr, skip_doc, skip_off, gaps, t, lo, touched[x])
                        if d == touched[x]:
                            acc[d] += c * impacts[lo]
                else:  # many: one merge of both sorted lists
                    x = 0
                    for b in range(skip_ptr[t], skip_ptr[t + 1]):
                        p0, nb, w, d, o = block(skip_ptr, skip_doc, skip_off, t, b, lo, hi)
                        for y in range(nb):
                            if y > 0:
                                d += read(gaps, o, w)
                                o += w
                            while x < m and touched[x] < d:
                                x += 1
                            if x == m:
                                break
                            if touched[x] == d:
                                acc[d] += c * impacts[p0 + y]
                        if x == m:
                            break
        else:
            for x in range(m):
                seen[np.uint64(touched[x])] = 0
        # The k-th best impact sum, and every chunk within 2 x slack of it (`near`, in
        # touched[:n_near], values[:n_near] their sums; all others are below k chunks for sure).
        heap = np.empty(k, dtype=np.int64)
        size = 0
        n_near = 0
        if tracking:
            for x in range(m):
                size = push(heap, size, k, acc[np.uint64(touched[x])])
            for x in range(m):
                du = np.uint64(touched[x])
                if acc[du] > 0 and acc[du] >= heap[0] - 2 * slack:
                    touched[n_near] = touched[x]
                    n_near += 1
                acc[du] = 0
        else:
            # Most chunks touched: every chunk is read. The k-th best of every 32nd chunk's
            # sum is at most the k-th best of all (a subset's k best are among the whole's),
            # so the chunks within 2 x slack of the final k-th best are all at or above
            # `floor`: a block of 64 chunks whose largest sum (a vectorised reduction) is
            # below it is skipped. The few kept are then cut at the exact k-th best.
            n_sample = 0
            for d in range(0, n, _SAMPLE_STRIDE):
                values[n_sample] = acc[d]
                n_sample += 1
            floor = 1
            if n_sample >= k:
                floor = max(np.int64(kth_largest(values, n_sample, k)) - 2 * slack, 1)
            for a in range(0, n, 64):
                b = min(a + 64, n)
                largest = acc[a]
                for d in range(a + 1, b):
                    largest = max(largest, acc[d])
                if largest >= floor:
                    for d in range(a, b):
                        if acc[d] >= floor:
                            touched[n_near] = d
                            values[n_near] = acc[d]
                            n_near += 1
            acc[:] = 0
            if n_near > k:
                for x in range(n_near):
                    size = push(heap, size, k, values[x])
                kept = 0
                for x in range(n_near):
                    if values[x] >= heap[0] - 2 * slack:
                        touched[kept] = touched[x]
                        kept += 1
                n_near = kept
        # Where the near chunks' weights are (their exact scores need them: `finish`), term
        # by term in summing order; -1 where a chunk does not hold the term.
        near = np.sort(touched[:n_near]).astype(np.int64)
        where = np.full((nt, n_near), -1, dtype=np.int64)
        ordered_counts = np.empty(nt, dtype=np.int64)
        for i in range(nt):
            j = order[i]
            ordered_counts[i] = counts[j]
            lo = indptr[ids[j]]
            for x in range(n_near):
                lo, d = seek(indptr, skip_ptr, skip_doc, skip_off, gaps, ids[j], lo, near[x])
                if d == near[x]:
                    where[i, x] = lo
        return near, where, ordered_counts, True

    @njit(cache=True, nogil=True)
    def gather(where):
        """(positions, slot): the postings `where` names (>= 0), ascending and each once, and
        slot[i, x], the index of where[i, x] in them (-1 where -1). Each row of `where` is
        one term's postings in chunk order, and a term's postings are one range of
        positions, so the rows taken by their first posting concatenate in order."""
        nt, n_near = where.shape
        first = np.full(nt, np.iinfo(np.int64).max, dtype=np.int64)
        for i in range(nt):
            for x in range(n_near):
                if where[i, x] >= 0:
                    first[i] = where[i, x]
                    break
        positions = np.empty(nt * n_near, dtype=np.int64)
        slot = np.full((nt, n_near), -1, dtype=np.int64)
        n_pos = 0
        for i in np.argsort(first):
            for x in range(n_near):
                if where[i, x] >= 0:
                    slot[i, x] = n_pos
                    positions[n_pos] = where[i, x]
                    n_pos += 1
        return positions[:n_pos], slot

    @njit(cache=True, nogil=True)
    def finish(near, where, weights, counts, k):
        """(positions, scores) of `top`'s near chunks (weights[i, x]: data[where[i, x]]),
        scored exactly as `matching` sums (the same terms in the same order), so the scores
        are its numbers bit for bit; best first, ties to the lower position (near is sorted
        and mergesort is stable)."""
        n_near = len(near)
        exact = np.zeros(n_near)
        for i in range(where.shape[0]):
            c = counts[i]
            for x in range(n_near):
                if where[i, x] >= 0:
                    exact[x] += c * weights[i, x]
        best = np.argsort(-exact, kind="mergesort")[:k]
        n_out = 0
        for x in best:
            if exact[x] != 0.0:
                n_out += 1
        positions = np.empty(n_out, dtype=np.int64)
        out = np.empty(n_out)
        n_out = 0
        for x in best:
            if exact[x] != 0.0:
                positions[n_out] = near[x]
                out[n_out] = exact[x]
                n_out += 1
        return positions, out

    return matching, top, finish, gather
