"""What a collection's next index version is made of (knowledge.indexing.build writes it).

From the current version, when it can be built on: its segments, its delete mask with the
rows of deleted or changed documents added, and one new segment of the added or changed
documents' rows; else one segment of everything. See `plan_version`.
"""

from __future__ import annotations

import logging
from collections.abc import Collection as Collection_
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from knowledge.indexing.rows import (
    BUILDER,
    included_chunks,
    included_documents,
    index_meta,
    make_rows,
    signatures,
)
from knowledge.retrieval.store import IndexData

log = logging.getLogger(__name__)


@dataclass
class Plan:
    """What a new version is made of: the previous version's segments (`segments`, their rows'
    delete mask `deleted`), then `fresh` (the rows made now; a segment of its own unless empty),
    and the signature of every document it holds."""

    segments: list[str]
    deleted: np.ndarray
    fresh: IndexData
    documents: dict[str, str]


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


def plan_version(collection_id: int, publish: Collection_[int] = (), previous: Path | None = None) -> Plan:
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
    chunks = included_chunks(collection_id, publish)
    documents = included_documents(collection_id, publish)
    found = _previous(previous, embedder) if previous is not None else None
    if found is None:
        fresh = make_rows(chunks, embedder, index_meta(collection_id, embedder), documents)
        return Plan([], np.zeros(0, dtype=bool), fresh, dict(fresh.meta["documents"]))
    manifest, deleted, document_ids = found
    wanted = signatures(documents)
    old = manifest["documents"]
    reused = {d for d, sig in wanted.items() if old.get(d) == sig}
    changed = [int(d) for d in wanted if d not in reused]
    fresh = make_rows(chunks.filter(document_id__in=changed), embedder, index_meta(collection_id, embedder),
                      documents.filter(pk__in=changed))
    gone = [int(d) for d in old if d not in reused]
    if gone:
        deleted = deleted | np.isin(document_ids, gone)
    documents = {d: old[d] for d in reused} | fresh.meta["documents"]
    log.info("index of collection %s: %s rows kept, %s made, %s deleted", collection_id,
             int(np.count_nonzero(~deleted)), fresh.size, len(gone))
    return Plan(list(manifest["segments"]), deleted, fresh, documents)
