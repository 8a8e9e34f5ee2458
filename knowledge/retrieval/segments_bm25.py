"""BM25 over the live rows of several segments (knowledge.retrieval.segments), exactly as
the merged index of those rows scores them.

Every score comes from the stored term counts and the statistics of the live rows of all
segments (N, df, average length, rank-bm25's mean idf), computed as BM25Index.from_counts
computes them and summed in the order of its kernels, so it equals to the last bit the one
the merged index gives (tests/knowledge/test_retrieval_segments.py). `top` runs the single
index's MaxScore first stage per segment (issue 19): the first search of a loaded version
makes each segment's 16-bit impacts from those statistics (its stored ones are stale once N
or the average length moved), then each query is the kernels' walk per segment, the near
chunks rescored exactly from their counts, and the k best of the segments' k best. A query
the bounds do not hold for (a term of negative weight) is scored exactly over every live
posting instead, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from knowledge.retrieval.bm25 import EPSILON, K1, MAX_QUERY_TERMS, B, top_k
from knowledge.retrieval.bm25_kernels import NO_MASK, kernels, top_scratch
from knowledge.retrieval.bm25_postings import encode
from knowledge.retrieval.store import IndexData

# Postings whose weights `_stages` computes at once.
_SLICE = 1 << 20


@dataclass
class _Stage:
    """One segment's first stage under the live statistics."""

    # (indptr, skip_ptr, skip_doc, skip_off, gaps, data, impacts, multipliers, errors: 16-bit
    # impacts, each within one step: all 1)
    first_stage: tuple[np.ndarray, ...]
    term_max: np.ndarray  # per row of the segment: the term's largest live weight in any segment
    idf: np.ndarray  # per row of the segment: the term's idf over the live rows


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
    def _live_df(self) -> tuple[dict[str, int], list[np.ndarray]]:
        """(each term of the live rows -> its index in sorted term order, its live df by that
        index as float64) and, per segment, each of its rows' index in that order (-1: no
        live posting anywhere)."""
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
        index = {t: g for g, t in enumerate(sorted(df))}
        rows = []
        for part in self.parts:
            of_row = np.full(part.weights.shape[0], -1, dtype=np.int64)
            for term, row in part.vocab.items():
                of_row[row] = index.get(term, -1)
            rows.append(of_row)
        counts = np.array([df[t] for t in sorted(df)], dtype=np.float64)
        return index, [counts, *rows]

    @cached_property
    def _mean_idf(self) -> float:
        """rank-bm25's mean idf over every term of the live rows, summed as from_counts sums it
        (over the sorted vocabulary)."""
        counts = self._live_df[1][0]
        idf = np.log(self.n_live - counts + 0.5) - np.log(counts + 0.5)
        return float(idf.sum() / len(idf))

    @cached_property
    def _stages(self) -> tuple[list[_Stage], float]:
        """Each segment's first stage under the live statistics, and the impacts' step: the
        weights of every posting as from_counts makes them, each term's largest live one,
        16-bit impacts as BM25Index.quantize makes them. Made once per loaded version."""
        counts, *rows = self._live_df[1]
        n = self.n_live
        avgdl = self.length_sum / n
        idf = np.log(n - counts + 0.5) - np.log(counts + 0.5)
        idf = np.where(idf < 0, EPSILON * self._mean_idf, idf)
        term_max = np.full(len(counts), -np.inf)

        def weights(i: int):
            """Segment i's weights, in slices of about _SLICE postings (whole term rows): the
            arrays of a whole 1M-chunk segment at once took about 2.5 GB."""
            part = self.parts[i]
            indptr = np.asarray(part.weights.indptr)
            lengths = np.asarray(part.lengths, dtype=np.int64)
            bounds = np.unique(np.searchsorted(indptr, np.arange(0, indptr[-1], _SLICE), side="right") - 1)
            for r0, r1 in zip(bounds, [*bounds[1:], len(indptr) - 1], strict=True):
                a, b = int(indptr[r0]), int(indptr[r1])
                indices = np.asarray(part.weights.indices[a:b])
                gid = rows[i][np.repeat(np.arange(r0, r1), np.diff(indptr[r0 : r1 + 1]))]
                f = np.asarray(part.counts[a:b], dtype=np.float64)
                dl = lengths[indices]
                yield a, b, indices, gid, idf[np.maximum(gid, 0)] * (f * (K1 + 1) / (f + K1 * (1 - B + B * dl / avgdl)))

        for i in range(len(self.parts)):
            for _, _, indices, gid, here in weights(i):
                live = self.lives[i][indices] & (gid >= 0)
                np.maximum.at(term_max, gid[live], here[live])
        top = float(term_max.max()) if len(term_max) else 0.0
        step = top / 65535 if top > 0 else 1.0
        stages = []
        for i, part in enumerate(self.parts):
            impacts = np.zeros(len(part.weights.data), dtype=np.uint16)
            for a, b, _, _, here in weights(i):
                impacts[a:b] = np.clip(np.rint(here / step), 1, 65535)
                impacts[a:b][here <= 0] = 0
            if part.postings is None:
                part.postings = encode(part.weights.indptr, part.weights.indices)
            indptr, _, data = part._arrays()
            gid = np.maximum(rows[i], 0)
            stages.append(_Stage(first_stage=(indptr, *(np.asarray(a) for a in part.postings), data, impacts,
                                              *np.ones((2, len(indptr) - 1), dtype=np.int64)),
                                 term_max=term_max[gid], idf=idf[gid]))
        return stages, step

    def _fast_top(self, query: dict[str, int], k: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """`top` by the first stage per segment, or None when a query term's weight is
        negative (the bounds need weights >= 0)."""
        index = self._live_df[0]
        stages, step = self._stages
        avgdl = self.length_sum / self.n_live
        positions, scores = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
        for i, part in enumerate(self.parts):
            start, stop = int(self.starts[i]), int(self.starts[i + 1])
            here = mask[start:stop]
            # The query terms with a live posting somewhere, by row (sorted term order).
            found = sorted((part.vocab[t], c) for t, c in query.items() if t in part.vocab and t in index)
            if not found or not here.any():
                continue
            ids = np.array([r for r, _ in found], dtype=np.int64)
            counts = np.array([c for _, c in found], dtype=np.int64)
            stage = stages[i]
            allowed = NO_MASK if here.all() else here.view(np.uint8)
            with top_scratch(stop - start) as arrays:
                near, where, ordered, done = kernels()[1](*stage.first_stage, step, ids, counts, stage.term_max,
                                                          k, allowed, *arrays)
            if not done:
                return None
            # The near chunks' exact weights, from their counts, as from_counts computes them;
            # rows of `where` are the query terms in the kernels' summing order.
            order = np.argsort(-(counts * stage.term_max[ids]), kind="mergesort")
            held = where >= 0
            f = np.zeros(where.shape)
            f[held] = np.asarray(part.counts)[where[held]]
            dl = np.asarray(part.lengths, dtype=np.int64)[near][None, :]
            exact = stage.idf[ids[order]][:, None] * (f * (K1 + 1) / (f + K1 * (1 - B + B * dl / avgdl)))
            p, s = kernels()[2](near, where, np.where(held, exact, 0.0), ordered, k)
            positions.append(p + start)
            scores.append(s)
        return top_k(np.concatenate(positions), np.concatenate(scores), k)

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
        mask = self.live if allowed is None else self.live & np.asarray(allowed, dtype=bool)
        if len(tokens) < MAX_QUERY_TERMS:
            fast = self._fast_top(query, k, mask)
            if fast is not None:
                return fast
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
