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
(numba, knowledge/retrieval/bm25_kernels.py): 8-bit integer impacts (each weight as a
multiple of a per-term step, so impact sums are within a known bound of the exact scores) walked
rare terms first, with MaxScore skipping of the long common-term lists once the k-th best
complete sum proves that no chunk not yet touched can reach the top k; then every chunk
within the bound of the k-th best is rescored from the float64 weights, summed as
`matching` sums. The walk reads the chunk ids compressed (knowledge/retrieval/
bm25_postings.py: about 1.4 bytes a posting instead of 4), never the int32 `weights.indices`.
The result is `top_k(*matching(tokens), k)` bit for bit
(docs/retrieval.md). `matching` scores every chunk that holds a query term: each posting
adds count x weight into a scratch array (lent per search), the touched chunks are read out and
the scratch reset. Both add a chunk's terms in the same order (by decreasing bound), a
different order from the sparse product `scores`, so the three agree to about 1e-15, `top`
and `matching` to the last bit. Issue 19: at 100k chunks bm25s's numba backend was 2.9x
faster than the walk of every match; the MaxScore first stage is what beats it
(docs/benchmarks.md). numba (with llvmlite, about 45 MB installed) is the well-kept way to
compile such loops without a C toolchain; the kernels are compiled on first use and cached
on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from scipy import sparse

from knowledge.retrieval import reads
from knowledge.retrieval.bm25_kernels import MAX_QUERY_TERMS, NO_MASK, kernels, scratch, top_scratch
from knowledge.retrieval.bm25_postings import encode

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
    # The first stage of `top`: each weight of term t as an 8-bit integer multiple of
    # impact_step x impact_mult[t] (aligned with weights.data; made on first use when not
    # stored). An index written before the multipliers has 16-bit impacts and no
    # multipliers (all 1), which the kernel reads alike.
    impacts: np.ndarray | None = None
    impact_step: float = 0.0
    impact_mult: np.ndarray | None = None
    # Per term, the largest |impact x mult - weight / impact_step| over its postings,
    # rounded up (about mult / 2): what the kernel allows for the rounding (1 where unknown).
    impact_error: np.ndarray | None = None
    # The first stage's chunk ids, compressed (knowledge.retrieval.bm25_postings): (skip_ptr,
    # skip_doc, skip_off, gaps); made on first use when not stored. `top` reads these, never
    # weights.indices (four bytes a posting), which only `matching` and merging read.
    postings: tuple[np.ndarray, ...] | None = None

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
        index.postings = encode(tf.indptr, tf.indices)
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
        if len(tokens) < MAX_QUERY_TERMS:
            mask = NO_MASK if allowed is None else np.asarray(allowed, dtype=bool).view(np.uint8)
            with top_scratch(self.n_chunks) as arrays:
                near, where, ordered_counts, done = kernels()[1](*self._first_stage(), self.impact_step, ids,
                                                                 counts.astype(np.int64), self._term_max(), k, mask,
                                                                 *arrays)
            if done:
                return kernels()[2](near, where, self._weights_at(where), ordered_counts, k)
        # A query with a term whose idf is negative (or absurdly long): every chunk scored.
        positions, scores = self.matching(tokens)
        if allowed is not None:
            keep = np.asarray(allowed, dtype=bool)[positions]
            positions, scores = positions[keep], scores[keep]
        return top_k(positions, scores, k)

    def quantize(self) -> None:
        """Make the 8-bit impacts of `top` (and each term's largest weight, if not known).

        One fine step for the index (the largest weight / 65535) and, per term, the smallest
        whole multiple of it that puts the term's largest weight within 255 of them: impact
        = rint(weight / (step x mult)), so impact x mult is the weight in fine steps, within
        mult of them. A common term's weights are small (a low idf), so its multiplier is 1 or
        a few and its impacts as exact as 16-bit ones were; only rare terms, whose lists are
        short, get coarse ones. The impacts are half the size of 16-bit ones (at 1M chunks 55
        MB of the loaded index instead of 110, docs/benchmarks.md), and the kernel adds
        count x mult x impact, an integer as before.
        """
        data = np.asarray(self.weights.data)
        indptr = np.asarray(self.weights.indptr)
        if self.term_max is None or np.isnan(self.term_max).any():
            self.term_max = np.full(len(indptr) - 1, -np.inf)
            rows = np.flatnonzero(np.diff(indptr))
            if len(rows):
                self.term_max[rows] = np.maximum.reduceat(data, indptr[rows])
        top = float(self.term_max.max()) if len(self.term_max) else 0.0
        step = top / 65535 if top > 0 else 1.0
        mult = np.maximum(1, np.ceil(np.maximum(self.term_max, 0) / (255 * step))).astype(np.int64)
        impacts = np.zeros(len(data), dtype=np.uint8)
        error = np.ones(len(mult), dtype=np.int64)
        # In slices of whole terms (about 1M postings each), so the temporaries stay small.
        cuts = np.searchsorted(indptr, np.arange(0, len(data), 1 << 20), side="right") - 1
        for t0, t1 in pairwise([*cuts.tolist(), len(indptr) - 1]):
            a, b = int(indptr[t0]), int(indptr[t1])
            if b <= a:
                continue
            here = data[a:b]
            scale = np.repeat(step * mult[t0:t1], np.diff(indptr[t0 : t1 + 1]))
            # A positive weight never becomes 0 (a chunk is touched iff its sum is positive);
            # a negative one is not used (a query with a negative term is scored exactly).
            impacts[a:b] = np.clip(np.rint(here / scale), 1, 255)
            impacts[a:b][here <= 0] = 0
            # The rounding measured, not assumed (as the dense codes' error): per term, the
            # largest |impact x mult - weight / step|, rounded up, plus 1 for the float64
            # arithmetic of this measurement.
            off = np.abs(impacts[a:b] * scale - here) / step
            rows = np.flatnonzero(np.diff(indptr[t0 : t1 + 1]))
            error[t0 + rows] = np.ceil(np.maximum.reduceat(off, indptr[t0 + rows] - a)).astype(np.int64) + 1
        self.impacts, self.impact_step, self.impact_mult, self.impact_error = impacts, step, mult, error

    def matching(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(chunk positions, scores) of the chunks that contain at least one query term.

        Positions in the order the kernel first touched them (not sorted): callers rank them.
        """
        ids, counts = self.query_vector(tokens)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        with scratch(self.n_chunks) as arrays:
            return kernels()[0](*self._arrays(), ids, counts, self._term_max(), *arrays)

    def _weights_at(self, where: np.ndarray) -> np.ndarray:
        """weights.data[where] (any value where -1: `finish` skips those), read with pread when
        the weights are memory-mapped: through the mapping, each read would map the 64 KB
        around it, and after a few hundred searches the whole float64 file was resident
        (knowledge.retrieval.reads). Each weight is read once (`gather`)."""
        positions, slot = kernels()[3](where)
        if len(positions) == 0:
            return np.zeros(where.shape)
        return reads.take(self.weights.data, positions)[slot]

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """(indptr, indices, data) as plain ndarray views (the arrays may be memory-mapped,
        store.read_index), made once."""
        views = self.__dict__.get("_views")
        if views is None or views[0] is not self.weights:
            w = self.weights
            views = self.__dict__["_views"] = (w, tuple(np.asarray(a).view(np.ndarray)
                                                        for a in (w.indptr, w.indices, w.data)))
        return views[1]

    def _first_stage(self) -> tuple[np.ndarray, ...]:
        """`top`'s arrays: (indptr, skip_ptr, skip_doc, skip_off, gaps, data, impacts, their
        multipliers and rounding errors), the impacts and compressed chunk ids made now if not stored."""
        if self.impacts is None:
            self.quantize()
        if self.postings is None:
            self.postings = encode(self.weights.indptr, self.weights.indices)
        if self.impact_mult is None:  # 16-bit impacts of an older index: all multipliers 1
            self.impact_mult = np.ones(self.weights.shape[0], dtype=np.int64)
        if self.impact_error is None:  # each impact within one step of its weight
            self.impact_error = np.ones(self.weights.shape[0], dtype=np.int64)
        views = self.__dict__.get("_stage")
        if views is None or views[0] is not self.impacts or views[1] is not self.postings:
            indptr, _, data = self._arrays()
            arrays = tuple(np.asarray(a).view(np.ndarray) for a in (*self.postings, self.impacts))
            mult = np.asarray(self.impact_mult, dtype=np.int64)
            error = np.asarray(self.impact_error, dtype=np.int64)
            views = self.__dict__["_stage"] = (self.impacts, self.postings,
                                               (indptr, *arrays[:4], data, arrays[4], mult, error))
        return views[2]

    def _term_max(self) -> np.ndarray:
        if self.term_max is None:
            self.term_max = np.full(self.weights.shape[0], np.nan)
        return self.term_max


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
