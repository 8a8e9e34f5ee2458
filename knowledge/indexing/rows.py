"""A collection's index rows, made from its chunk rows (knowledge.indexing).

A chunk's rows are its BM25 text (title and section heading in front, `bm25_text`), its
vector and the vectors of its answer-eligible sentences, all through the embedding cache;
a document's signature stamps what its rows are a function of, so an incremental build
(knowledge.indexing.incremental) reads only the document rows to know what changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection as Collection_
from typing import Any

import numpy as np
from django.db.models import Q

from knowledge.models import Chunk, Document
from knowledge.retrieval.store import IndexData

# Bump when what a chunk's index rows are made of changes (tokeniser, sentence selection,
# bm25_text, the document signature): a previous version built otherwise is not built on,
# the index is rebuilt.
BUILDER = 3


def _split_sentences(text: str) -> list[str]:
    # The agent's local roles quote sentences with the same splitter (knowledge.text), so a
    # sentence the reranker scores is a sentence the auditor can cite.
    from knowledge.text import split_sentences

    return split_sentences(text)


def _chunk_vectors(rows: list[tuple], embedder: Any) -> np.ndarray:
    """Chunk vectors from the embedding cache by text_hash; chunks without one are embedded."""
    from knowledge.embedding_cache import embed_with_cache, vectors_for_keys

    cached = vectors_for_keys(r[3] for r in rows if r[3])
    out = np.zeros((len(rows), embedder.dim), dtype=np.float32)
    missing: list[int] = []
    for i, row in enumerate(rows):
        vec = cached.get(row[3]) if row[3] else None
        if vec is None or vec.shape[0] != embedder.dim:
            missing.append(i)
        else:
            out[i] = vec
    if missing:
        out[missing] = embed_with_cache([rows[i][2] for i in missing], embedder=embedder)
    return out


def bm25_text(title: str, section_title: str, text: str) -> str:
    """What BM25 indexes for a chunk: its document's title and section heading, then its text.

    A question often names the paper or the method ("How does Ragas turn ...") while the
    chunk that answers it never repeats that name. The heading line lets BM25 match it; a
    title term is in every chunk of its document, so its idf stays modest in a collection
    of many documents. On the devbench papers this lifted BM25's evidence recall@5 from
    0.42 to 0.56 (docs/benchmarks.md). Dense vectors embed the chunk text alone, which fits
    the model's 256 word pieces.
    """
    return f"{title}\n{section_title}\n{text}"


def signatures(documents) -> dict[str, str]:
    """Per document (id as text, as JSON keys are) of the `documents` queryset: a stamp of
    its title and `updated_at`, which its rows in the index are a function of.

    A document's chunk rows change only together with its `updated_at`: ingestion deletes
    and writes them in the transaction that sets it, a re-embedding sets it with the new
    text hashes (services.collection_reembed), a rename saves the row; and BM25 indexes the
    title with every chunk. So one read of the collection's document rows tells what changed,
    whatever the number of chunks. The chunk rows themselves (a grouped query over them)
    took 7.7 of the 8.5 s of an upload's index step at 1M chunks (docs/benchmarks.md,
    "Segments"). A writer of chunk rows must keep this rule (tests/factories.make_chunk does).
    """
    from django.db.models import CharField
    from django.db.models.functions import Cast

    # The time as the database stores it (no datetime made per row: at 20k documents that
    # conversion and a JSON dump per row were most of an upload's index step).
    rows = documents.order_by().values_list("id", "title", Cast("updated_at", output_field=CharField()))
    return {str(pk): f"{updated}|{hashlib.sha256(title.encode()).hexdigest()[:16]}" for pk, title, updated in rows}


def included_documents(collection_id: int, publish: Collection_[int]):
    included = Q(status=Document.Status.READY) | Q(pk__in=list(publish), status=Document.Status.PROCESSING)
    return Document.objects.filter(included, collection_id=collection_id)


def included_chunks(collection_id: int, publish: Collection_[int]):
    included = Q(document__status=Document.Status.READY) | Q(document_id__in=list(publish),
                                                              document__status=Document.Status.PROCESSING)
    return Chunk.objects.filter(included, document__collection_id=collection_id).order_by("document_id", "ordinal")


def make_rows(chunks, embedder: Any, meta: dict, documents) -> IndexData:
    """The index rows of `chunks` (a queryset in document, ordinal order), made from scratch;
    `documents`: theirs (meta["documents"] gets their signatures)."""
    from knowledge.embedding_cache import embed_with_cache
    from knowledge.retrieval.bm25 import BM25Index
    from knowledge.retrieval.tokenize import tokenize

    rows = list(chunks.values_list("id", "document_id", "text", "text_hash", "is_reference", "document__title",
                                   "section_title"))
    vectors = _chunk_vectors(rows, embedder) if rows else np.zeros((0, embedder.dim), dtype=np.float32)
    # Sentence vectors for the sentence reranker (and, through the cache, the auditor).
    # A reference-section chunk gets none: the reranker then scores it by its chunk vector.
    # Bibliography entries split into many fragments that no answer quotes, and embedding
    # them was a third of the index build of a long paper.
    # Only answer-eligible sentences get one, in the form the auditor quotes (knowledge.text.
    # quotable: a glued heading or footnote number cut off), so its embeddings are cache hits:
    # a heading, a figure label or a table row is never the best sentence of a chunk, and
    # skipping them saves their embedding time.
    from knowledge.text import quotable

    sentences: list[str] = []
    offsets = [0]
    for row in rows:
        if not row[4]:
            sentences.extend(q for q in map(quotable, _split_sentences(row[2])) if q)
        offsets.append(len(sentences))
    sent_vectors = embed_with_cache(sentences, embedder=embedder) if sentences else np.zeros(
        (0, embedder.dim), dtype=np.float32)
    meta["documents"].update(signatures(documents))
    return IndexData(
        chunk_ids=np.array([r[0] for r in rows], dtype=np.int64),
        document_ids=np.array([r[1] for r in rows], dtype=np.int64),
        is_reference=np.array([r[4] for r in rows], dtype=bool),
        bm25=BM25Index.build(tokenize(bm25_text(r[5], r[6], r[2])) for r in rows),
        vectors=vectors,
        sent_vectors=sent_vectors,
        sent_offsets=np.array(offsets, dtype=np.int64),
        meta=meta,
    )


def index_meta(collection_id: int, embedder: Any) -> dict[str, Any]:
    return {"embedding_model": embedder.model_id, "collection": collection_id, "builder": BUILDER,
            "documents": {}}
