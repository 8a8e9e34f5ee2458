"""The ingestion pipeline run by the `knowledge.ingest_document` task for one IngestJob.

extract (pypdf page by page, or text/HTML; cached per file sha256 + parser version)
→ chunk (knowledge.chunking) → embed (batched, through the EmbeddingCache)
→ write chunks (one transaction) → rebuild the index, which marks the document READY
once the index that contains it is the one queries load.

Every job ends DONE or FAILED with a message a person understands; the worker lives on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from knowledge import jobs
from knowledge.jobs import JobKind
from knowledge.metadata import infer_metadata, merge_inferred
from knowledge.models import Chunk, Collection, Document, ExtractedText, IngestJob

logger = logging.getLogger(__name__)


class Message(StrEnum):
    """Progress keys shown to the user (templates translate them into words)."""

    QUEUED = "QUEUED"
    PARSING = "PARSING"
    CHUNKING = "CHUNKING"
    EMBEDDING = "EMBEDDING"
    INDEXING = "INDEXING"
    DONE = "DONE"
    FAILED = "FAILED"


MESSAGE_LABELS = {
    Message.QUEUED: "Waiting for a worker",
    Message.PARSING: "Reading pages",
    Message.CHUNKING: "Splitting into passages",
    Message.EMBEDDING: "Embedding passages",
    Message.INDEXING: "Updating the search index",
    Message.DONE: "Ready",
    Message.FAILED: "Failed",
}


class IngestFailure(Exception):
    """A failure whose message is meant for the person who uploaded the file."""


@dataclass
class Timings:
    extract: float = 0.0
    chunk: float = 0.0
    embed: float = 0.0
    write: float = 0.0
    index: float = 0.0
    # CPU seconds of the embedding step (all threads): steadier than wall time on a busy machine.
    embed_cpu: float = 0.0
    extra: dict = field(default_factory=dict)


def file_path(document: Document) -> Path:
    return Path(settings.MEDIA_ROOT) / document.file


def _job_gave_up(job_id: int, error: str) -> None:
    """A job that killed its worker MAX_ATTEMPTS times: its document fails too (unless a
    previous ingest made it READY: it keeps its chunks)."""
    IngestJob.objects.filter(pk=job_id).update(message_key=Message.FAILED)
    document_id = IngestJob.objects.filter(pk=job_id).values_list("document_id", flat=True).first()
    Document.objects.filter(pk=document_id).exclude(status=Document.Status.READY).update(
        status=Document.Status.FAILED, error=error, updated_at=timezone.now())


# The lifecycle of an IngestJob row (knowledge.jobs): claim, progress, end, sweep.
INGEST_JOB = JobKind(
    name="jobs", model=IngestJob, task="knowledge.tasks.ingest_document", time_limit_setting="INGEST_TIME_LIMIT",
    doing="while ingesting this file", claimed={"message_key": Message.PARSING}, gave_up=_job_gave_up,
)


class _Progress:
    """Writes job progress at most every 0.3 s, so a 100-page file is not 100 UPDATEs."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last = 0.0

    def __call__(self, *, force: bool = False, **fields: object) -> None:
        now = time.monotonic()
        if force or now - self.last >= 0.3:
            jobs.heartbeat(INGEST_JOB, self.job_id, **fields)
            self.last = now


def job_claim(job_id: int) -> IngestJob | None:
    """Claim a job (knowledge.jobs.claim); None when another worker has it, it is final or gone."""
    if not jobs.claim(INGEST_JOB, job_id):
        return None
    return IngestJob.objects.select_related("document__collection").get(pk=job_id)


def _extract(document: Document, progress: _Progress):  # -> list[CleanPage], parser, version, metadata
    from knowledge import extract

    path = file_path(document)
    if not path.exists():
        raise IngestFailure("The stored file is missing; upload it again.")
    if document.media_type == "application/pdf":
        parser, version = "pypdf", extract.pdf_parser_version()
    else:
        parser, version = {"text/html": "html", "text/markdown": "markdown"}.get(document.media_type, "text"), extract.CLEANER_VERSION
    # The same file in another collection (or re-ingested) is parsed once.
    cached = ExtractedText.objects.filter(sha256=document.sha256, parser=parser, parser_version=version).first()
    if cached is not None:
        pages = [extract.CleanPage.from_json(p) for p in cached.pages]
        progress(force=True, pages_done=len(pages), pages_total=len(pages))
        return pages, parser, version, cached.metadata
    try:
        if document.media_type == "application/pdf":
            extracted = extract.extract_pdf(
                path, max_pages=settings.PDF_MAX_PAGES, max_chars=settings.EXTRACT_MAX_CHARS,
                max_stream_bytes=settings.PDF_MAX_STREAM_BYTES,
                on_page=lambda done, total: progress(pages_done=done, pages_total=total),
            )
        else:
            raw = path.read_bytes()
            text = raw.decode("utf-8-sig", errors="replace")
            extracted = extract.extract_text(text, media_type=document.media_type, max_chars=settings.EXTRACT_MAX_CHARS)
    except extract.ExtractError as exc:
        raise IngestFailure(exc.message) from exc
    ExtractedText.objects.get_or_create(
        sha256=document.sha256, parser=extracted.parser, parser_version=extracted.parser_version,
        defaults={"pages": [p.to_json() for p in extracted.pages], "metadata": extracted.metadata},
    )
    progress(force=True, pages_done=extracted.page_count, pages_total=extracted.page_count)
    return extracted.pages, extracted.parser, extracted.parser_version, extracted.metadata


def _sentence_boxes(document: Document, specs: list) -> list[list]:
    """Each chunk's sentence rectangles on its PDF pages (the viewer's highlight); [] for
    text sources. Never fails the job: without boxes the viewer shows the page."""
    if document.media_type != "application/pdf":
        return [[] for _ in specs]
    from knowledge.pdf_boxes import chunk_boxes

    try:
        return chunk_boxes(file_path(document), specs)
    except Exception:
        logger.exception("sentence boxes failed for document %s; the viewer will show pages only", document.pk)
        return [[] for _ in specs]


def _check_model(collection: Collection, model_id: str) -> None:
    """Fix the collection's embedding model on first ingest; refuse a silent mismatch."""
    Collection.objects.filter(pk=collection.pk, embedding_model="").update(embedding_model=model_id)
    current = Collection.objects.filter(pk=collection.pk).values_list("embedding_model", flat=True).get()
    collection.embedding_model = current
    if current != model_id:
        raise IngestFailure(
            f"This collection's passages are embedded with {current}, but the portal now uses {model_id}. "
            "An owner must re-embed the collection (manage.py reingest --reembed) before new files can be added."
        )


def document_process(*, job: IngestJob, embedder=None, timings: Timings | None = None) -> None:
    """Run the pipeline for a claimed job. Raises IngestFailure (or anything) on failure."""
    from knowledge.chunking import ChunkParams, chunk_pages
    from knowledge.embedding_cache import default_embedder, embed_with_cache
    from knowledge.embeddings import cache_key

    timings = timings or Timings()
    document = job.document
    collection = document.collection
    embedder = embedder or default_embedder()
    _check_model(collection, embedder.model_id)
    progress = _progress_for(job)
    if document.status != Document.Status.READY:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.PROCESSING, error="")

    t = time.perf_counter()
    pages, parser, version, found = _extract(document, progress)
    timings.extract = time.perf_counter() - t

    t = time.perf_counter()
    progress(force=True, message_key=Message.CHUNKING)
    params = ChunkParams()
    specs = chunk_pages(pages, params=params)
    if not specs:
        raise IngestFailure("No text was found in this file.")
    timings.chunk = time.perf_counter() - t

    t = time.perf_counter()
    boxes = _sentence_boxes(document, specs)
    timings.extra["boxes"] = time.perf_counter() - t

    t, cpu = time.perf_counter(), time.process_time()
    progress(force=True, message_key=Message.EMBEDDING, chunks_total=len(specs), chunks_done=0)
    embed_with_cache(
        [s.text for s in specs], embedder=embedder, batch_size=settings.EMBEDDING_BATCH_SIZE,
        progress=lambda done, total: progress(chunks_done=done),
    )
    timings.embed = time.perf_counter() - t
    timings.embed_cpu = time.process_time() - cpu

    t = time.perf_counter()
    # All chunks in one transaction: search never sees half a document. A new document stays
    # PROCESSING until the index rebuild below publishes it (READY = searchable); one that was
    # READY stays READY, its old chunks replaced at once.
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None:
            raise IngestFailure("The document was deleted while it was being ingested.")
        Chunk.objects.filter(document_id=document.pk).delete()
        Chunk.objects.bulk_create([
            Chunk(
                document_id=document.pk, ordinal=s.ordinal, text=s.text, section_title=s.section_title,
                page_start=s.page_start, page_end=s.page_end, char_start=s.char_start, char_end=s.char_end,
                token_count=s.token_count, is_reference=s.is_reference, embedding_model=embedder.model_id,
                text_hash=cache_key(embedder.model_id, s.text), boxes=sentence_boxes,
            )
            for s, sentence_boxes in zip(specs, boxes, strict=True)
        ], batch_size=500)
        # The file's own stamp wins over an identifier in its name.
        inferred = {**infer_metadata("", document.original_name), **found}
        metadata = merge_inferred(locked.metadata or {}, inferred)
        # The printed title replaces the file-name title (the file name stays as original_name),
        # unless an editor set one.
        title = metadata.get("title") if "title" not in metadata.get("edited", []) else None
        Document.objects.filter(pk=document.pk).update(
            error="", pages=len(pages), parser=parser, parser_version=version,
            chunking=params.to_json(), metadata=metadata, updated_at=timezone.now(),
            **({"title": title[:500]} if title else {}),
        )
    timings.write = time.perf_counter() - t

    t = time.perf_counter()
    progress(force=True, message_key=Message.INDEXING, chunks_done=len(specs))
    index_after_change(collection, publish=(document.pk,))
    timings.index = time.perf_counter() - t


def _progress_for(job: IngestJob) -> _Progress:
    return _Progress(job.pk)


def index_after_change(collection: Collection, publish: tuple[int, ...] = ()) -> None:
    """Rebuild the collection's retrieval index (knowledge.indexing owns the index); the
    `publish` documents become READY with it."""
    from knowledge.indexing.build import index_rebuild

    index_rebuild(collection=collection, publish=publish)


def job_run(*, job_id: int, embedder=None, timings: Timings | None = None) -> IngestJob | None:
    """Claim and run one job; every path ends with the job DONE or FAILED."""
    from celery.exceptions import SoftTimeLimitExceeded

    job = job_claim(job_id)
    if job is None:
        logger.info("ingest job %s is gone, final or taken by another worker", job_id)
        return None
    error = ""
    try:
        document_process(job=job, embedder=embedder, timings=timings)
    except IngestFailure as exc:
        error = str(exc)
    except SoftTimeLimitExceeded:
        error = (f"Ingestion took longer than {settings.INGEST_SOFT_TIME_LIMIT} s and was stopped. "
                 "Split the file or ask an operator to raise PORTAL_INGEST_SOFT_TIME_LIMIT.")
    except Exception:
        logger.exception("ingest job %s failed", job_id)
        error = "An unexpected error stopped the ingestion; the operators have the details in the worker log. Retry it."
    _finish(job, error)
    job.refresh_from_db()
    return job


def _finish(job: IngestJob, error: str) -> None:
    if not error:
        jobs.finish(INGEST_JOB, job.pk, message_key=Message.DONE, error="")
        return
    with transaction.atomic():
        jobs.fail(INGEST_JOB, job.pk, error, message_key=Message.FAILED)
        # A document that was READY keeps its previous chunks (a failed re-ingest loses nothing).
        now = timezone.now()
        document = Document.objects.filter(pk=job.document_id).first()
        if document is not None and document.status != Document.Status.READY:
            Document.objects.filter(pk=document.pk).update(status=Document.Status.FAILED, error=error, updated_at=now)
        elif document is not None:
            Document.objects.filter(pk=document.pk).update(error=error, updated_at=now)
