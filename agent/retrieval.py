"""The Retriever the loop uses in the portal: knowledge.indexing.search.index_search over one collection."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

from django.db import close_old_connections, connection

from agent.local.embed import EmbedFn, get_embed, local_space
from agent.types import Source, Usage
from knowledge.models import Chunk, Collection
from knowledge.text import Vocabulary
from knowledge.vocabulary import document_vocabulary


class CollectionRetriever:
    """`document_ids`: search those documents of the collection only (None: all of them)."""

    def __init__(self, collection: Collection, *, mode: str = "rrf", rerank: str | None = None,
                 document_ids: list[int] | None = None) -> None:
        self.collection = collection
        self.document_ids = document_ids
        self.mode = mode
        self.rerank = rerank
        # What the LLM reranker spent since take_usage last asked (searches run in threads).
        self._spent = Usage()
        self._spent_lock = threading.Lock()
        self._llm_scorer = None
        if rerank == "llm":
            from agent.llm import LLMClient
            from agent.llm_roles import llm_scorer

            self._llm_scorer = llm_scorer(LLMClient.from_settings(), on_usage=self._spend)

    def _spend(self, usage: Usage) -> None:
        with self._spent_lock:
            self._spent = self._spent + usage

    def take_usage(self) -> Usage:
        """The LLM usage of the searches since the last call (zero without an LLM reranker)."""
        with self._spent_lock:
            spent, self._spent = self._spent, Usage()
        return spent

    @property
    def thread_safe(self) -> bool:
        # Another thread has its own database connection, which cannot see rows of an open
        # transaction (tests, or a caller inside atomic()): then retrieve on this thread.
        return not connection.in_atomic_block

    @staticmethod
    def vocabulary(document_id: int) -> Vocabulary | None:
        """A retrieved document's whole vocabulary (the verifier joins line-break hyphens by it)."""
        return document_vocabulary(document_id)

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        from knowledge.indexing.search import index_search

        hits = index_search(collection=self.collection, query=query, k=k, mode=self.mode, rerank=self.rerank,
                            llm_scorer=self._llm_scorer, document_ids=self.document_ids)
        return _sources(hits, query)

    def retrieve_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        """The k best chunks of the given documents only (all of the collection's when None),
        never outside the run's own documents when the run is limited to some (Run.documents)."""
        from knowledge.indexing.search import index_search

        if self.document_ids is not None:
            inside = [d for d in document_ids or () if d in self.document_ids]
            document_ids = inside or list(self.document_ids)
        hits = index_search(collection=self.collection, query=query, k=k, mode=self.mode,
                            document_ids=document_ids)
        return _sources(hits, query)

    def retrieve_sentences(self, query: str, *, k: int) -> list[Source]:
        """The k chunks whose best sentence is closest to the query (knowledge.indexing.
        index_sentence_search): a chunk one sentence of which answers, among many that do not."""
        from knowledge.indexing.search import index_sentence_search

        return _sources(index_sentence_search(collection=self.collection, query=query, k=k,
                                              document_ids=self.document_ids), query)

    def retrieve_sentences_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        """retrieve_sentences over the given documents only (all of the collection's when None),
        never outside the run's own documents (as retrieve_within)."""
        from knowledge.indexing.search import index_sentence_search

        if self.document_ids is not None:
            inside = [d for d in document_ids or () if d in self.document_ids]
            document_ids = inside or list(self.document_ids)
        return _sources(index_sentence_search(collection=self.collection, query=query, k=k,
                                              document_ids=document_ids), query)

    def retrieve_heads(self, query: str, *, k: int) -> list[Source]:
        """Each retriever's own k best chunks (BM25's, then the dense search's, alternating):
        a chunk one list ranks first and the other not at all sits near rank 30 after RRF."""
        from knowledge.indexing.search import index_search

        lists = [_sources(index_search(collection=self.collection, query=query, k=k, mode=mode,
                                       document_ids=self.document_ids), query)
                 for mode in ("bm25", "dense")]
        return _alternate(lists)

    def neighbours(self, sources: list[Source]) -> list[Source]:
        """The chunks just before and after each source in its document (not references, not
        the sources themselves), in the sources' order: the sentence that answers often sits
        one chunk past the one a query found (a definition, then its setting)."""
        own = Chunk.objects.filter(pk__in=[s.chunk_id for s in sources], document__collection=self.collection)
        places = dict((pk, (doc, n)) for pk, doc, n in own.values_list("pk", "document_id", "ordinal"))
        # Each place wanted, with the query of the source it neighbours.
        wanted = {(doc, n + step): s.query for s in sources if s.chunk_id in places
                  for doc, n in [places[s.chunk_id]] for step in (-1, 1)}
        if not wanted:
            return []
        near = Chunk.objects.filter(document__collection=self.collection, document__status="ready",
                                    is_reference=False, document_id__in={doc for doc, _ in wanted},
                                    ordinal__in={n for _, n in wanted})
        by_place = {(doc, n): pk for pk, doc, n in near.values_list("pk", "document_id", "ordinal")}
        have = {s.chunk_id for s in sources}
        ids: dict[int, str] = {}
        for place, query in wanted.items():
            pk = by_place.get(place)
            if pk is not None and pk not in have:
                ids.setdefault(pk, query)
        found = {s.chunk_id: s for s in _sources([_Hit(pk) for pk in ids], "")}
        return [found[pk].model_copy(update={"query": query}) for pk, query in ids.items() if pk in found]


class _Hit:
    """A chunk id as a search hit with no score (a neighbour is found, not ranked)."""

    def __init__(self, chunk_id: int) -> None:
        self.chunk_id, self.score = chunk_id, 0.0


def _alternate(lists: list[list[Source]]) -> list[Source]:
    """The lists interleaved rank by rank, each chunk once."""
    out: list[Source] = []
    seen: set[int] = set()
    for rank in range(max(map(len, lists), default=0)):
        for hits in lists:
            if rank < len(hits) and hits[rank].chunk_id not in seen:
                seen.add(hits[rank].chunk_id)
                out.append(hits[rank])
    return out


def _sources(hits: list, query: str) -> list[Source]:
    """The hits as Sources, in their order (a chunk deleted meanwhile is left out)."""
    chunks = Chunk.objects.select_related("document").in_bulk([h.chunk_id for h in hits])
    names = {c.document_id: document_name(c.document) for c in chunks.values()}
    out = []
    for h in hits:
        c = chunks.get(h.chunk_id)
        if c is None:
            continue
        out.append(Source(
            chunk_id=c.pk, document_id=c.document_id, document_title=c.document.title,
            file_name=c.document.original_name, document_name=names[c.document_id], page=c.page_start, page_end=c.page_end,
            section=c.section_title, text=c.text, score=float(h.score), query=query,
        ))
    return out


# The opening chunks (title, abstract, introduction) a paper's short name is read from.
NAME_CHUNKS = 6
_names: dict[tuple[int, str], str] = {}


def document_name(document) -> str:
    """The short name the document's text gives what it presents (agent.local.clarify.
    short_name), read once per process and document version."""
    from agent.local.clarify import short_name

    key = (document.pk, document.sha256)
    if key not in _names:
        opening = Chunk.objects.filter(document=document, is_reference=False).order_by("ordinal")[:NAME_CHUNKS]
        _names[key] = short_name(document.title or document.original_name,
                                 "\n".join(opening.values_list("text", flat=True)))
    return _names[key]


class MultiCollectionRetriever:
    """Asking across collections: each collection's own index searched, the lists fused by RRF.

    Scores of different indexes are not comparable (another vocabulary, other BM25
    statistics), ranks are: a chunk's fused score is 1 / (RRF_K + its rank in its collection). A chunk lives in one
    collection only, so ties between collections are broken by the collection's own score.
    """

    def __init__(self, collections: list[Collection], *, mode: str = "rrf", rerank: str | None = None,
                 document_ids: list[int] | None = None) -> None:
        # A collection none of `document_ids` is in finds nothing (an empty allow-list).
        self.parts = [CollectionRetriever(c, mode=mode, rerank=rerank, document_ids=document_ids)
                      for c in collections]

    def take_usage(self) -> Usage:
        total = Usage()
        for part in self.parts:
            total = total + part.take_usage()
        return total

    @property
    def thread_safe(self) -> bool:
        return all(part.thread_safe for part in self.parts)

    @staticmethod
    def vocabulary(document_id: int) -> Vocabulary | None:
        # Document ids are unique across collections.
        return document_vocabulary(document_id)

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        return _fused([part.retrieve(query, k=k) for part in self.parts], k)

    def retrieve_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        # Document ids are unique across collections: a part holding none of them finds nothing.
        return _fused([part.retrieve_within(query, k=k, document_ids=document_ids) for part in self.parts], k)

    def retrieve_sentences(self, query: str, *, k: int) -> list[Source]:
        # One embedding model for every collection of a portal: the cosines compare.
        found = [s for part in self.parts for s in part.retrieve_sentences(query, k=k)]
        return sorted(found, key=lambda s: -s.score)[:k]

    def retrieve_sentences_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        found = [s for part in self.parts for s in part.retrieve_sentences_within(query, k=k, document_ids=document_ids)]
        return sorted(found, key=lambda s: -s.score)[:k]

    def retrieve_heads(self, query: str, *, k: int) -> list[Source]:
        return _alternate([part.retrieve_heads(query, k=k) for part in self.parts])

    def neighbours(self, sources: list[Source]) -> list[Source]:
        # Each part finds the neighbours of its own chunks only.
        return [s for part in self.parts for s in part.neighbours(sources)]


def _fused(lists: list[list[Source]], k: int) -> list[Source]:
    """The collections' own rankings fused by rank (their scores do not compare)."""
    from knowledge.retrieval.fusion import RRF_K

    fused: list[tuple[float, float, Source]] = []
    for hits in lists:
        # The collections' chunks are disjoint, so ranks below k anywhere never reach the top k.
        for rank, source in enumerate(hits, start=1):
            fused.append((1.0 / (RRF_K + rank), source.score, source))
    fused.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [source.model_copy(update={"score": score}) for score, _, source in fused[:k]]


def portal_embed() -> EmbedFn:
    """The local roles' sentence embedder inside the portal: vectors from the EmbeddingCache
    table first (the index build stored every sentence there), the model for the rest."""
    from knowledge.embedding_cache import embed_with_cache
    from knowledge.embeddings import get_embedder

    # The model loads on the first sentence embedded, not here: an LLM-backed run never needs it.
    return get_embed(lambda texts: embed_with_cache(texts, embedder=get_embedder("local")), local_space())


class ThreadRetriever:
    """Wraps a retriever called from pool threads: each call closes its thread's connection."""

    def __init__(self, inner: CollectionRetriever | MultiCollectionRetriever) -> None:
        self.inner = inner

    def vocabulary(self, document_id: int) -> Vocabulary | None:
        return self.inner.vocabulary(document_id)

    def retrieve(self, query: str, *, k: int) -> list[Source]:
        return self._on_thread(self.inner.retrieve, query, k)

    def retrieve_sentences(self, query: str, *, k: int) -> list[Source]:
        return self._on_thread(self.inner.retrieve_sentences, query, k)

    def retrieve_heads(self, query: str, *, k: int) -> list[Source]:
        return self._on_thread(self.inner.retrieve_heads, query, k)

    def retrieve_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        return self._on_thread(partial(self.inner.retrieve_within, document_ids=document_ids), query, k)

    def retrieve_sentences_within(self, query: str, *, k: int, document_ids: list[int] | None) -> list[Source]:
        return self._on_thread(partial(self.inner.retrieve_sentences_within, document_ids=document_ids), query, k)

    def neighbours(self, sources: list[Source]) -> list[Source]:
        return self.inner.neighbours(sources)

    @staticmethod
    def _on_thread(search: Callable[..., list[Source]], query: str, k: int) -> list[Source]:
        if threading.current_thread() is threading.main_thread():
            return search(query, k=k)
        try:
            return search(query, k=k)
        finally:
            close_old_connections()
            connection.close()
