"""Fusion, rerankers and the index files, on hand-computed examples (no database, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.dense import dense_search, l2_normalize
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.fusion import Ranked, minmax, pool_size, rrf
from knowledge.retrieval.rerank import LLMReranker, SentenceReranker
from knowledge.retrieval.store import IndexData, read_index, write_index
from knowledge.retrieval.tokenize import tokenize


def _ranked(*pairs):
    return Ranked(np.array([p for p, _ in pairs]), np.array([s for _, s in pairs], dtype=float))


def test_rrf_matches_the_hand_computed_example():
    # bm25: 10, 20, 30 ; dense: 20, 40, 10
    results = {"bm25": _ranked((10, 9.0), (20, 7.0), (30, 1.0)),
               "dense": _ranked((20, 0.9), (40, 0.8), (10, 0.1))}
    fused = rrf(results)
    by_pos = {h.position: h for h in fused}
    # 20: 1/62 + 1/61 = 0.032522...; 10: 1/61 + 1/63 = 0.032266...; 40: 1/62; 30: 1/63
    assert by_pos[20].score == pytest.approx(1 / 62 + 1 / 61)
    assert by_pos[10].score == pytest.approx(1 / 61 + 1 / 63)
    assert [h.position for h in fused] == [20, 10, 40, 30]
    assert by_pos[20].ranks == {"bm25": 2, "dense": 1}
    assert by_pos[20].scores == {"bm25": 7.0, "dense": 0.9}
    assert by_pos[40].ranks == {"dense": 2}


def test_rrf_weights_each_retriever():
    results = {"bm25": _ranked((1, 5.0), (2, 4.0)), "dense": _ranked((2, 0.9), (1, 0.8))}
    # Equal weights tie (1/61 + 1/62 each), broken by position; bm25 x2 makes 1 win clearly.
    assert [h.position for h in rrf(results)] == [1, 2]
    weighted = rrf(results, weights={"bm25": 2.0, "dense": 1.0})
    assert weighted[0].position == 1
    assert weighted[0].score == pytest.approx(2 / 61 + 1 / 62)
    weighted = rrf(results, weights={"bm25": 1.0, "dense": 3.0})
    assert weighted[0].position == 2
    assert weighted[0].score == pytest.approx(1 / 62 + 3 / 61)


def test_minmax_matches_the_hand_computed_example():
    results = {"bm25": _ranked((1, 10.0), (2, 6.0), (3, 2.0)),
               "dense": _ranked((3, 0.9), (4, 0.7), (1, 0.5))}
    fused = {h.position: h.score for h in minmax(results, alpha=0.7)}
    # bm25 normalised: 1 -> 1, 2 -> 0.5, 3 -> 0 ; dense: 3 -> 1, 4 -> 0.5, 1 -> 0
    assert fused[1] == pytest.approx(0.3 * 1.0 + 0.7 * 0.0)
    assert fused[2] == pytest.approx(0.3 * 0.5)
    assert fused[3] == pytest.approx(0.7 * 1.0)
    assert fused[4] == pytest.approx(0.7 * 0.5)
    assert [h.position for h in minmax(results)] == [3, 4, 1, 2]


def test_minmax_counts_a_flat_pool_fully():
    results = {"bm25": _ranked((1, 3.0), (2, 3.0)), "dense": _ranked((2, 0.5))}
    fused = {h.position: h.score for h in minmax(results)}
    assert fused == {1: pytest.approx(0.3), 2: pytest.approx(1.0)}


def test_pool_size_is_three_times_k_but_at_least_twenty():
    assert [pool_size(k) for k in (1, 5, 7, 10, 100)] == [20, 20, 21, 30, 300]


def _tiny_index() -> IndexData:
    texts = ["cats sleep all day", "dogs bark at night", "references: Smith 2020 cats", "birds sing"]
    vectors = l2_normalize(np.array([[1, 0, 0], [0, 1, 0], [0.9, 0.1, 0], [0, 0, 1]], dtype=np.float32))
    # Sentences: chunk 0 has two, chunk 1 none (falls back to its chunk vector), 2 and 3 one each.
    sentences = l2_normalize(np.array([[0, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float32))
    return IndexData(
        chunk_ids=np.array([100, 101, 102, 103]), document_ids=np.array([1, 1, 2, 3]),
        is_reference=np.array([False, False, True, False]),
        bm25=BM25Index.build(tokenize(t) for t in texts), vectors=vectors,
        sent_vectors=sentences, sent_offsets=np.array([0, 2, 2, 3, 4]),
    )


def test_it_down_weights_reference_chunks_in_fused_rankings_only():
    data = _tiny_index()
    query = np.array([1, 0, 0], dtype=np.float32)
    plain = HybridSearcher(data, reference_weight=1.0).search("cats", query_vector=query, k=4, mode="rrf")
    weighted = HybridSearcher(data, reference_weight=0.8).search("cats", query_vector=query, k=4, mode="rrf")
    ref_plain = next(h for h in plain if h.chunk_id == 102)
    ref_weighted = next(h for h in weighted if h.chunk_id == 102)
    assert ref_weighted.score == pytest.approx(0.8 * ref_plain.score)
    # "cat" is in half the chunks, so its BM25 idf is 0 and only dense ranks: 100, 102, 101, 103.
    # RRF: 1/61, 1/62, 1/63, 1/64; the reference chunk's 0.8/62 falls below 1/64.
    assert [h.chunk_id for h in plain] == [100, 102, 101, 103]
    assert [h.chunk_id for h in weighted] == [100, 101, 103, 102]
    bm25_only = HybridSearcher(data).search("smith", k=2, mode="bm25")
    assert [h.chunk_id for h in bm25_only] == [102]
    assert bm25_only[0].score == pytest.approx(float(data.bm25.scores(["smith"])[2]))


def test_it_restricts_search_to_allowed_rows():
    data = _tiny_index()
    searcher = HybridSearcher(data)
    allowed = np.array([False, True, False, True])
    for mode in ("bm25", "dense", "rrf", "minmax"):
        hits = searcher.search("cats dogs birds", query_vector=np.array([1, 0, 0], dtype=np.float32), k=4,
                               mode=mode, allowed=allowed)
        assert {h.chunk_id for h in hits} <= {101, 103}, mode
    positions, _ = dense_search(data.vectors, np.array([1, 0, 0], dtype=np.float32), 2, allowed)
    assert positions.tolist() == [1, 3] or positions.tolist() == [3, 1]


def test_it_turns_a_set_of_documents_into_a_row_mask():
    data = _tiny_index()  # rows belong to documents 1, 1, 2, 3
    assert data.rows_of(np.array([3, 1])).tolist() == [True, True, False, True]
    assert data.rows_of(np.array([], dtype=np.int64)).tolist() == [False] * 4
    assert data.rows_of(np.array([1, 2, 3, 99])) is None, "every row allowed: no mask at all"


def test_sentence_reranker_scores_a_chunk_by_its_best_sentence():
    data = _tiny_index()
    searcher = HybridSearcher(data, reference_weight=1.0)
    query = np.array([0, 1, 0], dtype=np.float32)
    # Chunk 0's vector points at x, but one of its sentences points at y like the query.
    hits = searcher.search("cats dogs", query_vector=query, k=3, mode="rrf", reranker=SentenceReranker(beta=1.0))
    assert hits[0].chunk_id in (100, 101)
    by_id = {h.chunk_id: h for h in hits}
    assert by_id[100].scores["sentence"] == pytest.approx(1.0)
    assert by_id[101].scores["sentence"] == pytest.approx(1.0)  # fallback: its chunk vector
    assert "sentence" in by_id[100].ranks and "rrf" not in by_id[100].ranks


def test_llm_reranker_orders_by_the_models_grades():
    data = _tiny_index()
    texts = {0: "cats sleep all day", 1: "dogs bark at night", 2: "refs", 3: "birds sing"}
    seen = {}

    def grade(query, passages):
        seen["passages"] = passages
        return [9.0 if "bark" in p else 1.0 for p in passages]

    hits = HybridSearcher(data).search("cats", query_vector=np.array([1, 0, 0], dtype=np.float32), k=3,
                                       mode="rrf", reranker=LLMReranker(grade, texts.__getitem__))
    assert hits[0].chunk_id == 101
    assert hits[0].scores["llm"] == 9.0 and hits[0].ranks["llm"] == 1
    assert "dogs bark at night" in seen["passages"]

    with pytest.raises(ValueError, match="scored"):
        HybridSearcher(data).search("cats", query_vector=np.array([1, 0, 0], dtype=np.float32), k=3,
                                    reranker=LLMReranker(lambda q, p: [1.0], texts.__getitem__))


def test_index_files_round_trip(tmp_path):
    data = _tiny_index()
    write_index(data, tmp_path / "7")
    loaded = read_index(tmp_path / "7")
    assert loaded.chunk_ids.tolist() == [100, 101, 102, 103]
    assert loaded.is_reference.tolist() == [False, False, True, False]
    np.testing.assert_array_equal(np.asarray(loaded.vectors), data.vectors)
    np.testing.assert_allclose(loaded.bm25.scores(["cat"]), data.bm25.scores(["cat"]))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
