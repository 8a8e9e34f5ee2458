"""BM25 Okapi as a sparse matrix of precomputed term weights.

The scores are exactly rank-bm25's `BM25Okapi` (k1=1.5, b=0.75, epsilon=0.25) for the same
token lists: idf = ln(N - n + 0.5) - ln(n + 0.5), and a term whose idf is negative (it is
in more than half the chunks) gets epsilon * mean(idf) instead. Because the weight of a
(term, chunk) pair does not depend on the query, it is computed once at build time:

    W[t, d] = idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avgdl))

and a query is one sparse product, scores = q @ W, where q counts the query's terms
(rank-bm25 adds a repeated query term twice, so do we).
W is stored term-major (CSR, one row per term) so a query only touches its terms' rows.

`matching` walks those rows in a compiled kernel (numba, `_kernel`): each posting adds
count x weight into a per-thread scratch array of chunk scores and notes the chunk the
first time it is touched; the touched chunks' scores are then read out and the scratch
reset, so a query costs its postings and nothing proportional to the collection. The same
products summed in the same order (query terms by id) as the sparse product it replaces,
so the scores are the same numbers. Profiled at 100k chunks, the sparse product spent about
a third of its time building scipy objects and ran two passes over the postings (one to
size the output, one to fill it); bm25s's numba backend was 2.9x faster (issue 19).
numba (with llvmlite, about 45 MB installed) is the well-kept way to compile such a loop
without a C toolchain; the kernel is compiled on first use and cached on disk.
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
        return cls(vocab=vocab, weights=tf, counts=counts, lengths=lengths)

    def query_vector(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, counts) of the query tokens the index knows."""
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        uniq, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        return uniq, counts.astype(np.float64)

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

    def matching(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(chunk positions, scores) of the chunks that contain at least one query term.

        Positions in the order the kernel first touched them (not sorted): callers rank them.
        """
        ids, counts = self.query_vector(tokens)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        w = self.weights
        scores, seen = _scratch(self.n_chunks)
        # Plain ndarray views: the arrays may be memory-mapped (store.read_index).
        arrays = [np.asarray(a).view(np.ndarray) for a in (w.indptr, w.indices, w.data)]
        return _kernel()(*arrays, ids, counts, scores, seen)


_SCRATCH = threading.local()


def _scratch(n: int) -> tuple[np.ndarray, np.ndarray]:
    """This thread's zeroed (scores, seen) arrays of length >= n (the kernel leaves them zeroed)."""
    scores = getattr(_SCRATCH, "scores", None)
    if scores is None or len(scores) < n:
        _SCRATCH.scores, _SCRATCH.seen = np.zeros(n), np.zeros(n, dtype=np.uint8)
    return _SCRATCH.scores, _SCRATCH.seen


@cache
def _kernel():
    """The compiled postings walk (numba is imported and the kernel compiled on first use,
    cached on disk after that)."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def accumulate(indptr, indices, data, ids, counts, scores, seen):
        total = 0
        for j in range(len(ids)):
            total += indptr[ids[j] + 1] - indptr[ids[j]]
        touched = np.empty(total, dtype=np.int64)
        m = 0
        for j in range(len(ids)):
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
        positions = np.empty(m, dtype=np.int64)
        values = np.empty(m)
        kept = 0
        for i in range(m):
            d = touched[i]
            if scores[d] != 0.0:
                positions[kept] = d
                values[kept] = scores[d]
                kept += 1
            scores[d] = 0.0
            seen[d] = 0
        return positions[:kept].copy(), values[:kept].copy()

    return accumulate


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
