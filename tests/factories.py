"""Plain factory functions for test data."""

from __future__ import annotations

import hashlib
import itertools

from django.utils import timezone

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
    chunk = Chunk.objects.create(document=document, text=text, **fields)
    # As ingestion does: a document's chunk rows change only with its updated_at (the
    # index's document signatures, knowledge.indexing.rows.signatures).
    Document.objects.filter(pk=document.pk).update(updated_at=timezone.now())
    return chunk


def make_run(*, collection: Collection, user, **overrides):
    from agent.models import Run
    from agent.types import Outcome

    fields = {
        "question": "What does BM25 score?",
        "config_name": "agentic",
        "config_hash": "0" * 64,
        "status": Run.Status.DONE,
        "outcome": Outcome.ANSWER,
    }
    fields.update(overrides)
    return Run.objects.create(collection=collection, user=user, **fields)


def make_step(*, run, step, **overrides):
    """A RunStep row holding `step` (an agent.steps.Step model), stored as the loop stores it."""
    from agent.models import RunStep
    from agent.steps import STEP_SCHEMA_VERSION

    data_in, data_out = step.columns()
    fields = {"ordinal": run.steps.count(), "duration_ms": 12, "schema_version": STEP_SCHEMA_VERSION}
    fields.update(overrides)
    return RunStep.objects.create(run=run, kind=step.KIND, input=data_in, output=data_out, **fields)


def make_citation(*, run, chunk: Chunk | None, marker: int = 1, quote: str = "", **overrides):
    from agent.models import Citation

    text = chunk.text if chunk else overrides.pop("chunk_text", "")
    fields = {
        "document_title": chunk.document.title if chunk else "Removed document",
        "page": chunk.page_start if chunk else 1,
        "chunk_text": text,
        "quote": quote,
        "quote_start": text.find(quote) if quote else -1,
        "verified": bool(quote),
    }
    fields.update(overrides)
    return Citation.objects.create(run=run, chunk=chunk, marker=marker, **fields)


def make_thread(*, runs, **overrides):
    """A Thread whose turns are `runs` (the first one's collection, user and question)."""
    from agent.models import Run, Thread

    first = runs[0]
    fields = {"collection": first.collection, "user": first.user, "title": first.question}
    fields.update(overrides)
    thread = Thread.objects.create(**fields)
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(thread=thread)
    for run in runs:
        run.thread = thread
    return thread


def thread_of(world):
    """The api_world's run as a one-turn thread, made on first use (permission matrices)."""
    if "thread" not in world.extra:
        world.extra["thread"] = make_thread(runs=[world.run])
    return world.extra["thread"]
