"""The content-addressed embedding cache (the Django edge of knowledge.embeddings).

Key = sha256(model id + normalised text) (knowledge.embeddings.cache_key); value = the
float32 vector as little-endian bytes. Re-ingesting, re-chunking or sharing a paper between
collections never embeds the same text twice: only keys missing from the table reach the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction

from knowledge.embeddings import Embedder, cache_key, get_embedder
from knowledge.models import EmbeddingCache

# Keys per IN (...) query: well under SQLite's 32766 bound-variable limit and PostgreSQL's.
_LOOKUP_BATCH = 900


def default_embedder() -> Embedder:
    """The embedder the settings name (PORTAL_EMBEDDING_BACKEND / _MODEL / OPENAI_*)."""
    backend = settings.EMBEDDING_BACKEND
    if backend == "openai":
        return get_embedder(
            "openai",
            settings.EMBEDDING_MODEL,
            api_key=settings.OPENAI_API_KEY or None,
            base_url=settings.OPENAI_BASE_URL,
            max_retries=settings.LLM_MAX_RETRIES,
            timeout=settings.LLM_TIMEOUT_SECONDS,
        )
    return get_embedder("local", settings.EMBEDDING_MODEL, batch_size=settings.EMBEDDING_BATCH_SIZE)


def _to_vector(raw: bytes | memoryview, dim: int) -> np.ndarray:
    vector = np.frombuffer(bytes(raw), dtype="<f4")
    if vector.shape[0] != dim:
        raise ValueError(f"cached vector has {vector.shape[0]} values, expected {dim}")
    return vector.astype(np.float32, copy=False)


def vectors_for_keys(keys: Iterable[str]) -> dict[str, np.ndarray]:
    """Cached vectors by key; keys not in the cache are simply absent from the result."""
    unique = list(dict.fromkeys(keys))
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(unique), _LOOKUP_BATCH):
        rows = EmbeddingCache.objects.filter(key__in=unique[start : start + _LOOKUP_BATCH]).values_list(
            "key", "dim", "vector"
        )
        for key, dim, raw in rows:
            found[key] = _to_vector(raw, dim)
    return found


def embed_with_cache(
    texts: Sequence[str],
    *,
    embedder: Embedder,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Vectors for `texts` (rows in order), embedding only texts the cache lacks.

    Steps: key every text; read the cached keys; deduplicate the missing ones; embed them
    in batches of `batch_size`, writing each batch to the cache as soon as it is done (a
    job killed half-way keeps what it paid for); assemble the rows in input order.
    `progress(done, total)` counts texts (cached ones count as done at once).
    """
    total = len(texts)
    if total == 0:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    keys = [cache_key(embedder.model_id, t) for t in texts]
    by_key = vectors_for_keys(keys)
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in by_key and key not in missing:
            missing[key] = text
    pending = sum(1 for k in keys if k in missing)
    done = total - pending
    if progress:
        progress(done, total)
    counts: dict[str, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    missing_items = list(missing.items())
    for start in range(0, len(missing_items), batch_size):
        batch = missing_items[start : start + batch_size]
        vectors = embedder.embed([text for _, text in batch])
        rows = [
            EmbeddingCache(key=key, model=embedder.model_id, dim=int(vec.shape[0]),
                           vector=np.asarray(vec, dtype="<f4").tobytes())
            for (key, _), vec in zip(batch, vectors, strict=True)
        ]
        _cache_write(rows)
        for (key, _), vec in zip(batch, vectors, strict=True):
            by_key[key] = np.asarray(vec, dtype=np.float32)
            done += counts[key]
        if progress:
            progress(done, total)
    return np.vstack([by_key[k] for k in keys]).astype(np.float32, copy=False)


def _cache_write(rows: list[EmbeddingCache]) -> None:
    # Two workers may embed the same text at once; the second insert of a key is a no-op
    # (the vectors are identical for one model), so conflicts are ignored, not errors.
    try:
        with transaction.atomic():
            EmbeddingCache.objects.bulk_create(rows, ignore_conflicts=True)
    except IntegrityError:  # pragma: no cover - ignore_conflicts covers both backends
        pass
