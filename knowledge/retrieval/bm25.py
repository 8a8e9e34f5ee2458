"""BM25 Okapi as a sparse matrix of precomputed term weights.

The scores are exactly rank-bm25's `BM25Okapi` (k1=1.5, b=0.75, epsilon=0.25) for the same
token lists: idf = ln(N - n + 0.5) - ln(n + 0.5), and a term whose idf is negative (it is
in more than half the chunks) gets epsilon * mean(idf) instead. Because the weight of a
(term, chunk) pair does not depend on the query, it is computed once at build time:

    W[t, d] = idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avgdl))

and a query is one sparse product, scores = q @ W, where q counts the query's terms
(rank-bm25 adds a repeated query term twice, so do we).
W is stored term-major (CSR, one row per term) so a query only touches its terms' rows.

`top` (what a search calls) finds the k best exactly in two stages, in compiled kernels
(numba, `_kernels`): 16-bit integer impacts (each weight as a multiple of one step, so impact
sums are within a known bound of the exact scores) walked rare terms first, with MaxScore
skipping of the long common-term lists once the k-th best complete sum proves that no
chunk not yet touched can reach the top k; then every chunk within the bound of the k-th
best is rescored from the float64 weights, summed as `matching` sums. The result is
`top_k(*matching(tokens), k)` bit for bit (docs/retrieval.md). `matching` scores every
chunk that holds a query term: each posting adds count x weight into a per-thread scratch
array, the touched chunks are read out and the scratch reset. Both add a chunk's terms in
the same order (by decreasing bound), a different order from the sparse product `scores`,
so the three agree to about 1e-15, `top` and `matching` to the last bit. Issue 19: at
100k chunks bm25s's numba backend was 2.9x faster than the walk of every match; the
MaxScore first stage is what beats it (docs/benchmarks.md). numba (with llvmlite, about
45 MB installed) is the well-kept way to compile such loops without a C toolchain; the
kernels are compiled on first use and cached on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import sparse

K1 = 1.5
B = 0.75
EPSILON = 0.25


@dataclass
class BM25Index:
    vocab: dict[str, int]
    # (n_terms, n_chunks). float64: float32 would round scores of ~20 to about 1e-6, the
    # tolerance we promise against rank-bm25.
    weights: sparse.csr_matrix
    # What the weights were made from, kept so an index can be merged with another without
    # re-tokenising (knowledge.retrieval.merge): the term count of each stored (term, chunk)
    # pair, aligned with weights.data, and each chunk's length in tokens. None in an index
    # written before they were stored.
    counts: np.ndarray | None = None
    lengths: np.ndarray | None = None
    # Each term's largest weight (the MaxScore bound of `top`); NaN where not yet known (an
    # index written before they were stored: filled in per term on first use).
    term_max: np.ndarray | None = None
    # The first stage of `top`: each weight as a 16-bit integer multiple of `impact_step`
    # (aligned with weights.data; made on first use when not stored).
    impacts: np.ndarray | None = None
    impact_step: float = 0.0

    @property
    def n_chunks(self) -> int:
        return self.weights.shape[1]

    def count_matrix(self) -> sparse.csr_matrix:
        """The term counts as a (n_terms, n_chunks) CSR matrix (the weights' layout)."""
        w = self.weights
        return sparse.csr_matrix((np.asarray(self.counts, dtype=np.float64), np.asarray(w.indices),
                                  np.asarray(w.indptr)), shape=w.shape)

    @classmethod
    def build(cls, corpus: Iterable[Sequence[str]], *, k1: float = K1, b: float = B,
              epsilon: float = EPSILON) -> BM25Index:
        """Index token lists (one per chunk)."""
        vocab: dict[str, int] = {}
        term_ids: list[np.ndarray] = []
        for tokens in corpus:
            term_ids.append(np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens),
                                        dtype=np.int64, count=len(tokens)))
        return cls.from_term_ids(term_ids, vocab, k1=k1, b=b, epsilon=epsilon)

    @classmethod
    def from_term_ids(cls, docs: Sequence[np.ndarray], vocab: dict[str, int], *, k1: float = K1,
                      b: float = B, epsilon: float = EPSILON) -> BM25Index:
        """Index chunks given as arrays of term ids (the benchmark builds 1M chunks this way)."""
        n_docs, n_terms = len(docs), len(vocab)
        lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=n_docs)
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        terms = np.concatenate(docs) if lengths.sum() else np.zeros(0, dtype=np.int64)
        # Term frequencies: duplicates (term, doc) are summed by the COO -> CSR conversion.
        tf = sparse.csr_matrix(
            (np.ones(len(terms), dtype=np.float64), (terms, doc_of)), shape=(n_terms, n_docs)
        )
        return cls.from_counts(tf, vocab, lengths, k1=k1, b=b, epsilon=epsilon)

    @classmethod
    def from_counts(cls, tf: sparse.spmatrix, vocab: dict[str, int], lengths: np.ndarray, *, k1: float = K1,
                    b: float = B, epsilon: float = EPSILON) -> BM25Index:
        """Index term counts `tf` (n_terms, n_chunks) whose rows `vocab` names.

        The vocabulary is first made canonical: terms that occur nowhere are dropped and the
        rest sorted, so the same chunks give the same term ids, and hence bit-identical
        weights and query sums, whether they were indexed at once or merged from parts.
        """
        tf = sparse.csr_matrix(tf, dtype=np.float64)
        tf.sum_duplicates()
        n_docs = tf.shape[1]
        lengths = np.asarray(lengths, dtype=np.int64)
        df = np.diff(tf.indptr)
        terms = sorted(t for t, i in vocab.items() if df[i] > 0)
        tf = tf[np.fromiter((vocab[t] for t in terms), dtype=np.int64, count=len(terms))]
        tf.sort_indices()
        vocab = {t: i for i, t in enumerate(terms)}
        counts = tf.data.copy()
        if n_docs == 0 or not terms:
            return cls(vocab=vocab, weights=tf, counts=counts, lengths=lengths)
        avgdl = lengths.sum() / n_docs
        df = np.diff(tf.indptr).astype(np.float64)
        idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        # As rank-bm25: the mean idf over the terms that occur, taken before flooring the
        # negative ones to epsilon * mean.
        eps = epsilon * (idf.sum() / len(idf))
        idf = np.where(idf < 0, eps, idf)
        row_of = np.repeat(np.arange(len(terms)), np.diff(tf.indptr))
        f = tf.data
        dl = lengths[tf.indices]
        tf.data = idf[row_of] * (f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl)))
        index = cls(vocab=vocab, weights=tf, counts=counts, lengths=lengths,
                    term_max=np.maximum.reduceat(tf.data, tf.indptr[:-1]))
        index.quantize()
        return index

    def query_vector(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, ascending; counts) of the query tokens the index knows."""
        vocab = self.vocab
        counted: dict[int, int] = {}
        for t in tokens:
            i = vocab.get(t)
            if i is not None:
                counted[i] = counted.get(i, 0) + 1
        if not counted:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        ids = sorted(counted)
        return np.array(ids, dtype=np.int64), np.array([counted[i] for i in ids], dtype=np.float64)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Dense score vector over all chunks (0 for chunks sharing no term with the query)."""
        ids, counts = self.query_vector(tokens)
        out = np.zeros(self.n_chunks)
        if len(ids) == 0:
            return out
        # One sparse product: the query's rows of W, weighted by the query term counts.
        q = sparse.csr_matrix((counts, (np.zeros(len(ids), dtype=np.int64), ids)),
                              shape=(1, self.weights.shape[0]))
        prod = q @ self.weights
        out[prod.indices] = prod.data
        return out

    def top(self, tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
        """The k best (chunk positions, scores), best first, ties to the lower position:
        exactly `top_k(*matching(tokens), k)` restricted to the `allowed` chunks (a boolean
        mask; None: all), scores bit for bit, without scoring every matching chunk exactly.
        """
        ids, counts = self.query_vector(tokens)
        if len(ids) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if len(tokens) < _MAX_QUERY_TERMS:
            if self.impacts is None:
                self.quantize()
            mask = _NO_MASK if allowed is None else np.asarray(allowed, dtype=bool).view(np.uint8)
            positions, scores, done = _kernels()[1](*self._arrays(), self.impact_step, ids,
                                                    counts.astype(np.int64), self._term_max(), k, mask,
                                                    *_top_scratch(self.n_chunks))
            if done:
                return positions, scores
        # A query with a term whose idf is negative (or absurdly long): every chunk scored.
        positions, scores = self.matching(tokens)
        if allowed is not None:
            keep = np.asarray(allowed, dtype=bool)[positions]
            positions, scores = positions[keep], scores[keep]
        return top_k(positions, scores, k)

    def quantize(self) -> None:
        """Make the 16-bit impacts of `top` (and each term's largest weight, if not known)."""
        data = np.asarray(self.weights.data)
        if self.term_max is None or np.isnan(self.term_max).any():
            indptr = np.asarray(self.weights.indptr)
            self.term_max = np.full(len(indptr) - 1, -np.inf)
            rows = np.flatnonzero(np.diff(indptr))
            if len(rows):
                self.term_max[rows] = np.maximum.reduceat(data, indptr[rows])
        top = float(self.term_max.max()) if len(self.term_max) else 0.0
        step = top / 65535 if top > 0 else 1.0
        # A positive weight never becomes 0 (a chunk is touched iff its sum is positive);
        # a negative one is not used (a query with a negative term is scored exactly).
        impacts = np.clip(np.rint(data / step), 1, 65535).astype(np.uint16)
        impacts[data <= 0] = 0
        self.impacts, self.impact_step = impacts, step

    def matching(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(chunk positions, scores) of the chunks that contain at least one query term.

        Positions in the order the kernel first touched them (not sorted): callers rank them.
        """
        ids, counts = self.query_vector(tokens)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        scores, seen, touched, _ = _scratch(self.n_chunks)
        return _kernels()[0](*self._arrays()[:3], ids, counts, self._term_max(), scores, seen, touched)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """(indptr, indices, data, impacts) as plain ndarray views (the arrays may be
        memory-mapped, store.read_index), made once."""
        views = self.__dict__.get("_views")
        if views is None or views[0] is not self.weights or views[1] is not self.impacts:
            w = self.weights
            arrays = tuple(np.asarray(a).view(np.ndarray) for a in (w.indptr, w.indices, w.data))
            impacts = np.zeros(0, dtype=np.uint16) if self.impacts is None else np.asarray(self.impacts)
            views = self.__dict__["_views"] = (w, self.impacts, (*arrays, impacts.view(np.ndarray)))
        return views[2]

    def _term_max(self) -> np.ndarray:
        if self.term_max is None:
            self.term_max = np.full(self.weights.shape[0], np.nan)
        return self.term_max


_SCRATCH = threading.local()


_NO_MASK = np.zeros(0, dtype=np.uint8)
# Impact sums are int32: 65,535 x the query's term count must fit.
_MAX_QUERY_TERMS = 30_000
# What a binary search of a posting list costs, in postings walked (a rough guess).
_LOOKUP_COST = 32


def _top_scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """This thread's (impact sums, seen, chunk list, values) arrays of length >= n for `top`,
    made once: the kernel leaves the first two zeroed."""
    acc = getattr(_SCRATCH, "acc", None)
    if acc is None or len(acc) < n:
        _SCRATCH.acc, _SCRATCH.top_seen = np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.uint8)
        _SCRATCH.top_touched, _SCRATCH.top_values = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    return _SCRATCH.acc[:n], _SCRATCH.top_seen[:n], _SCRATCH.top_touched[:n], _SCRATCH.top_values[:n]


def _scratch(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """This thread's (scores, seen, touched, values) arrays of length >= n, made once and
    reused by every query: the kernels leave scores and seen zeroed; the other two are
    working space whose contents do not matter."""
    scores = getattr(_SCRATCH, "scores", None)
    if scores is None or len(scores) < n:
        _SCRATCH.scores, _SCRATCH.seen = np.zeros(n), np.zeros(n, dtype=np.uint8)
        _SCRATCH.touched, _SCRATCH.values = np.empty(n, dtype=np.int32), np.empty(n)
    return _SCRATCH.scores[:n], _SCRATCH.seen[:n], _SCRATCH.touched[:n], _SCRATCH.values[:n]


@cache
def _kernels():
    """The compiled walks (numba is imported and the kernels compiled on first use, cached
    on disk after that): (matching, top)."""
    from numba import njit

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
    def seek(indices, lo, hi, d):
        """The first position in the sorted indices[lo:hi] holding d or more (hi if none),
        by doubling steps from lo then bisection: cheap when d is near lo, as when a sorted
        list of chunks is looked up in turn."""
        step = 1
        while lo + step < hi and indices[lo + step] < d:
            lo += step
            step *= 2
        hi = min(hi, lo + step + 1)
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < d:
                lo = mid + 1
            else:
                hi = mid
        return lo

    @njit(cache=True, nogil=True)
    def find(indices, lo, hi, d):
        """The position of chunk d in the sorted indices[lo:hi], or -1."""
        p = seek(indices, lo, hi, d)
        return p if p < hi and indices[p] == d else -1

    @njit(cache=True, nogil=True)
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

    @njit(cache=True, nogil=True)
    def top(indptr, indices, data, impacts, step, ids, counts, term_max, k, allowed, acc, seen, touched, values):
        """(positions, scores, done): the k best, or done = False when the query has a
        negative term (the bounds do not hold: the caller scores it exactly)."""
        n = len(acc)
        nt = len(ids)
        order, bound = term_order(indptr, data, ids, counts, term_max)
        total = 0
        for j in range(nt):
            if bound[j] < 0:
                return np.empty(0, dtype=np.int64), np.empty(0), False
            total += counts[j]
        # Integer sums of the impacts are exact; each impact is within `step` of its weight
        # x 1/step, so a chunk's impact sum is within `slack` of its exact score / step
        # (with room for the float64 rounding of either side).
        slack = 2 * total + 2
        qmax = np.empty(nt, dtype=np.int64)
        rest = np.zeros(nt + 1, dtype=np.int64)  # rest[i]: the most terms order[i:] can add
        left = np.zeros(nt + 1, dtype=np.int64)  # left[i]: their postings
        for i in range(nt - 1, -1, -1):
            j = order[i]
            t = ids[j]
            qmax[j] = min(65535, int(term_max[t] / step) + 1)
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
            if tracking and i > 0 and k <= m <= left[i]:
                for x in range(m):
                    values[x] = acc[touched[x]]
                best = kth_largest(values, m, k)
                n_top = 0
                for x in range(m):
                    if acc[touched[x]] >= best:
                        n_top += 1
                if n_top * (nt - i) * _LOOKUP_COST <= left[i]:
                    complete = np.empty(n_top, dtype=np.int64)
                    n_top = 0
                    for x in range(m):
                        d = touched[x]
                        if acc[d] >= best:
                            complete[n_top] = acc[d]
                            for i2 in range(i, nt):
                                j = order[i2]
                                p = find(indices, indptr[ids[j]], indptr[ids[j] + 1], d)
                                if p >= 0:
                                    complete[n_top] += counts[j] * impacts[p]
                            n_top += 1
                    theta = kth_largest(complete, n_top, k)
                    if rest[i] + 2 * slack < theta:
                        n_cand = 0
                        for x in range(m):
                            if acc[touched[x]] + rest[i] + 2 * slack >= theta:
                                n_cand += 1
                        if n_cand * (nt - i) * _LOOKUP_COST <= left[i]:
                            stop = i
                            break
            j = order[i]
            c = counts[j]
            lo, hi = indptr[ids[j]], indptr[ids[j] + 1]
            if tracking and m + (hi - lo) > n // 4:
                tracking = False
            if tracking:
                for p in range(lo, hi):
                    d = indices[p]
                    if filtered and allowed[d] == 0:
                        continue
                    if seen[d] == 0:
                        seen[d] = 1
                        touched[m] = d
                        m += 1
                    acc[d] += c * impacts[p]
            elif filtered:
                for p in range(lo, hi):
                    d = indices[p]
                    if allowed[d] != 0:
                        acc[d] += c * impacts[p]
            else:
                for p in range(lo, hi):
                    acc[indices[p]] += c * impacts[p]
        if stop < nt:
            # The candidates: touched chunks whose partial sum plus the rest can reach theta;
            # touched[:n_cand] after this, sorted, and every other chunk reset.
            floor = theta - 2 * slack - rest[stop]
            n_cand = 0
            for x in range(m):
                d = touched[x]
                seen[d] = 0
                if acc[d] >= floor:
                    touched[n_cand] = d
                    n_cand += 1
                else:
                    acc[d] = 0
            m = n_cand
            touched[:m].sort()
            for i in range(stop, nt):
                j = order[i]
                c = counts[j]
                lo, hi = indptr[ids[j]], indptr[ids[j] + 1]
                if m * 20 < hi - lo:
                    for x in range(m):  # few candidates: searches, moving forward
                        lo = seek(indices, lo, hi, touched[x])
                        if lo < hi and indices[lo] == touched[x]:
                            acc[touched[x]] += c * impacts[lo]
                else:  # many: one merge of both sorted lists
                    x = 0
                    for p in range(lo, hi):
                        d = indices[p]
                        while x < m and touched[x] < d:
                            x += 1
                        if x == m:
                            break
                        if touched[x] == d:
                            acc[d] += c * impacts[p]
        else:
            for x in range(m):
                seen[touched[x]] = 0
        # The k-th best impact sum, and every chunk within 2 x slack of it (`near`, in
        # touched[:n_near], values[:n_near] their sums; all others are below k chunks for sure).
        heap = np.empty(k, dtype=np.int64)
        size = 0
        n_near = 0
        if tracking:
            for x in range(m):
                size = push(heap, size, k, acc[touched[x]])
            for x in range(m):
                d = touched[x]
                if acc[d] > 0 and acc[d] >= heap[0] - 2 * slack:
                    touched[n_near] = d
                    n_near += 1
                acc[d] = 0
        else:
            # Most chunks touched: one pass over all of them, keeping those that may still
            # be near the final k-th best (the heap's smallest only grows), and resetting them.
            for d in range(n):
                q = acc[d]
                if q != 0:
                    acc[d] = 0
                    size = push(heap, size, k, q)
                    if size < k or q >= heap[0] - 2 * slack:
                        touched[n_near] = d
                        values[n_near] = q
                        n_near += 1
            kept = 0
            for x in range(n_near):
                if values[x] >= heap[0] - 2 * slack:
                    touched[kept] = touched[x]
                    kept += 1
            n_near = kept
        # The near chunks scored exactly as `matching` sums (the same terms in the same
        # order), so the scores are its numbers bit for bit; best first, ties to the lower
        # position (near is sorted and mergesort is stable).
        near = np.sort(touched[:n_near])
        exact = np.zeros(n_near)
        for i in range(nt):
            j = order[i]
            c = counts[j]
            lo, hi = indptr[ids[j]], indptr[ids[j] + 1]
            for x in range(n_near):
                lo = seek(indices, lo, hi, near[x])
                if lo < hi and indices[lo] == near[x]:
                    exact[x] += c * data[lo]
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
        return positions, out, True

    return matching, top


def top_k(positions: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (position, score) pairs, best first; ties go to the lower position.

    A partial sort (argpartition) then a sort of just the k winners.
    """
    if k <= 0 or len(scores) == 0:
        return positions[:0], scores[:0]
    if len(scores) > k:
        # Include every entry tied with the k-th score so the tie-break below is exact.
        keep = np.flatnonzero(scores >= _kth_largest(scores, k))
        positions, scores = positions[keep], scores[keep]
    order = np.lexsort((positions, -scores))[:k]
    return positions[order], scores[order]


# A partial sort of a million scores costs milliseconds. On an array at least
# 4 x _SAMPLE_STRIDE x k long, every _SAMPLE_STRIDE-th score is sampled first to narrow it down.
_SAMPLE_STRIDE = 16


def _kth_largest(scores: np.ndarray, k: int) -> float:
    """The k-th largest of `scores` (len(scores) > k), exactly.

    The k-th largest of any subset is at most the k-th largest of the whole (the subset's
    k best are all in the whole), so it is a safe lower bound: every score above it stays,
    and only the survivors (about stride x k of them) are partially sorted.
    """
    if len(scores) >= 4 * _SAMPLE_STRIDE * k:
        sample = scores[::_SAMPLE_STRIDE]
        bound = np.partition(sample, len(sample) - k)[len(sample) - k]
        scores = scores[scores >= bound]
    return np.partition(scores, len(scores) - k)[len(scores) - k]
