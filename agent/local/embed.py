"""Sentence embeddings for the local roles: the project's one local embedder
(knowledge.embeddings, which needs no Django), with a per-process cache.

Pure: no settings, no tables. Inside the portal the run passes the roles an embedding
function that reads the content-addressed EmbeddingCache table first
(agent.retrieval.portal_embed, through agent.configs.build_roles): the index build already
embedded every sentence of every chunk there, so auditing retrieved chunks costs one
database read instead of model runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

EmbedFn = Callable[[Sequence[str]], np.ndarray]

_lock = threading.Lock()


_CACHE: dict[str, np.ndarray] = {}
_CACHE_MAX = 50_000


def cached(embed: EmbedFn) -> EmbedFn:
    """Wrap an embedding function with a per-process cache keyed by text: a retry pass
    re-audits the chunks of the first pass, and popular chunks recur across questions."""

    def run(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in _CACHE]
        if missing:
            vecs = embed(missing)
            with _lock:
                if len(_CACHE) + len(missing) > _CACHE_MAX:
                    _CACHE.clear()
                _CACHE.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack([_CACHE[t] if t in _CACHE else embed([t])[0] for t in texts]).astype(np.float32)

    return run


def get_embed(embed: EmbedFn | None = None) -> EmbedFn:
    """`embed` (default: the local embedder's) behind the per-process cache; rows are
    L2-normalised float32."""
    if embed is None:
        from knowledge.embeddings import get_embedder

        embed = get_embedder("local").embed
    return cached(embed)
