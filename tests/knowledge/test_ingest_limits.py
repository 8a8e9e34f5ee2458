"""Limits that hold at ingestion whatever the upload check saw (issue 15, point 15)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge import services
from knowledge.ingest import job_run
from knowledge.models import Chunk, IngestJob

pytestmark = pytest.mark.django_db


def test_a_large_text_file_with_nul_bytes_past_its_head_fails_its_job_with_the_reason(collection, alice):
    # Upload reads only the head of a file over 2 MB; the NUL bytes come after it.
    data = b"plain words of text\n" * 120_000 + b"\x00\x01 binary tail"
    document, _ = services.document_upload(
        collection=collection, user=alice, uploaded_file=SimpleUploadedFile("notes.txt", data))
    job = job_run(job_id=document.jobs.latest("pk").pk)
    assert job.status == IngestJob.Status.FAILED
    assert "binary data (NUL bytes)" in job.error
    assert not Chunk.objects.filter(document=document).exists()
