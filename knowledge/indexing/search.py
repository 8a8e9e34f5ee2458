"""Searching a collection's index: `index_search`, `index_sentence_search` (knowledge.indexing).

Each process loads the version the database names once and keeps it (`_LOADED`); the
documents a search may return are checked against the database on every call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from knowledge.indexing.build import index_rebuild
from knowledge.indexing.versions import collection_index_dir
from knowledge.models import Chunk, Collection, Document
from knowledge.retrieval.engine import MODES, HybridSearcher, SearchHit, needs_vector
from knowledge.retrieval.rerank import LLMReranker, Reranker, ScoreFn, SentenceReranker
from knowledge.retrieval.segments import is_complete, read_version

log = logging.getLogger(__name__)

RERANKERS = ("sentence", "llm")
# Loaded indexes by collection folder (INDEX_ROOT/<id>, so tests with their own INDEX_ROOT
# never share one): (version, searcher). One entry per collection, so an old version is
# dropped (and its memory maps closed once unreferenced) when a new one loads.
_LOADED: dict[Path, tuple[int, HybridSearcher]] = {}
_LOAD_LOCK = threading.Lock()


def default_llm_scorer() -> ScoreFn:
    """The grader of rerank="llm" when a search is not handed one: made by the factory that
    settings.RERANK_LLM_SCORER names. knowledge knows no LLM; the wiring (portal/settings.py)
    points it at the agent's, so knowledge's search page, API and command offer the LLM
    reranker without knowledge importing agent."""
    from django.utils.module_loading import import_string

    return import_string(settings.RERANK_LLM_SCORER)()


def _searcher(collection: Collection, version: int) -> HybridSearcher:
    root = collection_index_dir(collection.pk)
    with _LOAD_LOCK:
        loaded = _LOADED.get(root)
        if loaded and loaded[0] == version:
            return loaded[1]
    folder = root / str(version)
    if not is_complete(folder):
        # The files are derived data: a fresh volume (or a lost folder) is rebuilt, not an error.
        log.warning("index files of collection %s version %s are missing; rebuilding", collection.pk, version)
        version = index_rebuild(collection=collection)
        folder = root / str(version)
    searcher = HybridSearcher(read_version(folder), threads=settings.SEARCH_THREADS)
    with _LOAD_LOCK:
        _LOADED[root] = (version, searcher)
    return searcher


def _matches(document: tuple[int, str, Any, str], filters: Mapping[str, Any]) -> bool:
    _, title, metadata, file_name = document
    metadata = metadata if isinstance(metadata, dict) else {}
    for key, wanted in filters.items():
        if wanted in (None, "", []):
            continue
        if key == "title":
            # The file name is the document's second label (its title is read from the file).
            haystack = f"{title} {metadata.get('title', '')} {file_name}".casefold()
            if str(wanted).casefold() not in haystack:
                return False
        elif key == "year":
            year = metadata.get("year")
            try:
                year = int(year)
            except (TypeError, ValueError):
                return False
            lo, hi = (wanted if isinstance(wanted, (list, tuple)) else (wanted, wanted))
            if not (int(lo) <= year <= int(hi)):
                return False
        elif key in ("tag", "tags"):
            tags = metadata.get("tags", metadata.get("tag", []))
            tags = [tags] if isinstance(tags, str) else list(tags or [])
            wanted_tags = [wanted] if isinstance(wanted, str) else list(wanted)
            have = {str(t).casefold() for t in tags}
            if not all(str(t).casefold() in have for t in wanted_tags):
                return False
        else:
            raise ValueError(f"Unknown filter {key!r}: use title, year or tag.")
    return True


def _allowed_mask(collection: Collection, searcher: HybridSearcher, document_ids: list[int] | None,
                  filters: Mapping[str, Any] | None) -> np.ndarray | None:
    """Rows of the index whose document is READY now and passes the filters (None: all rows)."""
    docs = Document.objects.filter(collection=collection, status=Document.Status.READY)
    if document_ids is not None:
        docs = docs.filter(pk__in=document_ids)
    rows = list(docs.values_list("id", "title", "metadata", "original_name"))
    if filters:
        rows = [r for r in rows if _matches(r, filters)]
    return searcher.data.rows_of(np.array([r[0] for r in rows], dtype=np.int64))


@lru_cache(maxsize=256)
def _query_vector(model_id: str, query: str) -> np.ndarray:
    from knowledge.embedding_cache import default_embedder

    return default_embedder().embed([query])[0]


def _reranker(name: str | None, searcher: HybridSearcher, llm_scorer: ScoreFn | None) -> Reranker | None:
    if name in (None, ""):
        return None
    if name == "sentence":
        return SentenceReranker()
    if name == "llm":
        ids = searcher.data.chunk_ids

        def text_of(position: int) -> str:
            return Chunk.objects.values_list("text", flat=True).get(pk=int(ids[position]))

        return LLMReranker(llm_scorer or default_llm_scorer(), text_of)
    raise ValueError(f"Unknown reranker {name!r}: use one of {', '.join(RERANKERS)}.")


def index_search(*, collection: Collection, query: str, k: int = 5, mode: str = "rrf",
                 document_ids: list[int] | None = None, rerank: str | None = None,
                 filters: Mapping[str, Any] | None = None, llm_scorer: ScoreFn | None = None) -> list[SearchHit]:
    """The k best chunks of the collection for `query`, best first.

    mode: "bm25", "dense", "rrf" (default) or "minmax"; rerank: None, "sentence" or "llm".
    document_ids and filters ({"title": str, "year": int | (lo, hi), "tag": str}) restrict
    the documents searched. `llm_scorer` grades passages for rerank="llm" (default: the one
    named by settings.RERANK_LLM_SCORER). Only chunks of documents that are READY at the time of the
    call are returned, even if the loaded index still holds older ones.
    """
    if mode not in MODES:
        raise ValueError(f"Unknown search mode {mode!r}: use one of {', '.join(MODES)}.")
    version = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).first()
    if not version or not query.strip():
        return []
    searcher = _searcher(collection, version)
    allowed = _allowed_mask(collection, searcher, document_ids, filters)
    if allowed is not None and not allowed.any():
        return []
    vector = None
    if needs_vector(mode, rerank):
        vector = _query_vector(searcher.data.meta.get("embedding_model", ""), query)
    hits = searcher.search(query, query_vector=vector, k=k, mode=mode, allowed=allowed,
                           reranker=_reranker(rerank, searcher, llm_scorer))
    # Belt and braces: a chunk deleted after the document check above is still never shown.
    live = set(Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list("pk", flat=True))
    return [h for h in hits if h.chunk_id in live]


def index_sentence_search(*, collection: Collection, query: str, k: int = 5,
                          document_ids: list[int] | None = None) -> list[SearchHit]:
    """The k chunks of the collection whose best answer-eligible sentence is closest to
    `query` (cosine of the stored sentence vectors, knowledge.retrieval.sentences), best
    first; only chunks of READY documents (of `document_ids` only, when given)."""
    from knowledge.retrieval.sentences import top_sentence_chunks

    version = Collection.objects.filter(pk=collection.pk).values_list("index_version", flat=True).first()
    if not version or not query.strip() or k <= 0:
        return []
    searcher = _searcher(collection, version)
    allowed = _allowed_mask(collection, searcher, document_ids, None)
    if allowed is not None and not allowed.any():
        return []
    vector = _query_vector(searcher.data.meta.get("embedding_model", ""), query)
    data = searcher.data
    hits = [SearchHit(chunk_id=int(data.chunk_ids[pos]), score=score, scores={"sentence": score},
                      document_id=int(data.document_ids[pos]), position=pos)
            for pos, score in top_sentence_chunks(data, vector, k, allowed)]
    live = set(Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list("pk", flat=True))
    return [h for h in hits if h.chunk_id in live]
