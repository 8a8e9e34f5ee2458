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


_CACHE_MAX = 50_000
# One cache per embedding space: vectors of two models must never answer for each other. A
# named space (the model id) is shared by every wrapper of that model in the process; an
# unnamed embedding function (a test's fake model, say) gets a cache of its own.
_SPACES: dict[str, dict[str, np.ndarray]] = {}


def cached(embed: EmbedFn, space: str | None = None) -> EmbedFn:
    """Wrap an embedding function with a per-process cache keyed by text within its embedding
    `space` (the model id; None: a cache private to this wrapper): a retry pass re-audits the
    chunks of the first pass, and popular chunks recur across questions."""
    if space is None:
        cache: dict[str, np.ndarray] = {}
    else:
        with _lock:
            cache = _SPACES.setdefault(space, {})

    def run(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            vecs = embed(missing)
            with _lock:
                if len(cache) + len(missing) > _CACHE_MAX:
                    cache.clear()
                cache.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack([cache[t] if t in cache else embed([t])[0] for t in texts]).astype(np.float32)

    return run


def clear() -> None:
    """Forget every cached vector (a benchmark timing cold runs)."""
    with _lock:
        for cache in _SPACES.values():
            cache.clear()


def local_space() -> str:
    """The embedding space of the local embedder (its model id), shared by its cached wrappers."""
    from knowledge.embeddings import LOCAL_MODEL_ID

    return LOCAL_MODEL_ID


def get_embed(embed: EmbedFn | None = None, space: str | None = None) -> EmbedFn:
    """`embed` (default: the local embedder's, in its own space) behind the per-process cache
    of `space`; rows are L2-normalised float32."""
    if embed is None:
        from knowledge.embeddings import get_embedder

        embed, space = get_embedder("local").embed, local_space()
    return cached(embed, space)
