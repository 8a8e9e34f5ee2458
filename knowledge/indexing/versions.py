"""A collection's index folders (knowledge.indexing): versions, segments, and their clean-up.

`INDEX_ROOT/<collection id>/` holds one folder per version (a manifest listing its segments
and their delete mask, knowledge.retrieval.segments), the segments, and a merge's segment in
the making. Only the holder of the collection's lock writes here (knowledge.indexing.build
and .merge).
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Collection as Collection_
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from knowledge.indexing.rows import signatures
from knowledge.models import Collection, Document
from knowledge.retrieval.store import IndexData, write_index

# A merge builds its segment here, outside the lock; one left by a merge that died is
# deleted after this many seconds.
MERGING = "merging"
MERGING_STALE = 3600


def collection_index_dir(collection_id: int) -> Path:
    return Path(settings.INDEX_ROOT) / str(collection_id)


def commit_version(collection: Collection, root: Path, current: int, *, segments: list[str],
                   deleted: np.ndarray, meta: dict, publish: Collection_[int] = (),
                   collect: bool = False) -> int:
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
    with transaction.atomic():
        if publish:
            published = Document.objects.filter(pk__in=list(publish))
            published.filter(status=Document.Status.PROCESSING).update(
                status=Document.Status.READY, updated_at=timezone.now())
            # Publishing moves the documents' updated_at, so their signatures change with it:
            # the version records the new ones, or the next upload would take them for changed
            # documents and make their rows again.
            meta = {**meta, "documents": {**meta["documents"], **signatures(published)}}
        # Written inside the transaction: if writing fails, nothing is published; if the
        # commit fails, the folder is a leftover the next writer replaces (above).
        write_version(root / str(new), segments=segments, deleted=deleted, meta={**meta, "version": new})
        Collection.objects.filter(pk=collection.pk).update(index_version=F("index_version") + 1)
    collection.index_version = new
    for old in root.iterdir():
        if old.is_dir() and ((old.name.isdigit() and int(old.name) < current) or old.name.startswith(".")):
            shutil.rmtree(old, ignore_errors=True)
    if collect:
        collect_segments(root)
    return new


def collect_segments(root: Path) -> None:
    """Delete the segments no version in `root` lists (under the collection's lock)."""
    from knowledge.retrieval.segments import SEGMENTS, referenced_segments

    # Half-written ones too: this is the only writer.
    keep = referenced_segments(root)
    if (root / SEGMENTS).is_dir():
        for folder in (root / SEGMENTS).iterdir():
            if folder.name not in keep:
                shutil.rmtree(folder, ignore_errors=True)
    # A merge's segment in the making is left alone, unless its merge died long ago.
    if (root / MERGING).is_dir():
        for folder in (root / MERGING).iterdir():
            if time.time() - folder.stat().st_mtime > MERGING_STALE:
                shutil.rmtree(folder, ignore_errors=True)


def new_segment(root: Path, data: IndexData, version: int) -> str:
    """Write `data` as a segment; its name (unique: the version it came with, and a nonce)."""
    from knowledge.retrieval.segments import segment_dir

    name = f"{version}-{secrets.token_hex(4)}"
    write_index(data, segment_dir(root, name))
    return name
