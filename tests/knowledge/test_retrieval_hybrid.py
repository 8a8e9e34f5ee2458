"""BM25 and dense search fail differently on real text; the hybrid keeps both kinds of hit.

Chunks of four real papers, embedded with the local model (all-MiniLM-L6-v2 int8). A query
that is an identifier is found by BM25 and missed by dense search; a paraphrase that shares
no content word with its passage is found by dense search and missed by BM25.
"""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.store import IndexData
from knowledge.retrieval.tokenize import tokenize
from tests.knowledge.paper_chunks import paper_chunks

PAPERS = ("1908.10084v1_sentence_bert", "2307.03172v3_lost_in_the_middle", "2104.08663_beir_neurips2021")


@pytest.fixture(scope="module")
def corpus():
    from knowledge.embeddings import get_embedder

    # 200-word windows without overlap keep the corpus (about 150 chunks) quick to embed.
    chunks = [c for name in PAPERS for c in paper_chunks(name, words=200, stride=200)]
    embedder = get_embedder("local")
    n = len(chunks)
    data = IndexData(
        chunk_ids=np.arange(n), document_ids=np.zeros(n, dtype=np.int64), is_reference=np.zeros(n, dtype=bool),
        bm25=BM25Index.build(tokenize(c) for c in chunks), vectors=embedder.embed(chunks),
        sent_vectors=np.zeros((0, embedder.dim), dtype=np.float32), sent_offsets=np.zeros(n + 1, dtype=np.int64),
    )
    return chunks, HybridSearcher(data), embedder


def _best_rank(corpus, query: str, needle: str, mode: str) -> int:
    chunks, searcher, embedder = corpus
    relevant = {i for i, c in enumerate(chunks) if needle.casefold() in c.casefold()}
    assert relevant, f"no chunk contains {needle!r}"
    hits = searcher.search(query, query_vector=embedder.embed([query])[0], k=50, mode=mode)
    ranks = [rank for rank, hit in enumerate(hits, 1) if hit.chunk_id in relevant]
    return ranks[0] if ranks else 10**6


# A technical-report number (BEIR's references) and model names from Sentence-BERT's tables.
@pytest.mark.parametrize("identifier", ["SIDL-WP-1999-0120", "SRoBERTa-WikiSec-large", "skip-thoughts-CS"])
def test_bm25_finds_identifiers_that_dense_search_misses(corpus, identifier):
    assert _best_rank(corpus, identifier, identifier, "bm25") <= 3
    assert _best_rank(corpus, identifier, identifier, "dense") > 5
    # RRF keeps it in the top 10: a chunk ranked by one retriever only can be passed by
    # chunks both retrievers rank moderately (1/61 < 1/64 + 1/66), which is what RRF is for.
    assert _best_rank(corpus, identifier, identifier, "rrf") <= 10


@pytest.mark.parametrize(
    ("paraphrase", "needle"),
    [
        # Sentence-BERT: "...requires about 65 hours with BERT" for 10,000 sentences.
        ("locating the two most alike phrases among ten thousand would take nearly three days "
         "on a graphics card", "65 hours"),
        # Lost in the middle: performance "degrades when models must access relevant information
        # in the middle of long contexts".
        ("language models overlook facts buried halfway into lengthy prompts", "degrades when models"),
    ],
)
def test_dense_search_finds_paraphrases_that_bm25_misses(corpus, paraphrase, needle):
    assert _best_rank(corpus, paraphrase, needle, "dense") <= 5
    assert _best_rank(corpus, paraphrase, needle, "bm25") > 10
    assert _best_rank(corpus, paraphrase, needle, "rrf") <= 10
