"""Making a collection's next index version: `index_rebuild` (knowledge.indexing)."""

from __future__ import annotations

import logging
from collections.abc import Collection as Collection_

import numpy as np
from django.conf import settings
from django.db import transaction

from knowledge.indexing.incremental import plan_version
from knowledge.indexing.rows import included_chunks, included_documents, index_meta, make_rows
from knowledge.indexing.versions import collection_index_dir, commit_version, new_segment
from knowledge.models import Collection
from knowledge.retrieval.store import IndexData

log = logging.getLogger(__name__)


def index_rebuild(*, collection: Collection, publish: Collection_[int] = (), full: bool = False) -> int:
    """Make the collection's index of its READY documents and return the new version.

    `publish`: PROCESSING documents whose chunks are written (an ingestion that reached its
    last step); they go into this index and become READY when it is the one queries load,
    so a client that waits for `ready` never searches an index without its document.

    Incremental unless `full`: the new version lists the current one's segments, marks the
    rows of deleted or changed documents deleted, and adds one segment of the added or
    changed documents' rows (knowledge.indexing.incremental); `full` (or no usable current
    version) writes one segment of everything. Searches give the same results either way (retrieval.segments).
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
        previous = None if full or not current else root / str(current)
        plan = plan_version(collection.pk, publish, previous=previous)
        segments, deleted = plan.segments, plan.deleted
        if plan.fresh.size or not segments:
            segments = [*segments, new_segment(root, plan.fresh, current + 1)]
            deleted = np.concatenate([deleted, np.zeros(plan.fresh.size, dtype=bool)])
        meta = {**index_meta(collection.pk, default_embedder()), "documents": plan.documents}
        new = commit_version(collection, root, current, segments=segments, deleted=deleted, meta=meta,
                             publish=publish, collect=not plan.segments)
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


def _build(collection_id: int, publish: Collection_[int] = ()) -> IndexData:
    """The index of the collection's included chunks, made in full (one segment)."""
    from knowledge.embedding_cache import default_embedder

    embedder = default_embedder()
    return make_rows(included_chunks(collection_id, publish), embedder, index_meta(collection_id, embedder),
                     included_documents(collection_id, publish))
