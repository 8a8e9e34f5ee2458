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

from knowledge.retrieval.bm25 import EPSILON, K1, B, top_k
from knowledge.retrieval.dense import dense_search
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


class SegmentedBM25:
    """BM25 Okapi over the live rows of several segments, from their stored term counts.

    Per query: each query term's df over the live rows, its idf (rank-bm25's epsilon floor
    for a negative one, with the mean idf of the whole live vocabulary, computed once per
    loaded version and only when a query needs it); each posting's weight exactly as
    BM25Index.from_counts makes it; each term's largest weight over the live rows, which
    fixes the order a single index's kernels sum the terms in; then the sums in that order.
    Linear in the query terms' postings (the single index's MaxScore does not apply: its
    stored weights and bounds are stale once the statistics move), until a merge folds the
    segments into one (docs/benchmarks.md, "Segments").
    """

    def __init__(self, segments: Sequence[IndexData], starts: np.ndarray, live: np.ndarray) -> None:
        self.parts = [s.bm25 for s in segments]
        self.starts = starts
        self.live = live
        self.lives = [live[starts[i] : starts[i + 1]] for i in range(len(self.parts))]
        self.n_live = int(np.count_nonzero(live))
        self.length_sum = int(
            sum(
                int(np.asarray(p.lengths, dtype=np.int64)[lv].sum())
                for p, lv in zip(self.parts, self.lives, strict=True)
            )
        )

    @property
    def n_chunks(self) -> int:
        return int(self.starts[-1])

    def _postings(self, i: int, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(local positions, counts) of `term`'s live postings in segment i, or None."""
        part = self.parts[i]
        row = part.vocab.get(term)
        if row is None:
            return None
        w = part.weights
        a, b = int(w.indptr[row]), int(w.indptr[row + 1])
        where = np.asarray(w.indices[a:b], dtype=np.int64)
        counts = np.asarray(part.counts[a:b], dtype=np.float64)
        live = self.lives[i]
        if not live.all():
            keep = live[where]
            where, counts = where[keep], counts[keep]
        return (where, counts) if len(where) else None

    @cached_property
    def _mean_idf(self) -> float:
        """rank-bm25's mean idf over every term of the live rows, summed as from_counts sums it
        (over the sorted vocabulary)."""
        df: dict[str, int] = {}
        for i, part in enumerate(self.parts):
            w = part.weights
            live = self.lives[i]
            if live.all():
                per_row = np.diff(np.asarray(w.indptr))
            else:
                row_of = np.repeat(np.arange(w.shape[0]), np.diff(np.asarray(w.indptr)))
                per_row = np.bincount(row_of[live[np.asarray(w.indices)]], minlength=w.shape[0])
            for term, row in part.vocab.items():
                if per_row[row]:
                    df[term] = df.get(term, 0) + int(per_row[row])
        counts = np.array([df[t] for t in sorted(df)], dtype=np.float64)
        idf = np.log(self.n_live - counts + 0.5) - np.log(counts + 0.5)
        return float(idf.sum() / len(idf))

    def top(
        self, tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k best (positions, scores) over the live (and `allowed`) rows, best first, ties
        to the lower position: what BM25Index.top of the merged index returns."""
        if k <= 0 or self.n_live == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        query: dict[str, int] = {}
        for t in tokens:
            query[t] = query.get(t, 0) + 1
        # Per query term (sorted, as the merged index numbers its terms): live postings per segment.
        terms, postings = [], []
        for term in sorted(query):
            found = [self._postings(i, term) for i in range(len(self.parts))]
            if any(f is not None for f in found):
                terms.append(term)
                postings.append(found)
        if not terms:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        n = self.n_live
        avgdl = self.length_sum / n
        df = np.array(
            [sum(len(f[0]) for f in found if f is not None) for found in postings], dtype=np.float64
        )
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        if (idf < 0).any():
            idf = np.where(idf < 0, EPSILON * self._mean_idf, idf)
        # Every live posting's weight, as from_counts computes it, and each term's largest.
        weights: list[list[np.ndarray | None]] = []
        bound = np.empty(len(terms))
        for j, found in enumerate(postings):
            row: list[np.ndarray | None] = []
            top = -np.inf
            for i, f in enumerate(found):
                if f is None:
                    row.append(None)
                    continue
                where, counts = f
                dl = np.asarray(self.parts[i].lengths, dtype=np.int64)[where]
                w = idf[j] * (counts * (K1 + 1) / (counts + K1 * (1 - B + B * dl / avgdl)))
                row.append(w)
                top = max(top, float(w.max()))
            weights.append(row)
            bound[j] = query[terms[j]] * top
        # The kernels' order: decreasing bound, ties by term id (here: sorted term order).
        order = np.argsort(-bound, kind="mergesort")
        mask = None if allowed is None else np.asarray(allowed, dtype=bool)
        positions, scores = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
        for i in range(len(self.parts)):
            present = [j for j in order if postings[j][i] is not None]
            if not present:
                continue
            acc = np.zeros(self.parts[i].n_chunks)
            for j in present:
                acc[postings[j][i][0]] += float(query[terms[j]]) * weights[j][i]
            # As the kernels: a chunk whose terms sum to exactly 0 is not returned.
            hit = np.flatnonzero(acc)
            values = acc[hit]
            hit = hit + self.starts[i]
            if mask is not None:
                ok = mask[hit]
                hit, values = hit[ok], values[ok]
            positions.append(hit)
            scores.append(values)
        return top_k(np.concatenate(positions), np.concatenate(scores), k)
