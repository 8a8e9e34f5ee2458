"""Folding a collection's index segments into one: `index_merge` (knowledge.indexing)."""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path

import numpy as np

from knowledge.indexing.versions import MERGING, collect_segments, collection_index_dir, commit_version
from knowledge.models import Collection
from knowledge.retrieval.store import read_index, write_index

log = logging.getLogger(__name__)


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
            collect_segments(root)
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
    write_index(merged, root / MERGING / name)
    with lock:
        found = _current_version(collection, root)
        if found is None or found[1]["segments"][:len(names)] != names:
            shutil.rmtree(root / MERGING / name, ignore_errors=True)
            log.info("merge of collection %s dropped: its segments changed meanwhile", collection.pk)
            return None
        current, now, now_deleted = found
        # The merged rows are the rows of S live in V, in order; V' may have deleted more of them.
        kept = np.flatnonzero(~deleted)
        (root / MERGING / name).replace(segment_dir(root, name))
        new = commit_version(
            collection, root, current, segments=[name, *now["segments"][len(names):]],
            deleted=np.concatenate([now_deleted[:len(deleted)][kept], now_deleted[len(deleted):]]),
            meta={k: now[k] for k in ("embedding_model", "collection", "builder", "documents")}, collect=True)
    log.info("index of collection %s merged into version %s (%s segments, %s rows)", collection.pk, new,
             len(names), merged.size)
    return new
