"""Dense search through a fast first stage returns exactly the top k of rescoring every row.

Real embeddings (the local all-MiniLM-L6-v2 int8 model) of chunks of real papers and of
SciFact abstract sentences, each row also tiled with small noise so that many rows are
near-duplicates of each other: the hard case for an 8-bit first stage, whose candidates
then differ from the exact winners by less than its rounding error.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from knowledge.retrieval import dense, dense_exact, dense_sq8
from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.dense import dense_search, l2_normalize
from knowledge.retrieval.dense_exact import _exact_all
from knowledge.retrieval.dense_sq8 import SQ8_MIN_ROWS, SQ8Blocks
from knowledge.retrieval.store import IndexData, read_index, write_index
from tests.conftest import shared_path
from tests.knowledge.paper_chunks import paper_chunks

PAPERS = ("1908.10084v1_sentence_bert", "2307.03172v3_lost_in_the_middle", "2104.08663_beir_neurips2021")
# Written for these tests: short questions of the kind a reader asks about those papers.
QUESTIONS = (
    "how are sentence embeddings trained with siamese networks",
    "does the position of the relevant passage in a long context change accuracy",
    "which zero-shot retrieval datasets are in the benchmark",
    "lexical baseline compared with dense retrievers",
    "cosine similarity between two sentence vectors",
)
COPIES = 40


def _tiled(vectors: np.ndarray, copies: int, seed: int) -> np.ndarray:
    """Each row `copies` times with noise of about 1% of its norm, renormalised; plus exact duplicates."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((copies, *vectors.shape), dtype=np.float32) * (
        0.01 / np.sqrt(vectors.shape[1])
    )
    tiled = l2_normalize((vectors[None] + noise).reshape(-1, vectors.shape[1]))
    tiled[1::97] = tiled[0]  # exact ties, across block boundaries: the lower position must win
    return tiled


@pytest.fixture(scope="module")
def embedder():
    from knowledge.embeddings import get_embedder

    return get_embedder("local")


@pytest.fixture(scope="module")
def papers(embedder) -> tuple[np.ndarray, np.ndarray]:
    # Short windows of words, at most 40 per paper: quick to embed, still real prose.
    chunks = [c for name in PAPERS for c in paper_chunks(name, words=40, stride=200)[:40]]
    vectors = embedder.embed(chunks)
    queries = np.concatenate([embedder.embed(list(QUESTIONS)), vectors[::12]])
    return _tiled(vectors, COPIES, 1), queries


@pytest.fixture(scope="module")
def scifact(embedder) -> tuple[np.ndarray, np.ndarray]:
    corpus = shared_path("scifact", "beir", "corpus.jsonl")
    queries = shared_path("scifact", "beir", "queries.jsonl")
    sentences: list[str] = []
    with corpus.open() as f:
        for line, _ in zip(f, range(25), strict=False):
            text = json.loads(line)["text"]
            sentences += [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 20]
    with queries.open() as f:
        claims = [json.loads(line)["text"] for line, _ in zip(f, range(10), strict=False)]
    return _tiled(embedder.embed(sentences), COPIES, 2), embedder.embed(claims)


def _assert_exact(matrix: np.ndarray, queries: np.ndarray, k: int, **kwargs) -> None:
    rng = np.random.default_rng(5)
    for i, query in enumerate(queries):
        allowed = None if i % 3 else rng.random(len(matrix)) < 0.05
        expected_pos, expected_scores = _exact_all(matrix, query, k, allowed)
        positions, scores = dense_search(matrix, query, k, allowed, **kwargs)
        # recall@k = 1.0 and the same order; the scores are the very same numbers.
        np.testing.assert_array_equal(positions, expected_pos)
        np.testing.assert_array_equal(scores, expected_scores)


@pytest.mark.parametrize("k", [10, 30])
def test_sq8_first_stage_with_rescoring_is_exact_on_real_paper_vectors(papers, k):
    matrix, queries = papers
    _assert_exact(matrix, queries, k, sq8=SQ8Blocks.build(matrix))


@pytest.mark.parametrize("k", [10, 30])
def test_sq8_first_stage_with_rescoring_is_exact_on_scifact_sentences(scifact, k):
    matrix, queries = scifact
    _assert_exact(matrix, queries, k, sq8=SQ8Blocks.build(matrix))


@pytest.mark.parametrize("first_stage", ["numpy", "faiss"])
def test_float32_first_stage_with_rescoring_is_exact(papers, scifact, first_stage):
    for matrix, queries in (papers, scifact):
        _assert_exact(matrix, queries, 10, first_stage=first_stage)
        _assert_exact(matrix, queries, 10, threads=2, first_stage=first_stage)


def test_the_float32_first_stage_is_numpy_below_numpy_max_rows_and_faiss_from_there(monkeypatch):
    rng = np.random.default_rng(4)
    used: list[str] = []
    for name in ("_numpy_block", "_flat_block"):
        block = getattr(dense, name)
        monkeypatch.setattr(
            dense, name, lambda *args, block=block, name=name: used.append(name) or block(*args)
        )
    for rows in (dense.NUMPY_MAX_ROWS - 1, dense.NUMPY_MAX_ROWS):
        used.clear()
        matrix = l2_normalize(rng.standard_normal((rows, 16), dtype=np.float32))
        dense_search(matrix, matrix[7], 10)
        assert set(used) == {"_numpy_block" if rows < dense.NUMPY_MAX_ROWS else "_flat_block"}, rows


def test_sq8_error_bound_covers_every_row(scifact):
    matrix, queries = scifact
    sq8 = SQ8Blocks.build(matrix)
    decoded = sq8.vmin + (sq8.codes + 0.5) * sq8.step
    assert (np.abs(decoded - matrix).max(axis=0) <= sq8.error + 1e-6).all()
    # Half a quantisation step of the widest dimension, not more: the bound is tight.
    assert sq8.error.max() < (matrix.max(axis=0) - matrix.min(axis=0)).max() / 255
    # The integer sums the scan computes, turned back into scores, are within the query's
    # bound of the exact cosines, for every row.
    for query in queries:
        weights, scale, constant, eps = sq8.query_weights(query)
        approx = constant + scale * (sq8.codes.astype(np.int64) @ weights.astype(np.int64))
        assert np.abs(approx - matrix.astype(np.float64) @ query.astype(np.float64)).max() <= eps


def test_the_integer_scan_never_overflows():
    # Codes all 255 and a query with one large and many small components: the largest sum
    # the weights can make still fits in int32, and the scan returns it exactly.
    from knowledge.retrieval.dense_kernels import NO_MASK, kernels

    rng = np.random.default_rng(8)
    matrix = l2_normalize(rng.standard_normal((600, 384), dtype=np.float32))
    sq8 = SQ8Blocks.build(matrix)
    codes = np.full((3, 384), 255, dtype=np.uint8)
    for query in (np.ones(384, dtype=np.float32), matrix[0], -matrix[1]):
        weights, *_ = sq8.query_weights(l2_normalize(query))
        sums = np.empty(3, dtype=np.int32)
        kernels()[0](codes, weights, 0, 3, NO_MASK, sums, 2)
        assert sums[0] == (codes[0].astype(np.int64) @ weights.astype(np.int64))


def test_a_boundary_of_near_ties_widens_the_candidates_instead_of_guessing(monkeypatch):
    # 400 rows all within the 8-bit rounding of each other: the first 10 x k candidates
    # cannot prove the order, so every row within the bound of the k-th exact score is
    # rescored (and the answer stays exact), without a float32 scan or rescoring everything.
    rng = np.random.default_rng(3)
    base = l2_normalize(rng.standard_normal(64, dtype=np.float32))
    matrix = l2_normalize(base + rng.standard_normal((4_000, 64), dtype=np.float32) * 1e-4)
    matrix[:3600] = l2_normalize(rng.standard_normal((3600, 64), dtype=np.float32))
    rescored: list[int] = []
    scores_of = dense_exact.exact_scores
    monkeypatch.setattr(
        dense_sq8, "exact_scores", lambda m, rows, q: rescored.append(len(rows)) or scores_of(m, rows, q)
    )
    for module, name in ((dense, "_numpy_block"), (dense, "_flat_block"), (dense_exact, "_exact_all")):
        monkeypatch.setattr(module, name, lambda *args: pytest.fail("a float32 scan ran"))
    positions, scores = dense_search(matrix, base, 5, sq8=SQ8Blocks.build(matrix))
    monkeypatch.undo()
    expected = _exact_all(matrix, base, 5, None)
    np.testing.assert_array_equal(positions, expected[0])
    np.testing.assert_array_equal(scores, expected[1])
    assert rescored[0] == 50 and rescored[1] >= 400, "the near-ties were not detected"


def test_an_index_written_from_sq8_min_rows_up_keeps_its_8_bit_copy(tmp_path):
    rows, dim = SQ8_MIN_ROWS + 10, 8
    rng = np.random.default_rng(9)
    vectors = l2_normalize(rng.standard_normal((rows, dim), dtype=np.float32))
    data = IndexData(
        chunk_ids=np.arange(rows),
        document_ids=np.zeros(rows, dtype=np.int64),
        is_reference=np.zeros(rows, dtype=bool),
        bm25=BM25Index.from_term_ids(
            [np.array([i % 50]) for i in range(rows)], {f"w{i}": i for i in range(50)}
        ),
        vectors=vectors,
        sent_vectors=np.zeros((0, dim), dtype=np.float32),
        sent_offsets=np.zeros(rows + 1, dtype=np.int64),
    )
    loaded = read_index(write_index(data, tmp_path / "1"))
    assert loaded.meta["sq8"] and loaded.dense_sq8 is loaded.sq8
    assert isinstance(loaded.vectors, np.memmap), "the float32 rows are read only for the candidates"
    for query in vectors[:5]:
        expected = _exact_all(vectors, query, 20, None)
        positions, scores = dense_search(loaded.vectors, query, 20, sq8=loaded.dense_sq8)
        np.testing.assert_array_equal(positions, expected[0])
        np.testing.assert_array_equal(scores, expected[1])
