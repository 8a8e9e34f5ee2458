"""agent.retrieval.CollectionRetriever's pool reads: each retriever's own best chunks, and
the chunks next to given ones."""

from __future__ import annotations

import pytest

from agent.retrieval import CollectionRetriever
from agent.types import Source
from knowledge.indexing.build import index_rebuild
from knowledge.indexing.search import index_search
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db


def _source(chunk, query="q"):
    return Source(chunk_id=chunk.pk, document_id=chunk.document_id, text=chunk.text, query=query)


def test_neighbours_are_the_chunks_before_and_after_in_the_same_document(collection, alice):
    from knowledge import services

    doc = make_document(collection=collection)
    chunks = [make_chunk(document=doc, text=f"Passage {n} of the paper.") for n in range(5)]
    reference = make_chunk(document=doc, text="[1] A cited work.", is_reference=True)
    other = make_document(collection=collection)
    make_chunk(document=other, text="Another paper's first passage.")
    elsewhere = services.collection_create(name="Elsewhere", user=alice)
    foreign = make_chunk(document=make_document(collection=elsewhere), text="Not this collection's.")
    retriever = CollectionRetriever(collection)

    found = retriever.neighbours([_source(chunks[2], "first"), _source(chunks[3], "second"),
                                  _source(chunks[4], "third"), _source(foreign)])
    # Chunk 3 is a source already; after chunk 4 comes only a reference chunk; each neighbour
    # carries the query of the source it is next to; another collection's chunk has none here.
    assert [(s.chunk_id, s.query) for s in found] == [(chunks[1].pk, "first")]
    assert reference.pk not in {s.chunk_id for s in found}
    assert retriever.neighbours([]) == []


def test_heads_are_each_retrievers_own_best_chunks(collection):
    texts = {
        "bm25": "BM25 ranks documents by term frequency and inverse document frequency with length normalisation.",
        "dense": "Dense retrievers encode questions and passages into vectors and compare them by cosine similarity.",
        "cats": "Domestic cats sleep for most of the day and hunt small rodents at night.",
    }
    for text in texts.values():
        make_chunk(document=make_document(collection=collection), text=text)
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    query = "how do retrievers rank documents for a question"
    firsts = [index_search(collection=collection, query=query, k=1, mode=m)[0].chunk_id for m in ("bm25", "dense")]
    heads = CollectionRetriever(collection).retrieve_heads(query, k=1)
    assert [s.chunk_id for s in heads] == list(dict.fromkeys(firsts))
    assert all(s.query == query for s in heads)


def test_a_search_within_documents_reads_only_those(collection):
    from agent.retrieval import MultiCollectionRetriever

    one, two = make_document(collection=collection), make_document(collection=collection)
    near = make_chunk(document=one, text="The default pooling strategy of the encoder is MEAN over all tokens.")
    other = make_chunk(document=two, text="Our default pooling strategy is MAX over the token vectors.")
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    retriever = CollectionRetriever(collection)
    query = "default pooling strategy"
    assert {s.chunk_id for s in retriever.retrieve_within(query, k=5, document_ids=None)} == {near.pk, other.pk}
    found = retriever.retrieve_within(query, k=5, document_ids=[one.pk])
    assert [s.chunk_id for s in found] == [near.pk] and found[0].query == query
    assert retriever.retrieve_within(query, k=5, document_ids=[]) == []
    # Across collections, a document id belongs to one of them only.
    assert [s.chunk_id for s in MultiCollectionRetriever([collection]).retrieve_within(
        query, k=5, document_ids=[two.pk])] == [other.pk]


def test_a_run_limited_to_documents_searches_within_them_only(collection):
    # A run asked of one paper (Run.documents) never reads another, also in the premise search.
    one, two = make_document(collection=collection), make_document(collection=collection)
    mine = make_chunk(document=one, text="The default pooling strategy of the encoder is MEAN over all tokens.")
    make_chunk(document=two, text="Our default pooling strategy is MAX over the token vectors.")
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    limited = CollectionRetriever(collection, document_ids=[one.pk])
    query = "default pooling strategy"

    assert [s.chunk_id for s in limited.retrieve_within(query, k=5, document_ids=None)] == [mine.pk]
    assert [s.chunk_id for s in limited.retrieve_within(query, k=5, document_ids=[two.pk])] == [mine.pk]
