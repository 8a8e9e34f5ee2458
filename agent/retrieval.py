"""The Retriever the loop uses in the portal: knowledge.indexing.index_search over one collection."""

from __future__ import annotations

from django.db import close_old_connections, connection

from agent.types import Source
from knowledge.models import Chunk, Collection


class CollectionRetriever:
    def __init__(self, collection: Collection, *, mode: str = "rrf", rerank: str | None = None) -> None:
        self.collection = collection
        self.mode = mode
        self.rerank = rerank

    @property
    def thread_safe(self) -> bool:
        # Another thread has its own database connection, which cannot see rows of an open
        # transaction (tests, or a caller inside atomic()): then retrieve on this thread.
        return not connection.in_atomic_block

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        from knowledge.indexing import index_search

        hits = index_search(collection=self.collection, query=query, k=k, mode=self.mode, rerank=self.rerank)
        chunks = Chunk.objects.select_related("document").in_bulk([h.chunk_id for h in hits])
        out = []
        for h in hits:
            c = chunks.get(h.chunk_id)
            if c is None:
                continue
            out.append(Source(
                chunk_id=c.pk, document_id=c.document_id, document_title=c.document.title,
                file_name=c.document.original_name, page=c.page_start, page_end=c.page_end,
                section=c.section_title, text=c.text, score=float(h.score), query=query,
            ))
        return out


class ThreadRetriever:
    """Wraps a retriever called from pool threads: each call closes its thread's connection."""

    def __init__(self, inner: CollectionRetriever) -> None:
        self.inner = inner

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        import threading

        if threading.current_thread() is threading.main_thread():
            return self.inner.retrieve(query, k=k)
        try:
            return self.inner.retrieve(query, k=k)
        finally:
            close_old_connections()
            connection.close()
