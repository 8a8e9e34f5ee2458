"""An index version made of immutable segments plus a delete mask (issue 16).

A version folder `<root>/<N>/` holds `manifest.json` (the meta of the version and the names
of its segments, in order) and `deleted.npy` (bool, one per row of the segments taken in
order: True for a row whose document was deleted or re-made since its segment was written).
Each segment is an ordinary index folder (knowledge.retrieval.store) under
`<root>/segments/<name>/`, written once and never changed, shared by every version that
lists it. So a version that adds one document writes that document's segment and a new mask,
never the rows of the others; a merge folds segments into one (merge.take + merge.concat)
and writes a version that lists it instead (docs/retrieval.md, "Segments").

A version of one segment without deleted rows loads as that segment's IndexData: the search
path of a single index, weights exact. Any other loads as a SegmentedIndex, whose BM25 scores
come from the stored term counts and the statistics of the live rows of all segments (N,
df, average length, rank-bm25's mean idf), computed the way BM25Index.from_counts computes
them and summed in the order of its kernels: each score equals, to the last bit, the one
the merged index (the live rows in segment order) gives the same chunk, and the ranking is
the same, ties to the lower position (tests/knowledge/test_indexing_segments.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from knowledge.retrieval.bm25 import top_k
from knowledge.retrieval.dense import dense_search
from knowledge.retrieval.segments_bm25 import SegmentedBM25
from knowledge.retrieval.store import IndexData, atomic_folder, read_index

FORMAT = 2
SEGMENTS = "segments"


def segment_dir(root: Path, name: str) -> Path:
    return Path(root) / SEGMENTS / name


def write_version(target: Path, *, segments: Sequence[str], deleted: np.ndarray, meta: dict) -> Path:
    """Write the version folder `target` (delete mask, then manifest) atomically."""
    with atomic_folder(target) as tmp:
        np.save(tmp / "deleted.npy", np.asarray(deleted, dtype=bool))
        manifest = {
            **meta,
            "format": FORMAT,
            "segments": list(segments),
            "chunks": len(deleted),
            "deleted": int(np.count_nonzero(deleted)),
        }
        # Not indented: it holds a signature per document (0.18 s at 20k documents indented).
        (tmp / "manifest.json").write_text(json.dumps(manifest))
    return Path(target)


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text())


def is_segmented(manifest: dict) -> bool:
    return "segments" in manifest


def read_version(folder: Path) -> IndexData | SegmentedIndex:
    """Load the version in `folder` (segments memory-mapped); a folder written before segments
    (one index, store.write_index) loads as it always did."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if not is_segmented(manifest):
        return read_index(folder)
    parts = [read_index(segment_dir(folder.parent, name)) for name in manifest["segments"]]
    deleted = np.load(folder / "deleted.npy")
    if len(parts) == 1 and not deleted.any():
        data = parts[0]
        data.meta = {**data.meta, **manifest}
        return data
    return SegmentedIndex(parts, deleted, manifest)


def is_complete(folder: Path) -> bool:
    """Whether the version in `folder` and every segment it lists are on disk."""
    folder = Path(folder)
    if not (folder / "manifest.json").exists():
        return False
    names = read_manifest(folder).get("segments", [])
    return all((segment_dir(folder.parent, name) / "manifest.json").exists() for name in names)


def referenced_segments(root: Path) -> set[str]:
    """The segment names listed by the version folders under `root`."""
    names: set[str] = set()
    for folder in Path(root).iterdir():
        if folder.is_dir() and folder.name.isdigit() and (folder / "manifest.json").exists():
            names.update(read_manifest(folder).get("segments", []))
    return names


class _Rows:
    """Rows of several arrays taken in order, indexed as one (the rerank reads a few rows)."""

    def __init__(self, arrays: Sequence[np.ndarray], starts: np.ndarray) -> None:
        self.arrays, self.starts = list(arrays), starts

    def __getitem__(self, index):
        index = np.asarray(index, dtype=np.int64)
        flat = index.reshape(-1)
        part = np.searchsorted(self.starts, flat, side="right") - 1
        out = np.empty((len(flat), *self.arrays[0].shape[1:]), dtype=np.float32)
        for p in np.unique(part):
            here = part == p
            out[here] = np.asarray(self.arrays[p][flat[here] - self.starts[p]])
        return out.reshape(*index.shape, *out.shape[1:])


class SegmentedIndex:
    """Several segments and a delete mask, searched as the one index of their live rows.

    Positions are over all rows of the segments in order, deleted ones included (a deleted
    row is never returned), so a merge that keeps the live rows in order keeps their order.
    Has what HybridSearcher, the rerankers and knowledge.indexing read of an IndexData.
    """

    def __init__(self, segments: Sequence[IndexData], deleted: np.ndarray, meta: dict) -> None:
        self.segments = list(segments)
        sizes = [s.size for s in self.segments]
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.deleted = np.asarray(deleted, dtype=bool)
        if len(self.deleted) != self.starts[-1]:
            raise ValueError(f"delete mask of {len(self.deleted)} rows for {self.starts[-1]} rows")
        self.live = ~self.deleted
        self.meta = meta
        self.chunk_ids = np.concatenate([np.asarray(s.chunk_ids, dtype=np.int64) for s in self.segments])
        self.document_ids = np.concatenate(
            [np.asarray(s.document_ids, dtype=np.int64) for s in self.segments]
        )
        self.is_reference = np.concatenate([np.asarray(s.is_reference, dtype=bool) for s in self.segments])
        offsets, base = [np.zeros(1, dtype=np.int64)], 0
        for s in self.segments:
            offsets.append(np.asarray(s.sent_offsets[1:], dtype=np.int64) + base)
            base += int(s.sent_offsets[-1])
        self.sent_offsets = np.concatenate(offsets)
        sent_starts = np.array(
            [0, *np.cumsum([int(s.sent_offsets[-1]) for s in self.segments])], dtype=np.int64
        )
        self.vectors = _Rows([s.vectors for s in self.segments], self.starts)
        self.sent_vectors = _Rows([s.sent_vectors for s in self.segments], sent_starts)
        self.bm25 = SegmentedBM25(self.segments, self.starts, self.live)

    @property
    def size(self) -> int:
        return int(self.starts[-1])

    @cached_property
    def _documents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(distinct document ids, each row's index among them, which have a live row)."""
        documents, row_document = np.unique(self.document_ids, return_inverse=True)
        has_live = np.zeros(len(documents), dtype=bool)
        has_live[row_document[self.live]] = True
        return documents, row_document, has_live

    def rows_of(self, document_ids: np.ndarray) -> np.ndarray | None:
        """Boolean mask of the live rows whose document is in `document_ids`; None if that is
        every live row (the searches leave out deleted rows themselves)."""
        documents, row_document, has_live = self._documents
        keep = np.isin(documents, document_ids)
        return None if keep[has_live].all() else keep[row_document] & self.live

    def _parts(self, allowed: np.ndarray | None):
        """(segment, its start, its rows that may be returned or None for all) per segment."""
        mask = self.live if allowed is None else self.live & np.asarray(allowed, dtype=bool)
        for i, segment in enumerate(self.segments):
            start, stop = int(self.starts[i]), int(self.starts[i + 1])
            here = mask[start:stop]
            if stop > start and here.any():
                yield segment, start, None if here.all() else here

    def dense_top(
        self, vector: np.ndarray, k: int, allowed: np.ndarray | None = None, threads: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """dense_search over the live rows: each segment's exact top k, then the k best of those."""
        positions, scores = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
        for segment, start, here in self._parts(allowed):
            p, s = dense_search(segment.vectors, vector, k, here, threads=threads, sq8=segment.dense_sq8)
            positions.append(np.asarray(p, dtype=np.int64) + start)
            scores.append(np.asarray(s, dtype=np.float64))
        return top_k(np.concatenate(positions), np.concatenate(scores), k)
