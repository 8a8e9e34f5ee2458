"""The per-collection index: rebuild, versioning, filters, deletion, and staleness across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from knowledge.indexing import collection_index_dir, index_rebuild, index_search
from knowledge.models import Collection, Document
from tests.conftest import ROOT
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

TEXTS = {
    "bm25": "BM25 ranks documents by term frequency and inverse document frequency with length normalisation.",
    "dense": "Dense retrievers encode questions and passages into vectors and compare them by cosine similarity.",
    "cats": "Domestic cats sleep for most of the day and hunt small rodents at night.",
}


def _docs(collection, **per_doc_overrides):
    docs = {}
    for name, text in TEXTS.items():
        doc = make_document(collection=collection, title=f"On {name}", **per_doc_overrides.get(name, {}))
        make_chunk(document=doc, text=text)
        docs[name] = doc
    return docs


def test_it_returns_nothing_for_an_empty_collection(collection):
    assert index_search(collection=collection, query="anything") == []
    assert index_rebuild(collection=collection) == 1
    assert index_search(collection=collection, query="anything") == []


def test_it_bumps_the_version_and_finds_chunks_with_every_mode(collection):
    docs = _docs(collection)
    version = index_rebuild(collection=collection)
    collection.refresh_from_db()
    assert collection.index_version == version == 1
    assert (collection_index_dir(collection.pk) / "1" / "manifest.json").exists()
    for mode in ("bm25", "dense", "rrf", "minmax"):
        hits = index_search(collection=collection, query="why do cats sleep so much", k=2, mode=mode)
        assert hits[0].chunk_id == docs["cats"].chunks.get().pk, mode
    fused = index_search(collection=collection, query="term frequency ranking", k=3)
    assert set(fused[0].ranks) == {"bm25", "dense"}
    assert set(fused[0].scores) == {"bm25", "dense"}


def test_it_never_returns_a_deleted_document_even_before_the_rebuild(collection):
    docs = _docs(collection)
    index_rebuild(collection=collection)
    cat_chunk = docs["cats"].chunks.get().pk
    assert cat_chunk in [h.chunk_id for h in index_search(collection=collection, query="cats", k=3)]
    docs["cats"].delete()
    assert cat_chunk not in [h.chunk_id for h in index_search(collection=collection, query="cats", k=3)]
    index_rebuild(collection=collection)
    assert cat_chunk not in [h.chunk_id for h in index_search(collection=collection, query="cats", k=3)]


def test_it_skips_documents_that_are_not_ready(collection):
    docs = _docs(collection)
    Document.objects.filter(pk=docs["cats"].pk).update(status=Document.Status.PROCESSING)
    index_rebuild(collection=collection)
    hits = index_search(collection=collection, query="cats sleep", k=3, mode="bm25")
    assert docs["cats"].chunks.get().pk not in [h.chunk_id for h in hits]


def test_it_filters_by_document_and_metadata(collection):
    docs = _docs(collection, bm25={"metadata": {"year": 1994, "tags": ["ir"]}},
                 dense={"metadata": {"year": 2020, "tags": ["neural", "ir"]}})
    index_rebuild(collection=collection)

    def found(**kwargs):
        return {h.document_id for h in index_search(collection=collection, query="documents passages cats",
                                                     k=5, **kwargs)}

    assert found(document_ids=[docs["cats"].pk]) == {docs["cats"].pk}
    assert found(filters={"year": 2020}) == {docs["dense"].pk}
    assert found(filters={"year": (1990, 2021)}) == {docs["bm25"].pk, docs["dense"].pk}
    assert found(filters={"tag": "IR"}) == {docs["bm25"].pk, docs["dense"].pk}
    assert found(filters={"title": "on cats"}) == {docs["cats"].pk}
    assert found(filters={"year": 1800}) == set()


def test_it_returns_nothing_for_a_query_of_stopwords_only(collection):
    _docs(collection)
    index_rebuild(collection=collection)
    assert index_search(collection=collection, query="the of and", mode="bm25") == []
    assert index_search(collection=collection, query="   ") == []


def test_it_keeps_only_the_two_newest_versions_on_disk(collection):
    _docs(collection)
    for _ in range(4):
        index_rebuild(collection=collection)
    assert sorted(p.name for p in collection_index_dir(collection.pk).iterdir() if p.is_dir()) == ["3", "4"]


def test_it_rebuilds_lost_index_files_instead_of_failing(collection):
    docs = _docs(collection)
    index_rebuild(collection=collection)
    import shutil

    shutil.rmtree(collection_index_dir(collection.pk) / "1")
    hits = index_search(collection=collection, query="cats", k=1, mode="bm25")
    assert hits[0].chunk_id == docs["cats"].chunks.get().pk
    assert Collection.objects.get(pk=collection.pk).index_version == 2
