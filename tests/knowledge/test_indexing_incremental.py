"""Incremental indexing: a version made from the previous one plus what changed equals a full build."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge import indexing, services
from knowledge.indexing import collection_index_dir, index_rebuild
from knowledge.models import Collection
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.store import read_index
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

PAPERS = {
    "BM25 at scale": [
        ("Ranking", "BM25 ranks documents by term frequency and inverse document frequency. "
                    "Length normalisation keeps long documents from winning every query."),
        ("Index", "The index stores term weights as a sparse matrix, so a query is one sparse product."),
    ],
    "Dense retrieval": [
        ("Method", "Dense retrievers encode questions and passages into vectors. "
                   "They compare them by cosine similarity."),
    ],
    "Cats": [
        ("Sleep", "Domestic cats sleep for most of the day. They hunt small rodents at night."),
        ("References", "Smith J. Cats and sleep. Journal of Feline Studies, 2001."),
    ],
}
QUERIES = ["term frequency ranking", "why do cats sleep", "cosine similarity of passage vectors",
           "sparse matrix index of term weights", "zebrafish heart regeneration"]


def _add(collection, title, chunks):
    doc = make_document(collection=collection, title=title)
    for section, text in chunks:
        make_chunk(document=doc, text=text, section_title=section, is_reference=section == "References")
    return doc


def _current(collection):
    version = Collection.objects.get(pk=collection.pk).index_version
    return read_index(collection_index_dir(collection.pk) / str(version))


def _assert_same_as_full(collection):
    """The version on disk equals a full build of the same chunks: arrays bit for bit, and searches."""
    incremental = _current(collection)
    full = indexing._build(collection.pk)
    for name in ("chunk_ids", "document_ids", "is_reference", "vectors", "sent_vectors", "sent_offsets"):
        assert np.array_equal(np.asarray(getattr(incremental, name)), np.asarray(getattr(full, name))), name
    assert incremental.bm25.vocab == full.bm25.vocab
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(incremental.bm25.weights, name), getattr(full.bm25.weights, name)), name
    assert np.array_equal(incremental.bm25.counts, full.bm25.counts)
    assert incremental.meta["documents"] == full.meta["documents"]
    embedder = indexing._query_vector
    for query in QUERIES:
        vector = embedder(incremental.meta["embedding_model"], query)
        for mode in ("bm25", "dense", "rrf"):
            got = HybridSearcher(incremental).search(query, query_vector=vector, k=5, mode=mode)
            want = HybridSearcher(full).search(query, query_vector=vector, k=5, mode=mode)
            assert [(h.chunk_id, h.score) for h in got] == [(h.chunk_id, h.score) for h in want], (query, mode)


@pytest.fixture
def made(monkeypatch):
    """The chunk texts whose rows an index build made (split into sentences) since the last reset."""
    texts: list[str] = []
    split = indexing._split_sentences

    def recording(text):
        texts.append(text)
        return split(text)

    monkeypatch.setattr(indexing, "_split_sentences", recording)
    return texts


def test_adding_changing_and_deleting_documents_equals_a_full_rebuild(collection, made):
    docs = {title: _add(collection, title, chunks) for title, chunks in PAPERS.items()}
    index_rebuild(collection=collection)
    assert len(made) == 4  # the first version is made in full (a reference chunk is not split)

    made.clear()
    _add(collection, "Zebrafish", [("Results", "Zebrafish regenerate heart tissue after an injury.")])
    index_rebuild(collection=collection)
    assert made == ["Zebrafish regenerate heart tissue after an injury."], "only the new paper is made"
    _assert_same_as_full(collection)

    # A document in the middle changes (its title is in every BM25 row): it alone is made again.
    made.clear()
    services.document_update(document=docs["Dense retrieval"], title="Dense passage retrieval")
    assert made == [PAPERS["Dense retrieval"][0][1]]
    _assert_same_as_full(collection)

    made.clear()
    gone = set(docs["BM25 at scale"].chunks.values_list("pk", flat=True))
    services.document_delete(document=docs["BM25 at scale"])
    assert made == []
    _assert_same_as_full(collection)
    assert gone and not gone & set(_current(collection).chunk_ids.tolist())


def test_it_rebuilds_in_full_when_asked_or_when_the_previous_version_cannot_be_merged(collection, made):
    _add(collection, "Cats", PAPERS["Cats"])
    index_rebuild(collection=collection)
    made.clear()
    index_rebuild(collection=collection)
    assert made == []  # nothing changed
    index_rebuild(collection=collection, full=True)
    assert len(made) == 1
    # A version written by an older builder is not merged from.
    made.clear()
    folder = collection_index_dir(collection.pk) / str(Collection.objects.get(pk=collection.pk).index_version)
    (folder / "bm25_counts.npy").unlink()
    index_rebuild(collection=collection)
    assert len(made) == 1
    _assert_same_as_full(collection)
