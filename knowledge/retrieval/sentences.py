"""Sentence-level dense search: the chunks whose answer-eligible sentences lie closest to a
query, over the sentence vectors an index version already stores (knowledge.retrieval.store:
`sent_vectors`, and `sent_offsets` saying which chunk owns each row).

A chunk's vector averages all its sentences, so a chunk with one sentence that answers and
ten about something else can rank low for a question that one sentence answers. Searching
the sentences themselves finds it; the agent's local auditor then chooses among the
sentences of every chunk found (agent.loop, RunConfig.sentence_pool).
"""

from __future__ import annotations

import numpy as np

from knowledge.retrieval.segments import SegmentedIndex
from knowledge.retrieval.store import IndexData


def top_sentence_chunks(
    data: IndexData | SegmentedIndex, query_vector: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The k chunks (index positions) owning the best-scoring sentences, as (position, cosine
    of its best sentence), best first. `allowed`: boolean mask of the chunk rows that may be
    returned (None: all). Chunks without sentence vectors are never returned."""
    offsets = np.asarray(data.sent_offsets)
    if k <= 0 or not int(offsets[-1]):
        return []
    # A version of several segments (knowledge.retrieval.segments) reads its rows as one; its
    # deleted rows are never returned.
    query = np.asarray(query_vector, dtype=np.float32)
    if isinstance(data, SegmentedIndex):
        # Segment by segment (their rows in order are the version's rows), never copied.
        sims = np.concatenate([np.asarray(seg.sent_vectors) @ query for seg in data.segments])
        allowed = data.live if allowed is None else np.asarray(allowed, dtype=bool) & data.live
    else:
        sims = np.asarray(data.sent_vectors) @ query
    # The rows are in chunk order, so each chunk's best is one reduceat over the starts of the
    # chunks that own rows (an empty chunk's start is the next one's).
    starts = offsets[:-1]
    owning = offsets[1:] > starts
    best = np.full(data.size, -np.inf, dtype=np.float64)
    best[owning] = np.maximum.reduceat(sims, starts[owning])
    if allowed is not None:
        best[~allowed] = -np.inf
    found = np.flatnonzero(np.isfinite(best))
    order = found[np.lexsort((found, -best[found]))][:k]
    return [(int(pos), float(best[pos])) for pos in order]
