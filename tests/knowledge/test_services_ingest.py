"""Document services and the ingestion pipeline, run synchronously (the task body) with the
real local embedder; bad files are generated here."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import Http404

from knowledge import services
from knowledge.embeddings import LOCAL_MODEL_ID, get_embedder
from knowledge.ingest import job_run
from knowledge.models import Chunk, Collection, Document, EmbeddingCache, ExtractedText, IngestJob, Role

pytestmark = pytest.mark.django_db


class SpyEmbedder:
    """The real local model, counting the texts that reach it."""

    model_id = LOCAL_MODEL_ID
    dim = 384

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return get_embedder("local").embed(texts)


def _pdf(pages: list[str]) -> bytes:
    """A small real PDF with one text line per page (Helvetica), written by hand."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for text in pages:
        lines = [text[i : i + 80] for i in range(0, len(text), 80)] or [""]
        ops = "BT /F1 11 Tf 14 TL 50 780 Td " + " ".join(
            "(" + ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*" for ln in lines
        ) + " ET"
        objects.append(f"<< /Length {len(ops)} >>\nstream\n{ops}\nendstream")
        content = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>")
        kids.append(len(objects))
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    return _assemble(objects)


def _assemble(objects: list[str | bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, start=1):
        offsets.append(out.tell())
        body = obj if isinstance(obj, bytes) else obj.encode("latin-1")
        out.write(f"{i} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for off in offsets:
        out.write(f"{off:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


PAGES = [
    "Grounded answers questions from papers. Every sentence of an answer cites a passage on a page. " * 3,
    "The second page explains dense retrieval with normalised vectors and exact cosine similarity. " * 3,
]


def _upload(collection, user, name: str, data: bytes):
    return services.document_upload(collection=collection, user=user, uploaded_file=SimpleUploadedFile(name, data))


def _run_latest(document, embedder=None) -> IngestJob:
    job = document.jobs.order_by("-pk").first()
    return job_run(job_id=job.pk, embedder=embedder)


def test_it_ingests_a_pdf_into_cited_chunks(collection, alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        document, created = _upload(collection, alice, "grounded.pdf", _pdf(PAGES))
    assert created and document.status == Document.Status.QUEUED and document.media_type == "application/pdf"
    assert len(callbacks) == 1  # the task is queued only after commit
    job = _run_latest(document)
    assert job.status == IngestJob.Status.DONE and job.pages_done == job.pages_total == 2
    assert job.chunks_done == job.chunks_total > 0
    document.refresh_from_db()
    assert document.status == Document.Status.READY and document.pages == 2
    assert document.parser == "pypdf" and document.chunking["max_tokens"] == 250
    chunks = list(document.chunks.order_by("ordinal"))
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 2
    assert all(c.embedding_model == LOCAL_MODEL_ID and len(c.text_hash) == 64 for c in chunks)
    # Each sentence keeps its boxes on its own page, for the viewer's highlight.
    placed = [(c.text[start:end], rects) for c in chunks for start, end, rects in c.boxes]
    assert placed and all(rects for _, rects in placed)
    for sentence, rects in placed:
        assert {r[0] for r in rects} == ({2} if "second page" in sentence else {1}), sentence
    assert EmbeddingCache.objects.filter(key__in=[c.text_hash for c in chunks]).count() == len(set(c.text_hash for c in chunks))
    collection.refresh_from_db()
    assert collection.embedding_model == LOCAL_MODEL_ID
    assert collection.index_version >= 1


def test_it_reports_the_same_file_twice_as_already_there(collection, alice):
    first, created = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    again, created_again = _upload(collection, alice, "renamed.pdf", _pdf(PAGES))
    assert created and not created_again and again.pk == first.pk
    assert IngestJob.objects.filter(document=first).count() == 1


def test_a_second_collection_reuses_extracted_text_and_embeds_nothing(collection, alice):
    document, _ = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    _run_latest(document, SpyEmbedder())
    other = services.collection_create(name="Other", user=alice)
    copy, created = _upload(other, alice, "a.pdf", _pdf(PAGES))
    spy = SpyEmbedder()
    job = _run_latest(copy, spy)
    assert created and job.status == IngestJob.Status.DONE
    assert spy.texts == []
    assert ExtractedText.objects.count() == 1
    assert copy.chunks.count() == document.chunks.count()


def test_it_refuses_viewers_and_outsiders(collection, bob, charlie):
    with pytest.raises(PermissionDenied):
        _upload(collection, bob, "a.txt", b"hello")
    with pytest.raises(Http404):
        _upload(collection, charlie, "a.txt", b"hello")
    assert not Document.objects.exists()


def test_it_refuses_a_file_over_the_size_limit(collection, alice, settings):
    settings.UPLOAD_MAX_BYTES = 100
    with pytest.raises(ValidationError) as info:
        _upload(collection, alice, "big.txt", b"x" * 101)
    assert info.value.code == "too_large" and "MB limit" in info.value.messages[0]
    assert not Document.objects.exists()
    assert not any(p.is_file() for p in (settings.MEDIA_ROOT / "files").rglob("*"))


@pytest.mark.parametrize("name,data", [
    ("random.pdf", bytes(range(256)) * 20),
    ("image.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100),
    ("latin1.txt", "café crème".encode("latin-1") * 10),
])
def test_it_refuses_a_wrong_type_by_content_not_name(collection, alice, name, data):
    with pytest.raises(ValidationError) as info:
        _upload(collection, alice, name, data)
    assert info.value.code == "unsupported_type" and "cannot be ingested" in info.value.messages[0]


def test_it_decides_text_types_by_content(collection, alice):
    html, _ = _upload(collection, alice, "page.pdf", b"<!DOCTYPE html><html><body><h1>Hi</h1><p>There.</p></body></html>")
    md, _ = _upload(collection, alice, "guide.md", b"# Guide\n\nUpload files.\n")
    assert html.media_type == "text/html" and md.media_type == "text/markdown"
    assert _run_latest(md).status == IngestJob.Status.DONE
    chunk = md.chunks.get()
    assert chunk.section_title == "Guide" and chunk.text == "Guide\n\nUpload files."


def _encrypted() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf(PAGES))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _image_only() -> bytes:
    pixels = b"\xff\x00\x00" * 64
    image = b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length %d >>\nstream\n" % len(pixels) + pixels + b"\nendstream"
    ops = "q 200 0 0 200 100 500 cm /Im1 Do Q"
    return _assemble([
        "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>",
        image, f"<< /Length {len(ops)} >>\nstream\n{ops}\nendstream",
    ])


def _bomb() -> bytes:
    # 200 MB of zeros in a 200 KB Flate stream: a decompression bomb as a page's content.
    packed = zlib.compress(b"0 " * (100 * 1024 * 1024), 9)
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream"
    return _assemble([
        "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>", content,
    ])


def _zero_pages() -> bytes:
    return _assemble(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"])


@pytest.mark.parametrize("make,reason", [
    (_encrypted, "password-protected"),
    (lambda: _pdf(PAGES)[: len(_pdf(PAGES)) // 2], "damaged"),
    (lambda: b"%PDF-1.7\n" + bytes(range(256)) * 40, "damaged"),
    (_image_only, "OCR is not available"),
    (_bomb, "decompression bomb"),
    (_zero_pages, "no pages"),
], ids=["encrypted", "truncated", "random-bytes", "image-only", "bomb", "zero-pages"])
def test_a_bad_pdf_fails_with_its_reason_and_leaves_nothing_half_written(collection, alice, make, reason):
    document, _ = _upload(collection, alice, "bad.pdf", make())
    job = _run_latest(document)
    assert job.status == IngestJob.Status.FAILED and job.finished_at is not None
    assert reason in job.error, job.error
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED and reason in document.error
    assert not Chunk.objects.filter(document=document).exists()


def test_it_refuses_an_absurd_page_count(collection, alice, settings):
    settings.PDF_MAX_PAGES = 3
    document, _ = _upload(collection, alice, "long.pdf", _pdf(["page"] * 4))
    job = _run_latest(document)
    assert job.status == IngestJob.Status.FAILED and "the limit is 3" in job.error


def test_it_bounds_the_extracted_text(collection, alice, settings):
    settings.EXTRACT_MAX_CHARS = 1000
    document, _ = _upload(collection, alice, "long.pdf", _pdf(["word " * 300]))
    assert "characters of text" in _run_latest(document).error


def test_a_failed_job_can_be_retried(collection, alice, settings):
    settings.PDF_MAX_PAGES = 1
    document, _ = _upload(collection, alice, "two.pdf", _pdf(PAGES))
    assert _run_latest(document).status == IngestJob.Status.FAILED
    settings.PDF_MAX_PAGES = 100
    job = services.ingest_job_retry(document=document)
    assert job.status == IngestJob.Status.QUEUED and document.status == Document.Status.QUEUED
    assert _run_latest(document).status == IngestJob.Status.DONE
    with pytest.raises(ValidationError):
        services.ingest_job_retry(document=document)


def test_running_a_job_twice_does_nothing_the_second_time(collection, alice):
    document, _ = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    job = document.jobs.get()
    assert job_run(job_id=job.pk).status == IngestJob.Status.DONE
    assert job_run(job_id=job.pk) is None
    assert job_run(job_id=999999) is None


def test_delete_removes_chunks_file_and_index_entries(collection, alice, settings):
    from knowledge.indexing.search import index_search

    document, _ = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    _run_latest(document)
    assert index_search(collection=collection, query="dense retrieval normalised vectors", k=3)
    path = settings.MEDIA_ROOT / document.file
    services.document_delete(document=document)
    assert not path.exists() and not Chunk.objects.exists()
    collection.refresh_from_db()
    assert index_search(collection=collection, query="dense retrieval normalised vectors", k=3) == []


def test_reingest_replaces_chunks_and_embeds_nothing_new(collection, alice):
    document, _ = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    _run_latest(document)
    before = list(document.chunks.values_list("text", flat=True))
    services.document_reingest(document=document)
    spy = SpyEmbedder()
    assert _run_latest(document, spy).status == IngestJob.Status.DONE
    assert list(document.chunks.values_list("text", flat=True)) == before and spy.texts == []


def test_a_different_embedding_model_is_refused_until_reembed(collection, alice):
    class OtherModel(SpyEmbedder):
        model_id = "other-model"

        def embed(self, texts):
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    document, _ = _upload(collection, alice, "a.pdf", _pdf(PAGES))
    _run_latest(document)
    second, _ = _upload(collection, alice, "b.md", b"# B\n\nAnother file.\n")
    job = _run_latest(second, OtherModel())
    assert job.status == IngestJob.Status.FAILED and "re-embed" in job.error
    count = services.collection_reembed(collection=collection, embedder=OtherModel())
    assert count == document.chunks.count()
    assert Collection.objects.get(pk=collection.pk).embedding_model == "other-model"
    assert set(Chunk.objects.values_list("embedding_model", flat=True)) == {"other-model"}


def test_editors_may_upload(collection, alice, bob):
    services.membership_set(collection=collection, user=bob, role=Role.EDITOR)
    _, created = _upload(collection, bob, "a.txt", b"plain text")
    assert created
