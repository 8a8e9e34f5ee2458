"""Plain factory functions for test data."""

from __future__ import annotations

import hashlib
import itertools

from knowledge.models import Chunk, Collection, Document

_seq = itertools.count(1)


def make_document(*, collection: Collection, **overrides) -> Document:
    n = next(_seq)
    fields = {
        "title": f"Document {n}",
        "original_name": f"document-{n}.txt",
        "file": f"files/{n:064d}",
        "sha256": hashlib.sha256(f"doc-{n}".encode()).hexdigest(),
        "media_type": "text/plain",
        "status": Document.Status.READY,
        "pages": 1,
    }
    fields.update(overrides)
    return Document.objects.create(collection=collection, **fields)


def make_chunk(*, document: Document, text: str, **overrides) -> Chunk:
    fields = {
        "ordinal": document.chunks.count(),
        "page_start": 1,
        "page_end": 1,
        "char_start": 0,
        "char_end": len(text),
        "token_count": len(text.split()),
        "embedding_model": "test",
    }
    fields.update(overrides)
    return Chunk.objects.create(document=document, text=text, **fields)
