"""Incremental indexing: a version made from the previous one plus what changed equals a full build."""

from __future__ import annotations

import json

import numpy as np
import pytest

from knowledge import services
from knowledge.indexing import build, rows, search
from knowledge.indexing.build import index_rebuild
from knowledge.indexing.merge import index_merge
from knowledge.indexing.versions import collection_index_dir
from knowledge.models import Collection
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.segments import SegmentedIndex, read_version, segment_dir
from knowledge.retrieval.tokenize import query_terms
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
    return read_version(collection_index_dir(collection.pk) / str(version))


def _live(data) -> np.ndarray:
    """The positions of the rows a search may return."""
    return np.flatnonzero(data.live) if isinstance(data, SegmentedIndex) else np.arange(data.size)


def _rows_by_chunk(data) -> dict[int, tuple]:
    """Per live chunk id: its document, reference flag, vector and sentence vectors."""
    out = {}
    for p in _live(data).tolist():
        a, b = int(data.sent_offsets[p]), int(data.sent_offsets[p + 1])
        sentences = np.asarray(data.sent_vectors[np.arange(a, b)]).tobytes()
        out[int(data.chunk_ids[p])] = (int(data.document_ids[p]), bool(data.is_reference[p]),
                                       np.asarray(data.vectors[[p]]).tobytes(), sentences)
    return out


def _by_chunk(data, hits) -> list[tuple[int, float]]:
    """(chunk id, score) pairs, best first, ties by chunk id (a full build orders its rows
    by document, a segmented version by segment: only tied scores may come in another order)."""
    return sorted(((int(data.chunk_ids[p]), float(s)) for p, s in zip(*hits, strict=True)),
                  key=lambda x: (-x[1], x[0]))


def _assert_same_as_full(collection):
    """The version on disk holds the rows of a full build of the same chunks, and every search
    scores every chunk as the full build does, to the last bit."""
    incremental = _current(collection)
    full = build._build(collection.pk)
    assert _rows_by_chunk(incremental) == _rows_by_chunk(full)
    assert incremental.meta["documents"] == full.meta["documents"]
    embedder = search._query_vector
    for query in QUERIES:
        vector = embedder(incremental.meta["embedding_model"], query)
        tokens = query_terms(query)
        assert _by_chunk(incremental, incremental.bm25.top(tokens, 1000)) == _by_chunk(full, full.bm25.top(tokens, 1000))
        assert _by_chunk(incremental, incremental.dense_top(vector, 1000)) == _by_chunk(full, full.dense_top(vector, 1000))
        for mode in ("bm25", "dense", "rrf"):
            got = HybridSearcher(incremental).search(query, query_vector=vector, k=5, mode=mode)
            want = HybridSearcher(full).search(query, query_vector=vector, k=5, mode=mode)
            assert [(h.chunk_id, h.score) for h in got] == [(h.chunk_id, h.score) for h in want], (query, mode)


@pytest.fixture
def made(monkeypatch):
    """The chunk texts whose rows an index build made (split into sentences) since the last reset."""
    texts: list[str] = []
    split = rows._split_sentences

    def recording(text):
        texts.append(text)
        return split(text)

    monkeypatch.setattr(rows, "_split_sentences", recording)
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
    current = _current(collection)
    assert gone and not gone & set(current.chunk_ids[_live(current)].tolist())


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
    root = collection_index_dir(collection.pk)
    folder = root / str(Collection.objects.get(pk=collection.pk).index_version)
    for name in json.loads((folder / "manifest.json").read_text())["segments"]:
        (segment_dir(root, name) / "bm25_counts.npy").unlink()
    index_rebuild(collection=collection)
    assert len(made) == 1
    _assert_same_as_full(collection)


def _segments(collection) -> list[str]:
    folder = collection_index_dir(collection.pk) / str(Collection.objects.get(pk=collection.pk).index_version)
    return json.loads((folder / "manifest.json").read_text())["segments"]


def _searches(collection) -> list:
    data = _current(collection)
    out = []
    for query in QUERIES:
        vector = search._query_vector(data.meta["embedding_model"], query)
        for mode in ("bm25", "dense", "rrf", "minmax"):
            hits = HybridSearcher(data).search(query, query_vector=vector, k=5, mode=mode)
            out.append([(h.chunk_id, h.score, h.ranks) for h in hits])
    return out


def test_an_upload_writes_one_segment_and_a_merge_folds_them_without_changing_any_search(collection, made):
    docs = {title: _add(collection, title, chunks) for title, chunks in PAPERS.items()}
    index_rebuild(collection=collection)
    first = _segments(collection)
    first_files = {p.name: p.stat().st_mtime_ns for p in segment_dir(collection_index_dir(collection.pk),
                                                                     first[0]).iterdir()}
    _add(collection, "Zebrafish", [("Results", "Zebrafish regenerate heart tissue after an injury.")])
    index_rebuild(collection=collection)
    # The earlier rows are not written again: the new version lists the old segment as it was.
    assert _segments(collection)[:1] == first and len(_segments(collection)) == 2
    assert {p.name: p.stat().st_mtime_ns for p in segment_dir(collection_index_dir(collection.pk),
                                                              first[0]).iterdir()} == first_files
    # Re-ingesting writes new chunks under the same document: its old rows are masked.
    doc = docs["Cats"]
    doc.chunks.all().delete()
    make_chunk(document=doc, text="Domestic cats nap in the sun and sleep at night.", section_title="Sleep")
    made.clear()
    index_rebuild(collection=collection)
    assert made == ["Domestic cats nap in the sun and sleep at night."]
    services.document_delete(document=docs["BM25 at scale"])
    assert isinstance(_current(collection), SegmentedIndex) and len(_segments(collection)) == 3
    _assert_same_as_full(collection)

    before = _searches(collection)
    version = index_merge(collection=collection)
    assert version == Collection.objects.get(pk=collection.pk).index_version
    assert len(_segments(collection)) == 1 and not isinstance(_current(collection), SegmentedIndex)
    assert _searches(collection) == before
    _assert_same_as_full(collection)
    # The segments only older versions list are deleted by the next merge task (an upload
    # leaves them); with nothing left to fold, it does only that.
    index_rebuild(collection=collection)
    index_rebuild(collection=collection)
    on_disk = {p.name for p in (collection_index_dir(collection.pk) / "segments").iterdir()}
    assert on_disk > set(_segments(collection))
    assert index_merge(collection=collection) is None
    on_disk = {p.name for p in (collection_index_dir(collection.pk) / "segments").iterdir()}
    assert on_disk == set(_segments(collection))


def test_a_merge_is_queued_when_the_segments_pile_up(collection, monkeypatch, settings,
                                                     django_capture_on_commit_callbacks):
    from knowledge import tasks

    settings.INDEX_MERGE_QUEUE = True
    queued = []
    monkeypatch.setattr(build, "MERGE_AT", 2)
    monkeypatch.setattr(tasks.merge_index, "delay", queued.append)
    for i in range(3):
        _add(collection, f"Paper {i}", [("Body", f"Paper number {i} is about topic{i}.")])
        with django_capture_on_commit_callbacks(execute=True):
            index_rebuild(collection=collection)
    assert queued == [collection.pk] and len(_segments(collection)) == 3
    before = _searches(collection)
    tasks.merge_index(collection.pk)
    assert len(_segments(collection)) == 1 and _searches(collection) == before
    tasks.merge_index(collection.pk + 1000)  # a collection that is gone: nothing happens


def test_uploads_and_deletions_during_a_merge_are_kept(collection, monkeypatch):
    from knowledge.retrieval import merge

    docs = {title: _add(collection, title, chunks) for title, chunks in PAPERS.items()}
    index_rebuild(collection=collection)
    _add(collection, "Zebrafish", [("Results", "Zebrafish regenerate heart tissue after an injury.")])
    index_rebuild(collection=collection)
    concat = merge.concat

    def meanwhile(parts, meta):
        # While the merged segment is built (outside the lock): one upload, one deletion.
        _add(collection, "Axolotl", [("Results", "Axolotls regrow whole limbs.")])
        index_rebuild(collection=collection)
        services.document_delete(document=docs["Cats"])
        return concat(parts, meta)

    monkeypatch.setattr(merge, "concat", meanwhile)
    assert index_merge(collection=collection) is not None
    assert len(_segments(collection)) == 2  # the merged one, then the upload's
    _assert_same_as_full(collection)
    monkeypatch.setattr(merge, "concat", concat)
    assert index_merge(collection=collection) is not None
    assert len(_segments(collection)) == 1
    _assert_same_as_full(collection)


def test_a_merge_is_dropped_when_another_replaced_its_segments(collection, monkeypatch):
    from knowledge.retrieval import merge

    _add(collection, "Cats", PAPERS["Cats"])
    index_rebuild(collection=collection)
    _add(collection, "Zebrafish", [("Results", "Zebrafish regenerate heart tissue after an injury.")])
    index_rebuild(collection=collection)
    concat = merge.concat
    inner: list = []

    def meanwhile(parts, meta):
        if not inner:
            inner.append(None)  # the inner merge builds with the plain concat
            inner[0] = index_merge(collection=collection)
        return concat(parts, meta)

    monkeypatch.setattr(merge, "concat", meanwhile)
    assert index_merge(collection=collection) is None
    assert inner[0] is not None and len(_segments(collection)) == 1
    assert not list((collection_index_dir(collection.pk) / "merging").iterdir())
    _assert_same_as_full(collection)


def test_a_re_embedding_changes_the_signature_and_remakes_the_rows(collection, made):
    from django.utils import timezone

    from knowledge.models import Chunk, Document

    docs = {title: _add(collection, title, chunks) for title, chunks in PAPERS.items()}
    index_rebuild(collection=collection)
    made.clear()
    # What collection_reembed writes: new text hashes under the same chunk ids, and the
    # documents' updated_at with them.
    Chunk.objects.filter(document=docs["Cats"]).update(text_hash="another-model")
    Document.objects.filter(pk=docs["Cats"].pk).update(updated_at=timezone.now())
    index_rebuild(collection=collection)
    assert made == [PAPERS["Cats"][0][1]]  # the reference chunk is not split
    _assert_same_as_full(collection)


def test_publishing_a_document_does_not_make_the_next_upload_remake_its_rows(collection, made):
    """Publishing sets a document READY and moves its updated_at: the version must record the
    signature it has after that, or every upload would remake the previous upload's rows."""
    from knowledge.models import Document

    _add(collection, "Cats", PAPERS["Cats"])
    index_rebuild(collection=collection)
    dense = _add(collection, "Dense retrieval", PAPERS["Dense retrieval"])
    Document.objects.filter(pk=dense.pk).update(status=Document.Status.PROCESSING)
    index_rebuild(collection=collection, publish=[dense.pk])
    assert Document.objects.get(pk=dense.pk).status == Document.Status.READY

    made.clear()
    _add(collection, "Zebrafish", [("Results", "Zebrafish regenerate heart tissue after an injury.")])
    index_rebuild(collection=collection)
    assert made == ["Zebrafish regenerate heart tissue after an injury."], "only the new paper is made"
    _assert_same_as_full(collection)
