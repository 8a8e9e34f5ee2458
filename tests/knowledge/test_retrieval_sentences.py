"""Sentence-level dense search over an index version's stored sentence vectors
(knowledge.retrieval.sentences), on a hand-made index: no model, no database."""

from __future__ import annotations

import numpy as np

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.sentences import top_sentence_chunks
from knowledge.retrieval.store import IndexData


def _index(sentences_per_chunk: list[list[list[float]]]) -> IndexData:
    n = len(sentences_per_chunk)
    rows = [np.asarray(v, dtype=np.float32) for chunk in sentences_per_chunk for v in chunk]
    offsets = np.cumsum([0] + [len(c) for c in sentences_per_chunk])
    return IndexData(
        chunk_ids=np.arange(100, 100 + n),
        document_ids=np.zeros(n, dtype=np.int64),
        is_reference=np.zeros(n, dtype=bool),
        bm25=BM25Index.build([["x"]] * n),
        vectors=np.zeros((n, 2), dtype=np.float32),
        sent_vectors=np.stack(rows) if rows else np.zeros((0, 2), dtype=np.float32),
        sent_offsets=offsets.astype(np.int64),
    )


def test_a_chunk_ranks_by_its_best_sentence_not_its_average():
    # Chunk 0: one sentence on the query among others; chunk 1: every sentence half on it.
    data = _index([[[1, 0], [0, 1], [0, 1]], [[0.6, 0.8], [0.6, 0.8]], []])
    found = top_sentence_chunks(data, np.array([1.0, 0.0]), k=5)
    assert [pos for pos, _ in found] == [0, 1]  # chunk 2 has no sentence vector: never found
    assert found[0][1] == 1.0 and abs(found[1][1] - 0.6) < 1e-6


def test_it_keeps_to_the_allowed_rows_and_to_k():
    data = _index([[[1, 0]], [[0.9, 0.1]], [[0.5, 0.5]]])
    query = np.array([1.0, 0.0])
    assert [pos for pos, _ in top_sentence_chunks(data, query, k=1)] == [0]
    allowed = np.array([False, True, True])
    assert [pos for pos, _ in top_sentence_chunks(data, query, k=5, allowed=allowed)] == [1, 2]
    assert top_sentence_chunks(data, query, k=0) == []


def test_a_version_of_several_segments_is_searched_as_one_without_its_deleted_rows():
    from knowledge.retrieval.segments import SegmentedIndex

    first = _index([[[1, 0]], [[0.9, 0.1], [0, 1]]])
    second = _index([[[0.95, 0.05]], [[0.5, 0.5]]])
    query = np.array([1.0, 0.0])

    whole = SegmentedIndex([first, second], np.zeros(4, dtype=bool), {})
    assert [pos for pos, _ in top_sentence_chunks(whole, query, k=4)] == [0, 2, 1, 3]
    # Row 0 deleted (its document re-ingested into the second segment): never found.
    masked = SegmentedIndex([first, second], np.array([True, False, False, False]), {})
    assert [pos for pos, _ in top_sentence_chunks(masked, query, k=4)] == [2, 1, 3]
    assert [pos for pos, _ in top_sentence_chunks(masked, query, k=4, allowed=np.array([1, 1, 0, 1], bool))] == [1, 3]
