"""The per-collection search index: the Django edge of knowledge.retrieval.

The index is derived data. `index_rebuild` writes what changed among the READY documents'
chunks as a new immutable segment plus a delete mask, lists them as version
`INDEX_ROOT/<collection id>/<version>/` (knowledge.retrieval.segments) and bumps
`Collection.index_version`; `index_merge` (in the background) folds the segments into one;
`index_search` loads the version the database names (once per process, cached by
(collection, version)) and searches it. A process that holds an older
version notices on its next search, because it reads `index_version` from the database
every time, and reloads. See docs/retrieval.md.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import shutil
import threading
import time
from collections.abc import Collection as Collection_
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge.models import Chunk, Collection, Document
from knowledge.retrieval.engine import MODES, HybridSearcher, SearchHit, needs_vector
from knowledge.retrieval.rerank import LLMReranker, Reranker, ScoreFn, SentenceReranker
from knowledge.retrieval.segments import is_complete, read_version
from knowledge.retrieval.store import IndexData, read_index, write_index

log = logging.getLogger(__name__)

RERANKERS = ("sentence", "llm")
# Loaded indexes by collection folder (INDEX_ROOT/<id>, so tests with their own INDEX_ROOT
# never share one): (version, searcher). One entry per collection, so an old version is
# dropped (and its memory maps closed once unreferenced) when a new one loads.
_LOADED: dict[Path, tuple[int, HybridSearcher]] = {}
_LOAD_LOCK = threading.Lock()


def default_llm_scorer() -> ScoreFn:
    """The grader of rerank="llm" when a search is not handed one: made by the factory that
    settings.RERANK_LLM_SCORER names. knowledge knows no LLM; the wiring (portal/settings.py)
    points it at the agent's, so knowledge's search page, API and command offer the LLM
    reranker without knowledge importing agent."""
    from django.utils.module_loading import import_string

    return import_string(settings.RERANK_LLM_SCORER)()


def collection_index_dir(collection_id: int) -> Path:
    return Path(settings.INDEX_ROOT) / str(collection_id)


def _split_sentences(text: str) -> list[str]:
    # The agent's local roles quote sentences with the same splitter (knowledge.text), so a
    # sentence the reranker scores is a sentence the auditor can cite.
    from knowledge.text import split_sentences

    return split_sentences(text)


def _chunk_vectors(rows: list[tuple], embedder: Any) -> np.ndarray:
    """Chunk vectors from the embedding cache by text_hash; chunks without one are embedded."""
    from knowledge.embedding_cache import embed_with_cache, vectors_for_keys

    cached = vectors_for_keys(r[3] for r in rows if r[3])
    out = np.zeros((len(rows), embedder.dim), dtype=np.float32)
    missing: list[int] = []
    for i, row in enumerate(rows):
        vec = cached.get(row[3]) if row[3] else None
        if vec is None or vec.shape[0] != embedder.dim:
            missing.append(i)
        else:
            out[i] = vec
    if missing:
        out[missing] = embed_with_cache([rows[i][2] for i in missing], embedder=embedder)
    return out


def bm25_text(title: str, section_title: str, text: str) -> str:
    """What BM25 indexes for a chunk: its document's title and section heading, then its text.

    A question often names the paper or the method ("How does Ragas turn ...") while the
    chunk that answers it never repeats that name. The heading line lets BM25 match it; a
    title term is in every chunk of its document, so its idf stays modest in a collection
    of many documents. On the devbench papers this lifted BM25's evidence recall@5 from
    0.42 to 0.56 (docs/benchmarks.md). Dense vectors embed the chunk text alone, which fits
    the model's 256 word pieces.
    """
    return f"{title}\n{section_title}\n{text}"


# Bump when what a chunk's index rows are made of changes (tokeniser, sentence selection,
# bm25_text, the document signature): a previous version built otherwise is not built on,
# the index is rebuilt.
BUILDER = 3


def _signatures(documents) -> dict[str, str]:
    """Per document (id as text, as JSON keys are) of the `documents` queryset: a stamp of
    its title and `updated_at`, which its rows in the index are a function of.

    A document's chunk rows change only together with its `updated_at`: ingestion deletes
    and writes them in the transaction that sets it, a re-embedding sets it with the new
    text hashes (services.collection_reembed), a rename saves the row; and BM25 indexes the
    title with every chunk. So one read of the collection's document rows tells what changed,
    whatever the number of chunks. The chunk rows themselves (a grouped query over them)
    took 7.7 of the 8.5 s of an upload's index step at 1M chunks (docs/benchmarks.md,
    "Segments"). A writer of chunk rows must keep this rule (tests/factories.make_chunk does).
    """
    from django.db.models import CharField
    from django.db.models.functions import Cast

    # The time as the database stores it (no datetime made per row: at 20k documents that
    # conversion and a JSON dump per row were most of an upload's index step).
    rows = documents.order_by().values_list("id", "title", Cast("updated_at", output_field=CharField()))
    return {str(pk): f"{updated}|{hashlib.sha256(title.encode()).hexdigest()[:16]}" for pk, title, updated in rows}


def _included_documents(collection_id: int, publish: Collection_[int]):
    included = Q(status=Document.Status.READY) | Q(pk__in=list(publish), status=Document.Status.PROCESSING)
    return Document.objects.filter(included, collection_id=collection_id)


def _included(collection_id: int, publish: Collection_[int]):
    included = Q(document__status=Document.Status.READY) | Q(document_id__in=list(publish),
                                                              document__status=Document.Status.PROCESSING)
    return Chunk.objects.filter(included, document__collection_id=collection_id).order_by("document_id", "ordinal")


def _make_rows(chunks, embedder: Any, meta: dict, documents) -> IndexData:
    """The index rows of `chunks` (a queryset in document, ordinal order), made from scratch;
    `documents`: theirs (meta["documents"] gets their signatures)."""
    from knowledge.embedding_cache import embed_with_cache
    from knowledge.retrieval.bm25 import BM25Index
    from knowledge.retrieval.tokenize import tokenize

    rows = list(chunks.values_list("id", "document_id", "text", "text_hash", "is_reference", "document__title",
                                   "section_title"))
    vectors = _chunk_vectors(rows, embedder) if rows else np.zeros((0, embedder.dim), dtype=np.float32)
    # Sentence vectors for the sentence reranker (and, through the cache, the auditor).
    # A reference-section chunk gets none: the reranker then scores it by its chunk vector.
    # Bibliography entries split into many fragments that no answer quotes, and embedding
    # them was a third of the index build of a long paper.
    # Only answer-eligible sentences get one, in the form the auditor quotes (knowledge.text.
    # quotable: a glued heading or footnote number cut off), so its embeddings are cache hits:
    # a heading, a figure label or a table row is never the best sentence of a chunk, and
    # skipping them saves their embedding time.
    from knowledge.text import quotable

    sentences: list[str] = []
    offsets = [0]
    for row in rows:
        if not row[4]:
            sentences.extend(q for q in map(quotable, _split_sentences(row[2])) if q)
        offsets.append(len(sentences))
    sent_vectors = embed_with_cache(sentences, embedder=embedder) if sentences else np.zeros(
        (0, embedder.dim), dtype=np.float32)
    meta["documents"].update(_signatures(documents))
    return IndexData(
        chunk_ids=np.array([r[0] for r in rows], dtype=np.int64),
        document_ids=np.array([r[1] for r in rows], dtype=np.int64),
        is_reference=np.array([r[4] for r in rows], dtype=bool),
        bm25=BM25Index.build(tokenize(bm25_text(r[5], r[6], r[2])) for r in rows),
        vectors=vectors,
        sent_vectors=sent_vectors,
        sent_offsets=np.array(offsets, dtype=np.int64),
        meta=meta,
    )


@dataclass
class _Plan:
    """What a new version is made of: the previous version's segments (`segments`, their rows'
    delete mask `deleted`), then `fresh` (the rows made now; a segment of its own unless empty),
    and the signature of every document it holds."""

    segments: list[str]
    deleted: np.ndarray
    fresh: IndexData
    documents: dict[str, str]


def _meta(collection_id: int, embedder: Any) -> dict[str, Any]:
    return {"embedding_model": embedder.model_id, "collection": collection_id, "builder": BUILDER,
            "documents": {}}


def _previous(folder: Path, embedder: Any) -> tuple[dict, np.ndarray, np.ndarray] | None:
    """(manifest, delete mask, document id of each row) of the version in `folder` when a new
    version can be made from it, else None (a full build)."""
    from knowledge.retrieval.segments import is_segmented, read_manifest, segment_dir

    if not (folder / "manifest.json").exists():
        return None
    try:
        manifest = read_manifest(folder)
        # A version written before segments (one folder of its own) is not built on.
        if not is_segmented(manifest):
            return None
        same = (manifest.get("builder") == BUILDER and manifest.get("embedding_model") == embedder.model_id
                and isinstance(manifest.get("documents"), dict))
        if not same:
            return None
        # Only what the plan needs is read (not the vocabularies or vectors); a segment written
        # without its term counts cannot be merged later.
        parts = [segment_dir(folder.parent, name) for name in manifest["segments"]]
        if not all((p / "bm25_counts.npy").exists() for p in parts):
            return None
        deleted = np.load(folder / "deleted.npy")
        document_ids = np.concatenate([np.zeros(0, dtype=np.int64)]
                                      + [np.load(p / "document_ids.npy", mmap_mode="r") for p in parts])
    except Exception:  # a damaged or foreign folder: the full build replaces it
        log.warning("index folder %s is unreadable; rebuilding in full", folder, exc_info=True)
        return None
    return (manifest, deleted, document_ids) if len(deleted) == len(document_ids) else None


def _build(collection_id: int, publish: Collection_[int] = ()) -> IndexData:
    """The index of the collection's included chunks, made in full (one segment)."""
    from knowledge.embedding_cache import default_embedder

    embedder = default_embedder()
    return _make_rows(_included(collection_id, publish), embedder, _meta(collection_id, embedder),
                      _included_documents(collection_id, publish))


def _plan(collection_id: int, publish: Collection_[int] = (), previous: Path | None = None) -> _Plan:
    """The next version: from the version in folder `previous` (when there is a usable one),
    only what changed; else everything, made in full.

    From a previous version: a document whose rows are unchanged (same signature) keeps its
    rows where they are; the rows of a deleted or changed document are marked deleted; the
    added or changed documents' rows are made (read, split, tokenised, vectors through the
    embedding cache) into `fresh`, the new segment. Nothing else is read or written, so
    the cost is the changed documents' plus a mask over the rows (docs/retrieval.md).
    """
    from knowledge.embedding_cache import default_embedder

    embedder = default_embedder()
    chunks = _included(collection_id, publish)
    documents = _included_documents(collection_id, publish)
    found = _previous(previous, embedder) if previous is not None else None
    if found is None:
        fresh = _make_rows(chunks, embedder, _meta(collection_id, embedder), documents)
        return _Plan([], np.zeros(0, dtype=bool), fresh, dict(fresh.meta["documents"]))
    manifest, deleted, document_ids = found
    wanted = _signatures(documents)
    old = manifest["documents"]
    reused = {d for d, sig in wanted.items() if old.get(d) == sig}
    changed = [int(d) for d in wanted if d not in reused]
    fresh = _make_rows(chunks.filter(document_id__in=changed), embedder, _meta(collection_id, embedder),
                       documents.filter(pk__in=changed))
    gone = [int(d) for d in old if d not in reused]
    if gone:
        deleted = deleted | np.isin(document_ids, gone)
    documents = {d: old[d] for d in reused} | fresh.meta["documents"]
    log.info("index of collection %s: %s rows kept, %s made, %s deleted", collection_id,
             int(np.count_nonzero(~deleted)), fresh.size, len(gone))
    return _Plan(list(manifest["segments"]), deleted, fresh, documents)


def _commit(collection: Collection, root: Path, current: int, *, segments: list[str], deleted: np.ndarray,
            meta: dict, publish: Collection_[int] = (), collect: bool = False) -> int:
    """Write version current + 1 (its segments are written already), make it the one readers
    load, and delete the versions before current; with `collect`, also the segments no
    remaining version lists. Called under the collection's lock.

    An upload does not collect: the segments a merge replaced are as big as the collection,
    and deleting their files took half a second at 100k chunks; the next merge (queued after
    every change) or full build deletes them in the background."""
    from knowledge.retrieval.segments import write_version

    new = current + 1
    # A folder with this number can only be left over from a database that was reset
    # (no reader can know the number yet): replace it.
    shutil.rmtree(root / str(new), ignore_errors=True)
    write_version(root / str(new), segments=segments, deleted=deleted, meta={**meta, "version": new})
    with transaction.atomic():
        Collection.objects.filter(pk=collection.pk).update(index_version=F("index_version") + 1)
        if publish:
            Document.objects.filter(pk__in=list(publish), status=Document.Status.PROCESSING).update(
                status=Document.Status.READY, updated_at=timezone.now())
    collection.index_version = new
    for old in root.iterdir():
        if old.is_dir() and ((old.name.isdigit() and int(old.name) < current) or old.name.startswith(".")):
            shutil.rmtree(old, ignore_errors=True)
    if collect:
        _collect(root)
    return new


def _collect(root: Path) -> None:
    """Delete the segments no version in `root` lists (under the collection's lock)."""
    from knowledge.retrieval.segments import SEGMENTS, referenced_segments

    # Half-written ones too: this is the only writer.
    keep = referenced_segments(root)
    if (root / SEGMENTS).is_dir():
        for folder in (root / SEGMENTS).iterdir():
            if folder.name not in keep:
                shutil.rmtree(folder, ignore_errors=True)
    # A merge's segment in the making is left alone, unless its merge died long ago.
    if (root / _MERGING).is_dir():
        for folder in (root / _MERGING).iterdir():
            if time.time() - folder.stat().st_mtime > _MERGING_STALE:
                shutil.rmtree(folder, ignore_errors=True)


def _new_segment(root: Path, data: IndexData, version: int) -> str:
    """Write `data` as a segment; its name (unique: the version it came with, and a nonce)."""
    from knowledge.retrieval.segments import segment_dir

    name = f"{version}-{secrets.token_hex(4)}"
    write_index(data, segment_dir(root, name))
    return name


def index_rebuild(*, collection: Collection, publish: Collection_[int] = (), full: bool = False) -> int:
    """Make the collection's index of its READY documents and return the new version.

    `publish`: PROCESSING documents whose chunks are written (an ingestion that reached its
    last step); they go into this index and become READY when it is the one queries load,
    so a client that waits for `ready` never searches an index without its document.

    Incremental unless `full`: the new version lists the current one's segments, marks the
    rows of deleted or changed documents deleted, and adds one segment of the added or
    changed documents' rows (_plan); `full` (or no usable current version) writes one
    segment of everything. Searches give the same results either way (retrieval.segments).
    When the segments pile up, index_merge folds them (a task on the `sweep` queue).

    Steps, under a file lock per collection so two writers never write at once:
    1. read the chunks and their cached vectors (embedding only what the cache lacks);
    2. write the new segment, then version N+1 into a fresh folder (atomic renames, see
       retrieval.store);
    3. bump Collection.index_version with an F() update, so readers switch to N+1, and in
       the same transaction mark the `publish` documents READY;
    4. delete versions older than N, and the segments no remaining version lists: N itself
       stays one round for processes that are between reading the version number and
       opening its files.
    The lock is taken before reading the chunks: a rebuild that starts after a commit
    always sees that commit, so the last rebuild to finish has the newest state. A
    published document is READY before the lock is released, so every later rebuild
    includes it.
    """
    from filelock import FileLock

    from knowledge.embedding_cache import default_embedder

    root = collection_index_dir(collection.pk)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / ".lock")):
        current = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).get()
        plan = _plan(collection.pk, publish, previous=None if full or not current else root / str(current))
        segments, deleted = plan.segments, plan.deleted
        if plan.fresh.size or not segments:
            segments = [*segments, _new_segment(root, plan.fresh, current + 1)]
            deleted = np.concatenate([deleted, np.zeros(plan.fresh.size, dtype=bool)])
        meta = {**_meta(collection.pk, default_embedder()), "documents": plan.documents}
        new = _commit(collection, root, current, segments=segments, deleted=deleted, meta=meta, publish=publish,
                      collect=not plan.segments)
    log.info("index of collection %s is now version %s (%s segments, %s rows, %s deleted)", collection.pk, new,
             len(segments), len(deleted), int(np.count_nonzero(deleted)))
    if len(segments) > MERGE_AT or np.count_nonzero(deleted):
        _queue_merge(collection.pk)
    return new


# A version of more segments than this, or with any row deleted, is merged in the background
# (index_merge). 1: after every change. A segmented version scores BM25 from the term counts
# of every matching chunk, so its searches are slower than a single segment's MaxScore
# (docs/benchmarks.md, "Segments"): merging promptly keeps that window short.
MERGE_AT = 1


def _queue_merge(collection_id: int) -> None:
    from knowledge.tasks import merge_index

    if not settings.INDEX_MERGE_QUEUE:
        return

    def send() -> None:
        # A merge only saves search time: a broker that is down must not fail the upload
        # whose document is already published; the next index change queues it again.
        try:
            merge_index.delay(collection_id)
        except Exception:
            log.warning("could not queue the index merge of collection %s", collection_id, exc_info=True)

    transaction.on_commit(send)


# A merge builds its segment here, outside the lock; one left by a merge that died is
# deleted after this many seconds.
_MERGING = "merging"
_MERGING_STALE = 3600


def _current_version(collection: Collection, root: Path) -> tuple[int, dict, np.ndarray] | None:
    """(number, manifest, delete mask) of the collection's current segmented version, or None."""
    from knowledge.retrieval.segments import is_segmented, read_manifest

    current = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).get()
    folder = root / str(current)
    if not current or not (folder / "manifest.json").exists():
        return None
    manifest = read_manifest(folder)
    if not is_segmented(manifest):
        return None
    return current, manifest, np.load(folder / "deleted.npy")


def index_merge(*, collection: Collection) -> int | None:
    """Fold the current version's segments into one (its live rows, in order) and make that
    the current version; None when there is nothing to fold (one segment, nothing deleted)
    or another merge got there first.

    Searches before and after give the same results (retrieval.segments: a segmented version
    is searched as the merged index of its live rows). Like a Lucene merge, the merged
    segment is built outside the collection's lock, so uploads go on meanwhile:
    1. under the lock, read the current version V (its segments S and delete mask);
    2. without it, write the live rows of S as one segment (linear in the collection);
    3. under the lock again, read the current version V': when it still starts with S (no
       other merge replaced them), write V'+1 = the merged segment, then the segments V'
       added after S; rows of S that V' deleted since V are deleted in the merged segment
       too. Otherwise drop the merged segment.
    Safe to run twice: the second finds one segment and returns None.
    """
    from filelock import FileLock

    from knowledge.retrieval.merge import concat, take
    from knowledge.retrieval.segments import segment_dir

    root = collection_index_dir(collection.pk)
    if not root.is_dir():
        return None
    lock = FileLock(str(root / ".lock"))
    with lock:
        found = _current_version(collection, root)
        if found is not None and len(found[1]["segments"]) == 1 and not found[2].any():
            # Nothing to fold; what uploads left (segments of older versions) goes now.
            _collect(root)
            return None
    if found is None:
        return None
    version, manifest, deleted = found
    names = list(manifest["segments"])
    parts, start = [], 0
    for name in names:
        part = read_index(segment_dir(root, name))
        parts.append(take(part, np.flatnonzero(~deleted[start:start + part.size])))
        start += part.size
    meta = {k: manifest[k] for k in ("embedding_model", "collection", "builder")}
    merged = concat(parts, {**meta, "documents": {}})
    name = f"{version + 1}-{secrets.token_hex(4)}"
    write_index(merged, root / _MERGING / name)
    with lock:
        found = _current_version(collection, root)
        if found is None or found[1]["segments"][:len(names)] != names:
            shutil.rmtree(root / _MERGING / name, ignore_errors=True)
            log.info("merge of collection %s dropped: its segments changed meanwhile", collection.pk)
            return None
        current, now, now_deleted = found
        # The merged rows are the rows of S live in V, in order; V' may have deleted more of them.
        kept = np.flatnonzero(~deleted)
        (root / _MERGING / name).replace(segment_dir(root, name))
        new = _commit(collection, root, current, segments=[name, *now["segments"][len(names):]],
                      deleted=np.concatenate([now_deleted[:len(deleted)][kept], now_deleted[len(deleted):]]),
                      meta={k: now[k] for k in ("embedding_model", "collection", "builder", "documents")},
                      collect=True)
    log.info("index of collection %s merged into version %s (%s segments, %s rows)", collection.pk, new,
             len(names), merged.size)
    return new


def _searcher(collection: Collection, version: int) -> HybridSearcher:
    root = collection_index_dir(collection.pk)
    with _LOAD_LOCK:
        loaded = _LOADED.get(root)
        if loaded and loaded[0] == version:
            return loaded[1]
    folder = root / str(version)
    if not is_complete(folder):
        # The files are derived data: a fresh volume (or a lost folder) is rebuilt, not an error.
        log.warning("index files of collection %s version %s are missing; rebuilding", collection.pk, version)
        version = index_rebuild(collection=collection)
        folder = root / str(version)
    searcher = HybridSearcher(read_version(folder), threads=settings.SEARCH_THREADS)
    with _LOAD_LOCK:
        _LOADED[root] = (version, searcher)
    return searcher


def _matches(document: tuple[int, str, Any, str], filters: Mapping[str, Any]) -> bool:
    _, title, metadata, file_name = document
    metadata = metadata if isinstance(metadata, dict) else {}
    for key, wanted in filters.items():
        if wanted in (None, "", []):
            continue
        if key == "title":
            # The file name is the document's second label (its title is read from the file).
            haystack = f"{title} {metadata.get('title', '')} {file_name}".casefold()
            if str(wanted).casefold() not in haystack:
                return False
        elif key == "year":
            year = metadata.get("year")
            try:
                year = int(year)
            except (TypeError, ValueError):
                return False
            lo, hi = (wanted if isinstance(wanted, (list, tuple)) else (wanted, wanted))
            if not (int(lo) <= year <= int(hi)):
                return False
        elif key in ("tag", "tags"):
            tags = metadata.get("tags", metadata.get("tag", []))
            tags = [tags] if isinstance(tags, str) else list(tags or [])
            wanted_tags = [wanted] if isinstance(wanted, str) else list(wanted)
            have = {str(t).casefold() for t in tags}
            if not all(str(t).casefold() in have for t in wanted_tags):
                return False
        else:
            raise ValueError(f"Unknown filter {key!r}: use title, year or tag.")
    return True


def _allowed_mask(collection: Collection, searcher: HybridSearcher, document_ids: list[int] | None,
                  filters: Mapping[str, Any] | None) -> np.ndarray | None:
    """Rows of the index whose document is READY now and passes the filters (None: all rows)."""
    docs = Document.objects.filter(collection=collection, status=Document.Status.READY)
    if document_ids is not None:
        docs = docs.filter(pk__in=document_ids)
    rows = list(docs.values_list("id", "title", "metadata", "original_name"))
    if filters:
        rows = [r for r in rows if _matches(r, filters)]
    return searcher.data.rows_of(np.array([r[0] for r in rows], dtype=np.int64))


@lru_cache(maxsize=256)
def _query_vector(model_id: str, query: str) -> np.ndarray:
    from knowledge.embedding_cache import default_embedder

    return default_embedder().embed([query])[0]


def _reranker(name: str | None, searcher: HybridSearcher, llm_scorer: ScoreFn | None) -> Reranker | None:
    if name in (None, ""):
        return None
    if name == "sentence":
        return SentenceReranker()
    if name == "llm":
        ids = searcher.data.chunk_ids

        def text_of(position: int) -> str:
            return Chunk.objects.values_list("text", flat=True).get(pk=int(ids[position]))

        return LLMReranker(llm_scorer or default_llm_scorer(), text_of)
    raise ValueError(f"Unknown reranker {name!r}: use one of {', '.join(RERANKERS)}.")


def index_search(*, collection: Collection, query: str, k: int = 5, mode: str = "rrf",
                 document_ids: list[int] | None = None, rerank: str | None = None,
                 filters: Mapping[str, Any] | None = None, llm_scorer: ScoreFn | None = None) -> list[SearchHit]:
    """The k best chunks of the collection for `query`, best first.

    mode: "bm25", "dense", "rrf" (default) or "minmax"; rerank: None, "sentence" or "llm".
    document_ids and filters ({"title": str, "year": int | (lo, hi), "tag": str}) restrict
    the documents searched. `llm_scorer` grades passages for rerank="llm" (default: the one
    named by settings.RERANK_LLM_SCORER). Only chunks of documents that are READY at the time of the
    call are returned, even if the loaded index still holds older ones.
    """
    if mode not in MODES:
        raise ValueError(f"Unknown search mode {mode!r}: use one of {', '.join(MODES)}.")
    version = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).first()
    if not version or not query.strip():
        return []
    searcher = _searcher(collection, version)
    allowed = _allowed_mask(collection, searcher, document_ids, filters)
    if allowed is not None and not allowed.any():
        return []
    vector = None
    if needs_vector(mode, rerank):
        vector = _query_vector(searcher.data.meta.get("embedding_model", ""), query)
    hits = searcher.search(query, query_vector=vector, k=k, mode=mode, allowed=allowed,
                           reranker=_reranker(rerank, searcher, llm_scorer))
    # Belt and braces: a chunk deleted after the document check above is still never shown.
    live = set(Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list("pk", flat=True))
    return [h for h in hits if h.chunk_id in live]


def index_sentence_search(*, collection: Collection, query: str, k: int = 5) -> list[SearchHit]:
    """The k chunks of the collection whose best answer-eligible sentence is closest to
    `query` (cosine of the stored sentence vectors, knowledge.retrieval.sentences), best
    first; only chunks of READY documents."""
    from knowledge.retrieval.sentences import top_sentence_chunks

    version = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).first()
    if not version or not query.strip() or k <= 0:
        return []
    searcher = _searcher(collection, version)
    allowed = _allowed_mask(collection, searcher, None, None)
    vector = _query_vector(searcher.data.meta.get("embedding_model", ""), query)
    data = searcher.data
    hits = [SearchHit(chunk_id=int(data.chunk_ids[pos]), score=score, scores={"sentence": score},
                      document_id=int(data.document_ids[pos]), position=pos)
            for pos, score in top_sentence_chunks(data, vector, k, allowed)]
    live = set(Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list("pk", flat=True))
    return [h for h in hits if h.chunk_id in live]
