"""Segments + delete mask (knowledge.retrieval.segments): searched as the one index of their live rows."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from knowledge.retrieval import merge, segments
from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.store import IndexData, write_index

DIM = 8


def _corpus(n: int, seed: int, *, vocab: int = 300) -> list[list[str]]:
    """Zipf-like token lists; some chunks repeated exactly (ties) and a few very common terms
    (in more than half the chunks: a negative idf, rank-bm25's epsilon floor)."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        if i > 5 and rng.random() < 0.05:
            docs.append(list(docs[int(rng.integers(0, i))]))
            continue
        words = [f"w{int(x)}" for x in rng.zipf(1.3, size=int(rng.integers(3, 30))) % vocab]
        if rng.random() < 0.7:
            words.append("common")
        docs.append(words)
    return docs


def _segment(tokens: list[list[str]], first_id: int, seed: int) -> IndexData:
    rng = np.random.default_rng(seed)
    n = len(tokens)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sentences = rng.integers(0, 3, size=n)
    sent = rng.normal(size=(int(sentences.sum()), DIM)).astype(np.float32)
    return IndexData(
        chunk_ids=np.arange(first_id, first_id + n, dtype=np.int64),
        document_ids=np.arange(first_id, first_id + n, dtype=np.int64) // 4,
        is_reference=rng.random(n) < 0.1,
        bm25=BM25Index.build(tokens),
        vectors=vectors,
        sent_vectors=sent / np.linalg.norm(sent, axis=1, keepdims=True),
        sent_offsets=np.concatenate([[0], np.cumsum(sentences)]).astype(np.int64),
    )


@pytest.fixture
def layout(tmp_path):
    """Three segments on disk (sizes 400, 37, 5), a version with some rows deleted in each,
    and the merged index of the live rows (what a merge writes)."""
    corpora = [_corpus(400, 1), _corpus(37, 2), _corpus(5, 3)]
    names, parts, first = [], [], 0
    for i, tokens in enumerate(corpora):
        data = _segment(tokens, first, seed=10 + i)
        first += len(tokens)
        names.append(f"s{i}")
        write_index(data, segments.segment_dir(tmp_path, f"s{i}"))
        parts.append(data)
    rng = np.random.default_rng(7)
    deleted = rng.random(first) < 0.08
    deleted[400:404] = True
    folder = segments.write_version(tmp_path / "3", segments=names, deleted=deleted, meta={"version": 3})
    loaded = segments.read_version(folder)
    assert isinstance(loaded, segments.SegmentedIndex)
    live_rows = [np.flatnonzero(~deleted[loaded.starts[i] : loaded.starts[i + 1]]) for i in range(3)]
    merged = merge.concat([merge.take(p, r) for p, r in zip(parts, live_rows, strict=True)], {})
    tokens = [t for c in corpora for t in c]
    live_tokens = [tokens[i] for i in np.flatnonzero(~deleted)]
    return loaded, merged, live_tokens, deleted


QUERIES = [
    ["w1"],
    ["w3", "w7"],
    ["w50", "w2", "w2"],
    ["common", "w5"],
    ["common"],
    ["w299", "zzz"],
    ["zzz"],
    ["w0", "w1", "w2", "w3", "w4", "w5", "w6"],
]


def test_it_scores_the_live_rows_like_the_merged_index_to_the_last_bit(layout):
    loaded, merged, _, deleted = layout
    live = np.flatnonzero(~deleted)
    for query in QUERIES:
        for k in (1, 5, 30, 1000):
            got_pos, got_scores = loaded.bm25.top(query, k)
            want_pos, want_scores = merged.bm25.top(query, k)
            # Merged position p is the p-th live row.
            assert np.array_equal(got_pos, live[want_pos]), (query, k)
            assert np.array_equal(got_scores, want_scores), (query, k)


@pytest.mark.parametrize("postings_at_once", [1 << 20, 37])
def test_the_first_stage_per_segment_answers_as_the_merged_index(layout, monkeypatch, postings_at_once):
    # Queries without the very common term (whose weight is negative here) take the MaxScore
    # first stage per segment, with impacts made from the live statistics (in slices of
    # whole terms' postings, here also small ones); with and without a filter, its answer
    # is the merged index's to the last bit.
    from knowledge.retrieval import segments_bm25

    monkeypatch.setattr(segments_bm25, "_SLICE", postings_at_once)
    loaded, merged, _, deleted = layout
    live = np.flatnonzero(~deleted)
    allowed = np.random.default_rng(4).random(len(deleted)) < 0.6
    fast = 0
    for query in [*QUERIES, ["w9", "w11", "w1"], ["w20", "w20", "w4"]]:
        counted = {t: query.count(t) for t in query}
        for k in (1, 3, 10, 200):
            for mask in (None, allowed):
                got = loaded.bm25._fast_top(counted, k, ~deleted if mask is None else mask & ~deleted)
                if got is None:
                    assert "common" in query
                    continue
                fast += 1
                want = merged.bm25.top(query, k, None if mask is None else mask[live])
                assert np.array_equal(got[0], live[want[0]]), (query, k)
                assert np.array_equal(got[1], want[1]), (query, k)
    assert fast >= 50


def test_it_scores_like_rank_bm25_on_the_live_rows(layout):
    loaded, _, live_tokens, deleted = layout
    live = np.flatnonzero(~deleted)
    reference = BM25Okapi(live_tokens)
    for query in QUERIES:
        want = reference.get_scores(query)
        pos, scores = loaded.bm25.top(query, len(live))
        got = np.zeros(len(live))
        got[np.searchsorted(live, pos)] = scores
        assert np.allclose(got, want, atol=1e-6), query


def test_it_masks_rows_by_document_and_never_returns_a_deleted_one(layout):
    loaded, _, _, deleted = layout
    assert loaded.rows_of(np.unique(loaded.document_ids)) is None
    # A document whose rows are all deleted is not needed for "every live row".
    assert loaded.rows_of(np.unique(loaded.document_ids[~deleted])) is None
    some = np.unique(loaded.document_ids)[::3]
    mask = loaded.rows_of(some)
    assert np.array_equal(mask, np.isin(loaded.document_ids, some) & ~deleted)


def test_it_never_returns_a_deleted_or_disallowed_row(layout):
    loaded, _, _, deleted = layout
    allowed = np.random.default_rng(3).random(len(deleted)) < 0.5
    for query in QUERIES:
        pos, _ = loaded.bm25.top(query, 1000, allowed)
        assert not deleted[pos].any() and allowed[pos].all()
    vector = np.asarray(loaded.vectors[[5]])[0]
    pos, _ = loaded.dense_top(vector, 1000, allowed)
    assert len(pos) == np.count_nonzero(allowed & ~deleted)
    assert not deleted[pos].any()


def test_hybrid_search_is_the_same_before_and_after_a_merge(layout):
    loaded, merged, _, deleted = layout
    live = np.flatnonzero(~deleted)
    rng = np.random.default_rng(5)
    for query in ("w1 w3", "common w5", "w2 w50 w7"):
        vector = rng.normal(size=DIM).astype(np.float32)
        vector /= np.linalg.norm(vector)
        for mode in ("bm25", "dense", "rrf", "minmax"):
            got = HybridSearcher(loaded).search(query, query_vector=vector, k=10, mode=mode)
            want = HybridSearcher(merged).search(query, query_vector=vector, k=10, mode=mode)
            assert [(h.chunk_id, h.position, h.score) for h in got] == [
                (h.chunk_id, int(live[h.position]), h.score) for h in want
            ], (query, mode)


def test_the_rerank_reads_the_same_vectors_through_the_segments(layout):
    from knowledge.retrieval.rerank import best_sentence_scores

    loaded, merged, _, deleted = layout
    live = np.flatnonzero(~deleted)
    vector = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    picks = [0, 3, 360, 375, 390, len(live) - 1]
    got = best_sentence_scores(loaded, [int(live[p]) for p in picks], vector)
    want = best_sentence_scores(merged, picks, vector)
    assert np.array_equal(got, want)


def test_a_version_of_one_whole_segment_loads_as_a_plain_index(tmp_path):
    write_index(_segment(_corpus(20, 4), 0, seed=1), segments.segment_dir(tmp_path, "a"))
    folder = segments.write_version(
        tmp_path / "1", segments=["a"], deleted=np.zeros(20, dtype=bool), meta={"version": 1}
    )
    loaded = segments.read_version(folder)
    assert isinstance(loaded, IndexData)
    assert loaded.meta["version"] == 1 and loaded.size == 20
