"""The real round trip (issue #2): upload → Celery worker process → job done → chunks in the database.

Runs on kombu's filesystem transport by default and on Redis when PORTAL_REDIS_URL is set (CI).
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge import services
from knowledge.models import Chunk, Document, IngestJob


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_ingests_an_upload_and_survives_a_bad_file(celery_worker_process, collection, alice):
    good, _ = services.document_upload(
        collection=collection, user=alice,
        uploaded_file=SimpleUploadedFile("guide.md", b"# Guide\n\nGrounded cites every sentence.\n\n## Upload\n\nDrop files."),
    )
    bad, _ = services.document_upload(
        collection=collection, user=alice, uploaded_file=SimpleUploadedFile("broken.pdf", b"%PDF-1.7\nnot really a pdf"),
    )
    final = (IngestJob.Status.DONE, IngestJob.Status.FAILED)

    def finished():
        jobs = list(IngestJob.objects.filter(document__in=[good, bad]).values_list("status", flat=True))
        return len(jobs) == 2 and all(s in final for s in jobs)

    celery_worker_process(finished, timeout=90)
    good.refresh_from_db()
    bad.refresh_from_db()
    assert good.status == Document.Status.READY, good.error
    assert good.jobs.get().status == IngestJob.Status.DONE
    assert Chunk.objects.filter(document=good).count() >= 1
    assert bad.status == Document.Status.FAILED and "damaged" in bad.error
    # The worker lived on after the bad file: a third upload is processed too.
    third, _ = services.document_upload(
        collection=collection, user=alice, uploaded_file=SimpleUploadedFile("n.txt", b"Another plain text file."),
    )
    celery_worker_process(lambda: IngestJob.objects.filter(document=third, status=IngestJob.Status.DONE).exists(), timeout=60)
    collection.refresh_from_db()
    assert collection.index_version >= 2
