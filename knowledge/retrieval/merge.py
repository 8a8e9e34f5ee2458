"""Folding index segments into one: what the background merge (knowledge.indexing.merge) writes.

- `take(data, rows)`: the given rows of a segment (its live rows), their vectors, sentence
  vectors and BM25 term counts gathered, not recomputed;
- `concat(parts)`: one index over all the parts' rows in order.

BM25 weights depend on the whole corpus (idf, average length), so `concat` recomputes
them from the stored term counts (`BM25Index.from_counts`): array work over the postings,
with the canonical (sorted) vocabulary, so the result is bit-identical to indexing the same
chunks at once, and its scores are those a segmented version gives before the merge
(knowledge.retrieval.segments; tests/knowledge/test_retrieval_segments.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.store import IndexData


def _gather_ranges(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sentence rows of `rows` in order, the new offsets) for chunk-owned sentence ranges."""
    starts, stops = offsets[rows], offsets[rows + 1]
    sizes = stops - starts
    new_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    # For each output sentence: its chunk's start plus its place within the chunk.
    owner = np.repeat(np.arange(len(rows)), sizes)
    within = np.arange(int(new_offsets[-1]), dtype=np.int64) - new_offsets[:-1][owner]
    return starts[owner] + within, new_offsets


def take(data: IndexData, rows: np.ndarray) -> IndexData:
    """The index restricted to `rows` (positions, in the order given).

    The BM25 part keeps the counts only: its weights are made by `concat`.
    """
    rows = np.asarray(rows, dtype=np.int64)
    sentences, offsets = _gather_ranges(np.asarray(data.sent_offsets), rows)
    counts = data.bm25.count_matrix()[:, rows]
    return IndexData(
        chunk_ids=np.asarray(data.chunk_ids)[rows],
        document_ids=np.asarray(data.document_ids)[rows],
        is_reference=np.asarray(data.is_reference)[rows],
        bm25=BM25Index(vocab=data.bm25.vocab, weights=counts, counts=counts.data,
                       lengths=np.asarray(data.bm25.lengths)[rows]),
        vectors=np.asarray(data.vectors[rows]),
        sent_vectors=np.asarray(data.sent_vectors[sentences]),
        sent_offsets=offsets,
        meta=dict(data.meta),
    )


def _counts_in(vocab: dict[str, int], part: BM25Index) -> sparse.csr_matrix:
    """`part`'s count matrix with its rows renumbered into `vocab` (new terms are added to it)."""
    ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in sorted(part.vocab, key=part.vocab.get)),
                      dtype=np.int64, count=len(part.vocab))
    coo = part.count_matrix().tocoo()
    return sparse.coo_matrix((coo.data, (ids[coo.row], coo.col)), shape=(len(vocab), coo.shape[1]))


def concat(parts: Sequence[IndexData], meta: dict) -> IndexData:
    """One index over the rows of `parts`, in order, with BM25 weights for the whole."""
    vocab: dict[str, int] = {}
    blocks = [_counts_in(vocab, p.bm25) for p in parts]
    n_terms = len(vocab)
    tf = sparse.hstack([sparse.coo_matrix((b.data, (b.row, b.col)), shape=(n_terms, b.shape[1]))
                        for b in blocks], format="csr")
    sent_offsets, base = [np.zeros(1, dtype=np.int64)], 0
    for p in parts:
        sent_offsets.append(np.asarray(p.sent_offsets[1:], dtype=np.int64) + base)
        base += int(p.sent_offsets[-1])
    return IndexData(
        chunk_ids=np.concatenate([np.asarray(p.chunk_ids, dtype=np.int64) for p in parts]),
        document_ids=np.concatenate([np.asarray(p.document_ids, dtype=np.int64) for p in parts]),
        is_reference=np.concatenate([np.asarray(p.is_reference, dtype=bool) for p in parts]),
        bm25=BM25Index.from_counts(tf, vocab, np.concatenate([np.asarray(p.bm25.lengths) for p in parts])),
        vectors=np.concatenate([np.asarray(p.vectors, dtype=np.float32) for p in parts]),
        sent_vectors=np.concatenate([np.asarray(p.sent_vectors, dtype=np.float32) for p in parts]),
        sent_offsets=np.concatenate(sent_offsets),
        meta=meta,
    )
