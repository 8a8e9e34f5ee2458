"""The per-collection index: rebuild, versioning, filters, deletion, and staleness across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from knowledge import services
from knowledge.indexing.build import index_rebuild
from knowledge.indexing.search import index_search
from knowledge.indexing.versions import collection_index_dir
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


def test_bm25_finds_a_chunk_by_its_documents_title_and_section_heading(collection):
    text = "We first use an LLM to extract a set of statements from the answer."
    paper = make_document(collection=collection, title="Ragas: automated evaluation of RAG")
    answer = make_chunk(document=paper, text=text, section_title="3.1 Faithfulness")
    other = make_document(collection=collection, title="Lost in the middle")
    elsewhere = make_chunk(document=other, text=text)
    # A third document: with two chunks a term in one of them has idf 0 (rank-bm25's formula).
    make_chunk(document=make_document(collection=collection, title="Cats"), text=TEXTS["cats"])
    index_rebuild(collection=collection)
    hits = index_search(collection=collection, query="How does Ragas score faithfulness?", k=2, mode="bm25")
    assert [h.chunk_id for h in hits] == [answer.pk], "neither word is in the chunk's own text"

    # A new title is searchable at once: renaming rebuilds the index.
    services.document_update(document=other, title="Statement extraction, revisited")
    hits = index_search(collection=collection, query="revisited", k=2, mode="bm25")
    assert [h.chunk_id for h in hits] == [elsewhere.pk]


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
    assert sorted(p.name for p in collection_index_dir(collection.pk).iterdir() if p.name.isdigit()) == ["3", "4"]


def test_it_rebuilds_lost_index_files_instead_of_failing(collection):
    docs = _docs(collection)
    index_rebuild(collection=collection)
    import shutil

    shutil.rmtree(collection_index_dir(collection.pk) / "1")
    hits = index_search(collection=collection, query="cats", k=1, mode="bm25")
    assert hits[0].chunk_id == docs["cats"].chunks.get().pk
    assert Collection.objects.get(pk=collection.pk).index_version == 2


_READER = textwrap.dedent(
    """
    import hashlib, json, sys
    import django
    django.setup()
    from django.conf import settings
    settings.INDEX_MERGE_QUEUE = False  # as tests/conftest.py: no merge messages to the broker
    from knowledge.indexing.build import index_rebuild
    from knowledge.indexing.search import index_search
    from knowledge.models import Collection
    from tests.factories import make_chunk, make_document
    # One long-lived process, like a Celery worker: it loads the index once and keeps it.
    for line in sys.stdin:
        cmd = json.loads(line)
        collection = Collection.objects.get(pk=cmd["collection"])
        if "add" in cmd:
            # Its own factory counter restarts at 1, so the file hash must come from elsewhere.
            sha = hashlib.sha256(cmd["add"].encode()).hexdigest()
            chunk = make_chunk(document=make_document(collection=collection, title="Added", sha256=sha),
                               text=cmd["add"])
            index_rebuild(collection=collection)
            print(json.dumps([chunk.pk]), flush=True)
            continue
        hits = index_search(collection=collection, query=cmd["query"], k=5, mode="bm25")
        print(json.dumps([h.chunk_id for h in hits]), flush=True)
    """
)


@pytest.mark.django_db(transaction=True)
def test_a_process_holding_an_old_version_reloads_after_a_rebuild_elsewhere(collection, settings):
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {**__import__("os").environ, "PORTAL_DEBUG": "1", "PORTAL_DATABASE_URL": url,
           "PORTAL_INDEX_ROOT": str(settings.INDEX_ROOT), "DJANGO_SETTINGS_MODULE": "portal.settings"}
    reader = subprocess.Popen([sys.executable, "-c", _READER], cwd=ROOT, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def reader_search(query: str, **extra: str) -> list[int]:
        assert reader.stdin and reader.stdout
        reader.stdin.write(json.dumps({"collection": collection.pk, "query": query, **extra}) + "\n")
        reader.stdin.flush()
        line = reader.stdout.readline()
        assert line, "the reader process died"
        return json.loads(line)

    try:
        # BM25Okapi gives a term in half the chunks idf 0: a few unrelated chunks keep the
        # test's words rare enough to score.
        for text in TEXTS.values():
            make_chunk(document=make_document(collection=collection), text=text)
        old = make_document(collection=collection, title="Old")
        old_chunk = make_chunk(document=old, text="Okapi BM25 weighs term frequency against document length.")
        index_rebuild(collection=collection)
        assert reader_search("okapi") == [old_chunk.pk]  # the reader has version 1 loaded now

        # This process adds a document and rebuilds: version 2, written while the reader
        # still holds version 1 in memory.
        new = make_document(collection=collection, title="New")
        new_chunk = make_chunk(document=new, text="Zebrafish regenerate heart tissue after injury.")
        assert reader_search("zebrafish") == []
        assert index_rebuild(collection=collection) == 2
        assert reader_search("zebrafish") == [new_chunk.pk]

        # The other way round: this process has version 2 loaded, the reader rebuilds to 3.
        assert [h.chunk_id for h in index_search(collection=collection, query="zebrafish", mode="bm25")] == [
            new_chunk.pk]
        [added] = reader_search("", add="Axolotls regrow whole limbs.")
        assert [h.chunk_id for h in index_search(collection=collection, query="axolotls", mode="bm25")] == [added]

        new.delete()
        index_rebuild(collection=collection)
        assert reader_search("zebrafish") == []
        assert reader_search("okapi") == [old_chunk.pk]
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)


def test_it_replaces_a_leftover_folder_with_the_next_version_number(collection):
    docs = _docs(collection)
    leftover = collection_index_dir(collection.pk) / "1"
    leftover.mkdir(parents=True)
    (leftover / "manifest.json").write_text("{}")  # from a database that was reset
    assert index_rebuild(collection=collection) == 1
    hits = index_search(collection=collection, query="cats", k=1, mode="bm25")
    assert hits[0].chunk_id == docs["cats"].chunks.get().pk


def test_llm_rerank_grades_candidates_through_the_openai_backend(collection, settings):
    from tests.fake_openai import FakeOpenAI

    docs = _docs(collection)
    index_rebuild(collection=collection)
    with FakeOpenAI() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "sk-test"
        settings.LLM_MAX_RETRIES = 0

        def grade(body):
            # Passages arrive as <document id="n"> elements (as data); the one about cats gets 10.
            import re

            prompt = body["messages"][-1]["content"]
            passages = re.findall(r'<document id="(\d+)">\n(.*?)\n</document>', prompt, re.DOTALL)
            return {"scores": [{"id": int(n), "score": 10 if "cats" in text.casefold() else 0}
                               for n, text in passages]}

        server.responder = grade
        hits = index_search(collection=collection, query="term frequency and document length", k=3,
                            rerank="llm")
    assert hits[0].chunk_id == docs["cats"].chunks.get().pk
    assert hits[0].ranks["llm"] == 1 and hits[0].scores["llm"] == 10.0
    assert "bm25" in hits[0].ranks or "dense" in hits[0].ranks
    assert len(server.chat_requests) == 1  # one call grades the whole pool
