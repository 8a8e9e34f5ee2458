"""Search on the shared thread pool ranks exactly as one thread does.

The indexes here are just above PARALLEL_MIN_ROWS (the size where the pool starts being
used) but low-dimensional, so they build in about a second.
"""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import pytest

from knowledge.retrieval import dense, engine, parallel
from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.dense import dense_search, l2_normalize
from knowledge.retrieval.dense_exact import PARALLEL_MIN_ROWS
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.store import IndexData

ROWS = PARALLEL_MIN_ROWS + 1_000
DIM = 8


@pytest.fixture(scope="module")
def matrix() -> np.ndarray:
    rng = np.random.default_rng(7)
    vectors = l2_normalize(rng.standard_normal((ROWS, DIM), dtype=np.float32))
    # Exact ties that straddle block boundaries: the lower position must win, as in one product.
    vectors[ROWS - 5] = vectors[3] = vectors[ROWS // 2] = l2_normalize(np.ones(DIM, dtype=np.float32))
    return vectors


@pytest.fixture(scope="module")
def index(matrix: np.ndarray) -> IndexData:
    rng = np.random.default_rng(8)
    vocab = {f"w{i}": i for i in range(2_000)}
    docs = [rng.integers(0, len(vocab), size=int(n)) for n in rng.integers(3, 12, size=ROWS)]
    return IndexData(chunk_ids=np.arange(ROWS) + 1, document_ids=np.arange(ROWS) // 10,
                     is_reference=np.zeros(ROWS, dtype=bool), bm25=BM25Index.from_term_ids(docs, vocab),
                     vectors=matrix, sent_vectors=np.zeros((0, DIM), dtype=np.float32),
                     sent_offsets=np.zeros(ROWS + 1, dtype=np.int64))


@pytest.mark.parametrize("threads", [2, 3])
def test_dense_search_in_blocks_ranks_exactly_as_one_product(matrix, threads):
    rng = np.random.default_rng(threads)
    queries = [l2_normalize(np.ones(DIM, dtype=np.float32)),
               *l2_normalize(rng.standard_normal((5, DIM), dtype=np.float32))]
    for query in queries:
        one_pos, one_scores = dense_search(matrix, query, 60)
        pos, scores = dense_search(matrix, query, 60, threads=threads)
        np.testing.assert_array_equal(pos, one_pos)
        np.testing.assert_allclose(scores, one_scores, rtol=0, atol=1e-6)
    tied, _ = dense_search(matrix, queries[0], 3, threads=threads)
    assert tied.tolist() == [3, ROWS // 2, ROWS - 5]


def test_dense_search_in_blocks_keeps_to_the_allowed_rows(matrix):
    allowed = np.zeros(ROWS, dtype=bool)
    allowed[ROWS - 100:] = True
    allowed[10] = True
    query = matrix[10]
    pos, _ = dense_search(matrix, query, 200, allowed, threads=2)
    assert pos[0] == 10
    assert set(pos.tolist()) == set(np.flatnonzero(allowed).tolist())
    one_pos, _ = dense_search(matrix, query, 200, allowed)
    np.testing.assert_array_equal(pos, one_pos)


def test_the_blocks_run_on_the_search_pool(matrix, monkeypatch):
    seen: set[str] = set()

    def recording(block):
        def run(*args):
            seen.add(threading.current_thread().name)
            return block(*args)
        return run

    # Large matrices take faiss's block, small ones numpy's (dense.NUMPY_MAX_ROWS): record both.
    for name in ("_flat_block", "_numpy_block"):
        monkeypatch.setattr(dense, name, recording(getattr(dense, name)))
    dense_search(matrix, matrix[0], 10, threads=2)
    assert seen and all(name.startswith("search") for name in seen)
    seen.clear()
    dense_search(matrix[:1000], matrix[0], 10, threads=2)
    assert seen == {threading.current_thread().name}, "a small matrix is not worth the pool"


@pytest.mark.parametrize("mode", ["rrf", "minmax", "dense", "bm25"])
def test_hybrid_search_on_the_pool_matches_one_thread(index, mode, monkeypatch):
    # As if every core were free, so the pool is used whatever else runs on this machine.
    monkeypatch.setattr(engine, "search_threads", lambda limit: limit)
    single, pooled = HybridSearcher(index), HybridSearcher(index, threads=2)
    rng = np.random.default_rng(3)
    for _ in range(5):
        query = " ".join(f"w{t}" for t in rng.integers(0, 2_000, size=3))
        vector = l2_normalize(rng.standard_normal(DIM, dtype=np.float32))
        expected = single.search(query, query_vector=vector, k=10, mode=mode)
        got = pooled.search(query, query_vector=vector, k=10, mode=mode)
        assert [h.chunk_id for h in got] == [h.chunk_id for h in expected]
        assert [h.ranks for h in got] == [h.ranks for h in expected]
        assert [list(h.ranks) for h in got] == [list(h.ranks) for h in expected], "same retriever order"


def _search_in_child(matrix: np.ndarray, out: multiprocessing.Queue) -> None:
    out.put(dense_search(matrix, matrix[1], 5, threads=2)[0].tolist())


def test_a_forked_child_makes_its_own_pool(matrix):
    # The parent's pool threads do not exist in a forked child (a Celery prefork worker);
    # reusing the parent's executor there would wait forever.
    dense_search(matrix, matrix[1], 5, threads=2)
    assert 2 in parallel._POOLS
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_search_in_child, args=(matrix, out))
    child.start()
    child.join(timeout=30)
    if child.is_alive():
        child.kill()
        pytest.fail("the search in the forked child never finished")
    assert child.exitcode == 0
    assert out.get(timeout=5)[0] == 1


@pytest.mark.parametrize(("runnable", "cores", "expected"), [(1, 2, 2), (2, 2, 1), (9, 2, 1), (2, 8, 4), (3, 4, 2)])
def test_search_threads_are_the_free_cores(tmp_path, monkeypatch, runnable, cores, expected):
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"3.10 2.80 2.50 {runnable}/412 9999\n")
    monkeypatch.setattr(dense.os, "cpu_count", lambda: cores)
    # The count includes the searching thread itself; at most the configured 4.
    assert dense.search_threads(4, loadavg=str(loadavg)) == expected
    assert dense.search_threads(1, loadavg=str(loadavg)) == 1


def test_search_threads_fall_back_to_the_limit_without_a_count(tmp_path):
    assert dense.search_threads(3, loadavg=str(tmp_path / "missing")) == 3
