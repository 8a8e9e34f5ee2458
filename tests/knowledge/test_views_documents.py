"""The documents section of the collection page: upload, polling, file view, delete, retry."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from knowledge.ingest import job_run
from knowledge.models import Document, IngestJob

pytestmark = pytest.mark.django_db


def _login(client, user, password):
    assert client.login(username=user.username, password=password)
    return client


def _upload(client, collection, *files):
    return client.post(reverse("knowledge:document_upload", args=[collection.slug]), {"files": list(files)}, follow=True)


def test_it_uploads_several_files_and_lists_them_with_progress(client, collection, alice, password):
    _login(client, alice, password)
    response = _upload(client, collection, SimpleUploadedFile("a.md", b"# A\n\nAlpha."), SimpleUploadedFile("b.txt", b"Beta text."))
    assert response.status_code == 200
    assert "2 files queued for ingestion." in response.content.decode()
    page = client.get(reverse("knowledge:collection_detail", args=[collection.slug])).content.decode()
    assert 'id="upload-form"' in page and "<progress" in page and "Waiting for a worker" in page
    status = client.get(reverse("knowledge:document_status", args=[collection.slug])).json()
    assert status["busy"] is True and len(status["order"]) == 2


def test_polling_shows_the_final_state(client, collection, alice, password):
    _login(client, alice, password)
    _upload(client, collection, SimpleUploadedFile("a.md", b"# A\n\nAlpha."), SimpleUploadedFile("bad.pdf", b"%PDF-1.4 garbage"))
    for job in IngestJob.objects.all():
        job_run(job_id=job.pk)
    status = client.get(reverse("knowledge:document_status", args=[collection.slug])).json()
    assert status["busy"] is False
    rows = "".join(status["rows"].values())
    assert "Ready" in rows and "1 page, 1 passage" in rows
    assert "Failed" in rows and "damaged" in rows and "Retry" in rows


def test_it_reports_duplicates_and_refused_types(client, collection, alice, password):
    _login(client, alice, password)
    _upload(client, collection, SimpleUploadedFile("a.txt", b"Same text."))
    body = _upload(client, collection, SimpleUploadedFile("copy.txt", b"Same text."),
                   SimpleUploadedFile("x.bin", b"\x00\x01\x02")).content.decode()
    assert "already in this collection" in body and "cannot be ingested" in body
    assert Document.objects.count() == 1


def test_viewers_see_documents_but_cannot_upload_or_delete(client, collection, alice, bob, password):
    from knowledge import services

    document, _ = services.document_upload(collection=collection, user=alice, uploaded_file=SimpleUploadedFile("a.txt", b"Hi."))
    _login(client, bob, password)
    page = client.get(reverse("knowledge:collection_detail", args=[collection.slug])).content.decode()
    assert "a" in page and 'id="upload-form"' not in page
    assert _upload(client, collection, SimpleUploadedFile("b.txt", b"x")).status_code == 403
    assert client.post(reverse("knowledge:document_delete", args=[document.pk])).status_code == 403
    file = client.get(reverse("knowledge:document_file", args=[document.pk]))
    assert file.status_code == 200 and b"".join(file.streaming_content) == b"Hi."


def test_outsiders_get_404_everywhere(client, collection, alice, charlie, password):
    from knowledge import services

    document, _ = services.document_upload(collection=collection, user=alice, uploaded_file=SimpleUploadedFile("a.txt", b"Hi."))
    _login(client, charlie, password)
    assert client.get(reverse("knowledge:document_status", args=[collection.slug])).status_code == 404
    assert client.get(reverse("knowledge:document_file", args=[document.pk])).status_code == 404
    assert client.post(reverse("knowledge:document_delete", args=[document.pk])).status_code == 404
    assert client.post(reverse("knowledge:document_retry", args=[document.pk])).status_code == 404
    assert _upload(client, collection, SimpleUploadedFile("b.txt", b"x")).status_code == 404


def test_html_is_downloaded_never_rendered_inline(client, collection, alice, password):
    from knowledge import services

    document, _ = services.document_upload(
        collection=collection, user=alice, uploaded_file=SimpleUploadedFile("p.html", b"<html><body><script>alert(1)</script></body></html>")
    )
    _login(client, alice, password)
    response = client.get(reverse("knowledge:document_file", args=[document.pk]))
    assert response["Content-Disposition"].startswith("attachment")
    assert response["Content-Type"] == "application/octet-stream"


def test_delete_and_retry_from_the_page(client, collection, alice, password, settings):
    _login(client, alice, password)
    _upload(client, collection, SimpleUploadedFile("bad.pdf", b"%PDF-1.4 broken"))
    document = Document.objects.get()
    job_run(job_id=document.jobs.get().pk)
    response = client.post(reverse("knowledge:document_retry", args=[document.pk]), follow=True)
    assert "queued again" in response.content.decode()
    assert document.jobs.count() == 2
    response = client.post(reverse("knowledge:document_delete", args=[document.pk]), follow=True)
    assert "was deleted" in response.content.decode() and not Document.objects.exists()


def test_the_text_of_a_markdown_source_shows_each_passage_once_with_the_cited_one_marked(client, collection, alice):
    from tests.conftest import ingest_markdown

    body = "\n\n".join(f"## Part {n}\n\n" + " ".join(f"Fact {n}.{k} about fusion." for k in range(40)) for n in range(6))
    document = ingest_markdown(collection, alice, "notes.md", f"# Notes\n\n{body}\n")
    chunks = list(document.chunks.order_by("ordinal"))
    assert len(chunks) > 2, "the test needs a document of several chunks"
    cited = chunks[len(chunks) // 2]
    quote = cited.text.split(". ")[1]
    client.force_login(alice)
    page = client.get(reverse("knowledge:document_text", args=[document.pk]), {"chunk": cited.pk, "quote": quote})
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('id="passage"') == 1
    passage = html.split('id="passage"', 1)[1].split("</section>", 1)[0]
    assert f"<mark>{quote}</mark>" in passage
    # Overlaps are not repeated: every fact appears once on the page.
    for n in range(6):
        for k in range(40):
            assert html.count(f"Fact {n}.{k} about") == 1, (n, k)


def test_the_text_page_escapes_the_document(client, collection, alice):
    from tests.conftest import ingest_markdown

    document = ingest_markdown(collection, alice, "x.md", "# X\n\nA <script>alert(1)</script> paragraph.\n")
    client.force_login(alice)
    html = client.get(reverse("knowledge:document_text", args=[document.pk])).content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
