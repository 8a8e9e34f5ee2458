"""Tokenizer and BM25: identifiers kept whole, and scores equal to rank-bm25's BM25Okapi."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from knowledge.retrieval.bm25 import BM25Index, top_k
from knowledge.retrieval.tokenize import tokenize
from tests.conftest import shared_path
from tests.knowledge.paper_chunks import paper_chunks


@pytest.mark.parametrize(
    ("text", "whole", "parts"),
    [
        ("BM25 beats it", ["bm25"], []),
        ("GPT-4 answers", ["gpt-4"], ["gpt", "4"]),
        ("RRF with k=60.", ["k=60"], ["k", "60"]),
        ("we embed with all-MiniLM-L6-v2.", ["all-minilm-l6-v2"], ["minilm", "l6", "v2"]),
        ("see arXiv 2401.15884, page 3", ["2401.15884"], ["2401", "15884"]),
    ],
)
def test_it_keeps_identifiers_whole_and_split(text, whole, parts):
    tokens = tokenize(text)
    for token in whole + parts:
        assert token in tokens, (token, tokens)


def test_it_lowercases_normalises_stems_and_drops_stopwords():
    # U+FB01 is the "fi" ligature and U+FF22... are full-width "BM25": NFKC makes them plain text.
    assert tokenize("The \ufb01nal Retrieval results of \uff22\uff2d\uff12\uff15") == [
        "final", "retriev", "result", "bm25"]
    assert tokenize("Ranking ranked ranks") == ["rank", "rank", "rank"]
    # "all" is a stopword on its own, but the identifier it starts is kept whole.
    assert "all" not in tokenize("all-MiniLM-L6-v2")


def test_it_gives_no_terms_for_a_stopword_only_query():
    assert tokenize("what is the and of it") == []
    index = BM25Index.build([tokenize("retrieval augmented generation"), tokenize("dense passage retrieval")])
    positions, _scores = index.matching(tokenize("what is the and of it"))
    assert len(positions) == 0
    assert not index.scores(tokenize("which of these")).any()


def _assert_same_scores(corpus: list[list[str]], queries: list[list[str]]) -> None:
    ours = BM25Index.build(corpus)
    reference = BM25Okapi(corpus)
    for query in queries:
        expected = reference.get_scores(query)
        np.testing.assert_allclose(ours.scores(query), expected, rtol=0, atol=1e-6, err_msg=str(query))
        positions, scores = ours.matching(query)
        best, _ = top_k(positions, scores, 10)
        ref_best, _ = top_k(np.arange(len(expected)), expected, 10)
        if expected.max() > 0:
            # Chunks scoring 0 are not "matching"; among the rest the order is identical.
            assert best.tolist() == ref_best[: len(best)].tolist(), query


def test_it_scores_exactly_like_rank_bm25_on_a_real_paper():
    chunks = paper_chunks("2104.08663_beir_neurips2021") + paper_chunks("1908.10084v1_sentence_bert")
    corpus = [tokenize(c) for c in chunks]
    rng = random.Random(7)
    vocabulary = sorted({t for doc in corpus for t in doc})
    queries = [tokenize(q) for q in ("zero-shot retrieval on BEIR", "BM25 TAS-B ColBERT nDCG@10",
                                     "siamese network sentence embeddings", "the of and")]
    # Random queries mix rare and common terms; repeated terms count twice, as in rank-bm25.
    queries += [rng.sample(vocabulary, rng.randint(1, 6)) for _ in range(40)]
    queries.append([vocabulary[0]] * 3 + ["not-in-the-corpus"])
    _assert_same_scores(corpus, queries)

    # A corpus where the most common term is in more than half the chunks, so its idf is
    # negative and rank-bm25 floors it to epsilon * mean idf: we must floor it the same way.
    common = max(vocabulary, key=lambda t: sum(t in d for d in corpus))
    with_term = [d for d in corpus if common in d]
    dominated = with_term + [d for d in corpus if common not in d][: len(with_term) // 2]
    reference = BM25Okapi(dominated)
    assert reference.idf[common] == pytest.approx(reference.epsilon * reference.average_idf)
    _assert_same_scores(dominated, [[common], [common, common, "retriev"], *queries[:10]])


def test_it_matches_rank_bm25_on_edge_cases():
    corpus = [["a"], ["a", "b"], ["b", "b", "c"], [], ["a", "c", "c", "c", "d"]]
    reference = BM25Okapi(corpus)
    ours = BM25Index.build(corpus)
    for query in (["a"], ["b", "b"], ["c", "d"], ["e"], ["a", "b", "c", "d"]):
        np.testing.assert_allclose(ours.scores(query), reference.get_scores(query), rtol=0, atol=1e-9)


def test_it_handles_an_empty_corpus():
    index = BM25Index.build([])
    assert index.n_chunks == 0
    assert len(index.matching(["anything"])[0]) == 0


def test_top_k_breaks_ties_by_position_and_keeps_order():
    positions = np.array([5, 3, 9, 1, 7])
    scores = np.array([2.0, 3.0, 2.0, 1.0, 3.0])
    best, best_scores = top_k(positions, scores, 3)
    assert best.tolist() == [3, 7, 5]
    assert best_scores.tolist() == [3.0, 3.0, 2.0]
    assert top_k(positions, scores, 0)[0].tolist() == []
    assert top_k(positions, scores, 10)[0].tolist() == [3, 7, 5, 9, 1]


def test_unused_vocabulary_terms_do_not_shift_the_idf_floor():
    # The benchmark builds from term ids over a fixed vocabulary, most of it unused; the
    # epsilon floor must still be the mean idf of the terms that occur, as in rank-bm25.
    corpus = [["a", "b"], ["a", "c"], ["a", "b", "d"], ["a"]]
    vocab = {t: i for i, t in enumerate("abcdefghij")}
    ours = BM25Index.from_term_ids([np.array([vocab[t] for t in d]) for d in corpus], vocab)
    reference = BM25Okapi(corpus)
    for query in (["a"], ["a", "b"], ["d", "a"], ["j"]):
        np.testing.assert_allclose(ours.scores(query), reference.get_scores(query), rtol=0, atol=1e-9)


@pytest.mark.parametrize("layout", ["random", "ascending", "descending", "few_values"])
def test_top_k_on_long_arrays_equals_a_full_sort(layout):
    # Long enough for the strided-sample shortcut; the layouts are the ones a strided sample
    # could be fooled by, if the shortcut were not exact.
    rng = np.random.default_rng(11)
    n, k = 50_000, 60
    scores = {
        "random": rng.random(n),
        "ascending": np.sort(rng.random(n)),
        "descending": np.sort(rng.random(n))[::-1].copy(),
        "few_values": rng.integers(0, 5, n).astype(np.float64),
    }[layout]
    positions = np.arange(n, dtype=np.int64) * 3
    best, best_scores = top_k(positions, scores, k)
    order = np.lexsort((positions, -scores))[:k]
    np.testing.assert_array_equal(best, positions[order])
    np.testing.assert_array_equal(best_scores, scores[order])



def test_matching_walks_the_postings_into_the_scores_of_the_sparse_product():
    # The compiled walk sums the same products as q @ W (in another order: the terms by
    # decreasing bound, as `top` does, so the two agree bit for bit), including for a repeated
    # query term, and a reused per-thread scratch starts clean.
    rng = np.random.default_rng(4)
    words = [f"t{i}" for i in range(40)]
    corpus = [list(rng.choice(words, size=int(rng.integers(3, 9)))) for _ in range(3_000)]
    index = BM25Index.build(corpus)
    for _ in range(30):
        query = list(rng.choice(words, size=int(rng.integers(1, 6))))
        positions, scores = index.matching(query)
        assert len(set(positions.tolist())) == len(positions)
        expected = index.scores(query)
        np.testing.assert_array_equal(np.sort(positions), np.flatnonzero(expected))
        np.testing.assert_allclose(scores, expected[positions], rtol=1e-14, atol=0)


def _zipf_index(n: int, seed: int, *, duplicates: bool = False) -> tuple[BM25Index, list[np.ndarray]]:
    """Chunks of Zipf-distributed terms (as bench/retrieval.py): rare and very common terms."""
    rng = np.random.default_rng(seed)
    vocab_size = 3_000
    weights = 1.0 / np.arange(1, vocab_size + 1) ** 1.07
    cdf = np.cumsum(weights / weights.sum())
    docs = [np.minimum(np.searchsorted(cdf, rng.random(int(rng.integers(5, 60)))), vocab_size - 1)
            for _ in range(n)]
    if duplicates:  # exact ties: the lower position must win
        for i in range(0, n, 7):
            docs[i] = docs[0]
    return BM25Index.from_term_ids(docs, {f"w{i}": i for i in range(vocab_size)}), docs


def _queries(docs: list[np.ndarray], count: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        doc = docs[int(rng.integers(len(docs)))]
        query = [f"w{t}" for t in rng.choice(doc, size=min(len(doc), int(rng.integers(1, 8))))]
        out.append([*query, "w2999", "unknown"] if rng.random() < 0.1 else query)
    return out


@pytest.mark.parametrize("duplicates", [False, True])
def test_top_is_exactly_the_top_k_of_every_matching_chunk(duplicates):
    # The 16-bit first stage, the MaxScore skipping and both modes of the last pass (the
    # touched chunks, or every chunk) must all give top_k(matching) to the last bit.
    index, docs = _zipf_index(20_000, 5, duplicates=duplicates)
    skipped = 0
    for i, query in enumerate(_queries(docs, 150, 6)):
        k = (1, 10, 30, 200)[i % 4]
        positions, scores = index.top(query, k)
        matched = index.matching(query)
        expected = top_k(*matched, k)
        np.testing.assert_array_equal(positions, expected[0], err_msg=str(query))
        np.testing.assert_array_equal(scores, expected[1], err_msg=str(query))
        skipped += len(matched[0]) > 4 * k
    assert skipped > 50, "the queries did not exercise the skipping"


def test_top_with_an_allowed_mask_is_the_top_k_of_the_allowed_chunks():
    index, docs = _zipf_index(20_000, 8)
    rng = np.random.default_rng(9)
    for query in _queries(docs, 60, 10):
        allowed = rng.random(index.n_chunks) < rng.choice([0.01, 0.3, 0.9])
        positions, scores = index.matching(query)
        keep = allowed[positions]
        expected = top_k(positions[keep], scores[keep], 20)
        got = index.top(query, 20, allowed)
        np.testing.assert_array_equal(got[0], expected[0], err_msg=str(query))
        np.testing.assert_array_equal(got[1], expected[1], err_msg=str(query))


def test_top_scores_and_ranks_like_rank_bm25():
    chunks = paper_chunks("2104.08663_beir_neurips2021") + paper_chunks("1908.10084v1_sentence_bert")
    corpus = [tokenize(c) for c in chunks]
    reference = BM25Okapi(corpus)
    ours = BM25Index.build(corpus)
    rng = random.Random(3)
    vocabulary = sorted({t for doc in corpus for t in doc})
    queries = [rng.sample(vocabulary, rng.randint(1, 6)) for _ in range(40)]
    queries += [tokenize(q) for q in ("zero-shot retrieval on BEIR", "siamese network sentence embeddings")]
    for query in queries:
        expected = reference.get_scores(query)
        positions, scores = ours.top(query, 10)
        np.testing.assert_allclose(scores, expected[positions], rtol=0, atol=1e-6, err_msg=str(query))
        ref_best, ref_scores = top_k(np.arange(len(expected)), expected, 10)
        keep = ref_scores > 0
        # Ranks are identical up to rank-bm25's own exact ties (its sums differ in the last bit).
        assert len(positions) == keep.sum()
        for a, b in zip(positions, ref_best[keep], strict=True):
            assert a == b or abs(expected[a] - expected[b]) < 1e-9, query


def test_top_falls_back_to_exact_scoring_for_a_negative_term():
    # A term in more than half the chunks has a negative idf floored to epsilon x mean idf;
    # with a negative mean that weight is negative and the bounds of the first stage do not
    # hold: such a query is scored exactly, with the same answer.
    corpus = [["a", "b"], ["a", "b"], ["a", "b", "c"], ["a"], ["a", "b", "c", "c"]]
    index = BM25Index.build(corpus)
    assert (index.term_max < 0).any()
    for query in (["a"], ["a", "b"], ["b", "c", "a"], ["c", "a"], ["c"]):
        for k in (1, 2, 10):
            expected = top_k(*index.matching(query), k)
            got = index.top(query, k)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])


def _written(index: BM25Index, folder):
    """`index` written to disk as a version's BM25 part (store.write_index); the folder."""
    from knowledge.retrieval.store import IndexData, write_index

    n = index.n_chunks
    data = IndexData(chunk_ids=np.arange(n), document_ids=np.zeros(n, dtype=np.int64),
                     is_reference=np.zeros(n, dtype=bool), bm25=index, vectors=np.zeros((n, 4), dtype=np.float32),
                     sent_vectors=np.zeros((0, 4), dtype=np.float32), sent_offsets=np.zeros(n + 1, dtype=np.int64))
    return write_index(data, folder)


def _assert_ranks_as_matching(index: BM25Index, loaded: list[BM25Index], queries: list[list[str]]) -> None:
    """Each of `loaded` ranks every query's top 10 as scoring all of `index`'s matches does."""
    for query in queries:
        expected = top_k(*index.matching(query), 10)
        for bm25 in loaded:
            got = bm25.top(query, 10)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])


def test_top_on_an_index_read_from_disk_with_and_without_the_stored_impacts(tmp_path):
    from knowledge.retrieval.store import POSTINGS, read_index

    index, docs = _zipf_index(5_000, 12)
    folder = _written(index, tmp_path / "1")
    loaded = read_index(folder).bm25
    assert isinstance(loaded.impacts, np.memmap) and loaded.impact_step == index.impact_step
    assert all(isinstance(a, np.memmap) for a in loaded.postings)
    # An index written before the compressed chunk ids were stored, then one written before
    # the impacts were too: they are made on first search.
    for name in POSTINGS:
        (folder / f"{name}.npy").unlink()
    older = read_index(folder).bm25
    assert older.postings is None and older.impacts is not None
    for name in ("bm25_impacts.npy", "bm25_term_max.npy"):
        (folder / name).unlink()
    old = read_index(folder).bm25
    assert old.impacts is None
    _assert_ranks_as_matching(index, [loaded, older, old], _queries(docs, 40, 13))


def test_the_impacts_are_one_byte_a_posting_and_rank_exactly(tmp_path):
    # 8-bit impacts with a multiplier per term (half the 16-bit ones' memory): rare terms get
    # coarse steps, yet the first stage's bound still makes `top` the exact top k, from memory
    # and from disk; and an index written with 16-bit impacts and no multipliers (the format
    # before) ranks the same.
    from knowledge.retrieval.store import read_index

    index, docs = _zipf_index(8_000, 21)
    w = index.weights
    assert index.impacts.dtype == np.uint8 and index.impacts.nbytes == len(w.data)
    assert index.impact_mult.max() > 50 and index.impact_mult.min() >= 1
    # The stored error bounds what the kernel relies on: |impact x mult x step - weight|.
    per_posting = np.repeat(index.impact_mult * index.impact_step, np.diff(w.indptr))
    off = np.abs(index.impacts * per_posting - w.data) / index.impact_step
    assert (off <= np.repeat(index.impact_error, np.diff(w.indptr))).all()
    folder = _written(index, tmp_path / "1")
    loaded = read_index(folder).bm25
    assert loaded.impacts.dtype == np.uint8 and np.array_equal(loaded.impact_mult, index.impact_mult)
    before = shutil.copytree(folder, tmp_path / "2")
    np.save(before / "bm25_impacts.npy", np.clip(np.rint(w.data / index.impact_step), 1, 65535).astype(np.uint16))
    for name in ("bm25_impact_mult.npy", "bm25_impact_error.npy"):
        (before / name).unlink()
    older = read_index(before).bm25
    assert older.impacts.dtype == np.uint16 and older.impact_mult is None
    _assert_ranks_as_matching(index, [index, loaded, older], _queries(docs, 60, 22))


def test_the_working_arrays_are_shared_by_the_threads_that_search_in_turn():
    # One set of BM25 working arrays per search at a time, not one per thread: a pool thread
    # and the caller searching one after the other use the same set.
    from concurrent.futures import ThreadPoolExecutor

    from knowledge.retrieval import parallel

    index, docs = _zipf_index(3_000, 23)
    parallel._SHELF.pop("bm25_top", None)
    query = _queries(docs, 1, 24)[0]
    index.top(query, 5)
    with ThreadPoolExecutor(2) as pool:
        for _ in range(4):
            pool.submit(index.top, query, 5).result()
    index.top(query, 5)
    assert len(parallel._SHELF["bm25_top"]) == 1


def test_top_ranks_scifact_claims_as_the_sparse_product_does():
    # Real abstracts and claims: the first stage and its skipping never change a ranking
    # against scoring every abstract with the sparse product (and its term-id order of sums).
    from knowledge.retrieval.beir import load_beir

    data = load_beir(shared_path("scifact", "beir"), split="test")
    index = BM25Index.build([tokenize(t) for t in data.doc_texts])
    for qid in sorted(data.queries):
        query = tokenize(data.queries[qid])
        expected_positions, expected_scores = top_k(np.arange(index.n_chunks), index.scores(query), 30)
        keep = expected_scores > 0
        positions, scores = index.top(query, 30)
        np.testing.assert_array_equal(positions, expected_positions[keep], err_msg=qid)
        np.testing.assert_allclose(scores, expected_scores[keep], rtol=1e-14, atol=0, err_msg=qid)


@pytest.mark.parametrize("n", [1, 127, 128, 129, 5_000])
def test_compressed_postings_decode_to_the_chunk_ids_and_seek_as_a_bisection(n):
    from knowledge.retrieval.bm25_postings import BLOCK, codec, encode

    rng = np.random.default_rng(n)
    # Lists of every density: gaps of one byte to four and blocks
    # mixing them, first and last chunk, a list of exactly one block, and an empty term.
    lists = [np.sort(rng.choice(2_000_000, size=min(n, 2_000_000), replace=False)),
             np.arange(n), np.array([0, 2_000_000 - 1]), np.array([], dtype=np.int64),
             np.flatnonzero(rng.random(3 * n) < 0.5), np.arange(BLOCK) * 300, np.array([5, 1 << 25])]
    indptr = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    indices = np.concatenate(lists).astype(np.int32)
    postings = encode(indptr, indices)
    block, read, seek, find = codec()
    skip_ptr, skip_doc, skip_off, gaps = postings
    for t, ids in enumerate(lists):
        # Walked block by block as the kernels walk them, and each position sought in turn.
        decoded = []
        for b in range(skip_ptr[t], skip_ptr[t + 1]):
            start, size, w, d, o = block(skip_ptr, skip_doc, skip_off, t, b, indptr[t], indptr[t + 1])
            assert start == indptr[t] + (b - skip_ptr[t]) * BLOCK
            decoded.append(d)
            for _ in range(1, size):
                d += read(gaps, o, w)
                o += w
                decoded.append(d)
        np.testing.assert_array_equal(decoded, ids)
        assert [seek(indptr, *postings, t, p, 0)[1] for p in range(indptr[t], indptr[t + 1])] == list(ids)
        probes = np.concatenate([rng.integers(0, 2_000_001, 30), ids[:3], ids[-3:], ids[-3:] + 1])
        for d in probes:
            j = int(np.searchsorted(ids, d))
            for lo in (indptr[t], indptr[t] + int(rng.integers(0, len(ids) + 1))):
                p, doc = seek(indptr, *postings, t, lo, d)
                assert p == max(lo, indptr[t] + j)
                assert doc == (indices[p] if p < indptr[t + 1] else -1)
            assert find(indptr, *postings, t, d) == (indptr[t] + j if j < len(ids) and ids[j] == d else -1)


def test_top_reads_the_compressed_chunk_ids_not_the_int32_ones():
    # What keeps the int32 ids (four bytes a posting) out of a loaded index's resident memory:
    # with them overwritten, `top` still returns the exact top k.
    index, docs = _zipf_index(3_000, 14)
    queries = _queries(docs, 30, 15)
    expected = [top_k(*index.matching(q), 10) for q in queries]
    index.top(queries[0], 10)  # the first stage's arrays are made
    index.weights.indices[:] = 0
    for query, (positions, scores) in zip(queries, expected, strict=True):
        got = index.top(query, 10)
        np.testing.assert_array_equal(got[0], positions)
        np.testing.assert_array_equal(got[1], scores)


def test_gather_lists_each_weight_position_once_in_order():
    # `top`'s near chunks' weights are read at the positions `gather` lists: ascending (as
    # reads.take wants) and each once, with slot mapping every (term, chunk) back to them.
    from knowledge.retrieval.bm25_kernels import kernels

    where = np.array([[40, -1, 45], [3, 5, -1], [-1, 20, 21]], dtype=np.int64)  # rows: summing order
    positions, slot = kernels()[3](where)
    assert positions.tolist() == [3, 5, 20, 21, 40, 45]
    held = where >= 0
    np.testing.assert_array_equal(positions[slot[held]], where[held])
    assert (slot[~held] == -1).all()
