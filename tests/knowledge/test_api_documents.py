"""Documents over the API: upload (201/200/413/415), status and progress, download, retry, delete."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from knowledge.models import Document, IngestJob
from tests.api_support import ApiWorld

pytestmark = pytest.mark.django_db


def _client(world: ApiWorld, role: str = "owner") -> APIClient:
    return world.client(role)


def _upload(client: APIClient, world: ApiWorld, name: str, content: bytes, content_type: str = "text/plain"):
    url = reverse("api:document_list", kwargs={"slug": world.collection.slug})
    return client.post(url, {"file": SimpleUploadedFile(name, content, content_type)}, format="multipart")


def test_it_uploads_a_file_and_queues_its_ingestion(api_world):
    response = _upload(
        _client(api_world, "editor"), api_world, "fusion.md", b"# RRF\n\nReciprocal rank fusion.\n"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "queued"
    assert body["media_type"] == "text/markdown"
    assert body["title"] == "fusion"
    assert body["job"]["status"] == "queued"
    assert body["progress"] == 0.0
    assert response["Location"] == body["url"]
    assert IngestJob.objects.filter(document_id=body["id"]).count() == 1


def test_it_reports_the_same_file_twice_as_already_there(api_world):
    client = _client(api_world)
    first = _upload(client, api_world, "a.txt", b"The same words.\n")
    second = _upload(client, api_world, "b.txt", b"The same words.\n")
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["id"] == first.json()["id"]
    assert IngestJob.objects.filter(document_id=first.json()["id"]).count() == 1


def test_it_answers_413_for_an_oversize_upload(api_world, settings):
    settings.UPLOAD_MAX_BYTES = 1000
    response = _upload(_client(api_world), api_world, "big.txt", b"word " * 400)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert not Document.objects.filter(original_name="big.txt").exists()


def test_it_answers_415_for_an_unsupported_type(api_world):
    response = _upload(
        _client(api_world), api_world, "tool.exe", b"MZ\x90\x00\x03\x00\x00\x00\x04", "application/pdf"
    )
    assert response.status_code == 415
    error = response.json()["error"]
    assert error["code"] == "unsupported_type"
    assert "cannot be ingested" in error["message"]


def test_it_answers_400_when_the_file_field_is_missing(api_world):
    url = reverse("api:document_list", kwargs={"slug": api_world.collection.slug})
    response = _client(api_world).post(url, {}, format="multipart")
    assert response.status_code == 400
    assert "file" in response.json()["error"]["detail"]


def test_it_lists_documents_with_status_filter_and_progress(api_world):
    running = api_world.failed_document
    IngestJob.objects.create(
        document=running,
        status=IngestJob.Status.RUNNING,
        message_key="EMBEDDING",
        pages_done=4,
        pages_total=4,
        chunks_done=5,
        chunks_total=10,
    )
    Document.objects.filter(pk=running.pk).update(status=Document.Status.PROCESSING)
    url = reverse("api:document_list", kwargs={"slug": api_world.collection.slug})
    client = _client(api_world, "viewer")
    everything = client.get(url).json()
    assert [d["title"] for d in everything["results"]] == ["BM25 notes", "Broken"]
    processing = client.get(url, {"status": "processing"}).json()["results"]
    assert len(processing) == 1
    assert processing[0]["progress"] == 0.75
    assert processing[0]["job"]["message_key"] == "EMBEDDING"
    ready = client.get(url, {"status": "ready", "ordering": "-created_at"}).json()["results"]
    assert [d["progress"] for d in ready] == [1.0]
    assert client.get(url, {"status": "lost"}).status_code == 400


def test_it_downloads_the_file_for_members_only(api_world):
    url = reverse("api:document_file", kwargs={"pk": api_world.document.pk})
    response = _client(api_world, "viewer").get(url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"Dense retrieval uses BM25 as a baseline.\n"
    assert 'attachment; filename="bm25.txt"' in response["Content-Disposition"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert _client(api_world, "outsider").get(url).status_code == 404


def test_it_answers_404_when_the_stored_file_is_gone(api_world):
    (Path(settings.MEDIA_ROOT) / api_world.document.file).unlink()
    response = _client(api_world).get(reverse("api:document_file", kwargs={"pk": api_world.document.pk}))
    assert response.status_code == 404


def test_it_retries_a_failed_document_and_refuses_a_ready_one(api_world):
    client = _client(api_world, "editor")
    retried = client.post(reverse("api:document_retry", kwargs={"pk": api_world.failed_document.pk}))
    assert retried.status_code == 202
    assert retried.json()["status"] == "queued"
    assert retried.json()["job"]["status"] == "queued"
    again = client.post(reverse("api:document_retry", kwargs={"pk": api_world.failed_document.pk}))
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "busy"
    ready = client.post(reverse("api:document_retry", kwargs={"pk": api_world.document.pk}))
    assert ready.status_code == 409
    assert ready.json()["error"]["code"] == "not_failed"


def test_it_deletes_a_document_and_its_file(api_world):
    path = Path(settings.MEDIA_ROOT) / api_world.document.file
    assert path.exists()
    response = _client(api_world, "editor").delete(
        reverse("api:document_detail", kwargs={"pk": api_world.document.pk})
    )
    assert response.status_code == 204
    assert not Document.objects.filter(pk=api_world.document.pk).exists()
    assert not path.exists()


def test_search_returns_ranked_chunks_with_each_retrievers_rank(api_world):
    from knowledge.ingest import index_after_change

    index_after_change(api_world.collection)
    url = reverse("api:search", kwargs={"slug": api_world.collection.slug})
    body = _client(api_world, "viewer").get(url, {"q": "BM25 baseline", "k": 3}).json()
    assert body["results"], body
    top = body["results"][0]
    assert top["chunk_id"] == api_world.document.chunks.get().pk
    assert top["document_title"] == "BM25 notes"
    assert top["ranks"]["bm25"] == 1
    assert set(top["ranks"]) >= {"bm25", "dense"}


def test_search_validates_its_parameters(api_world):
    url = reverse("api:search", kwargs={"slug": api_world.collection.slug})
    client = _client(api_world)
    assert client.get(url).status_code == 400
    assert client.get(url, {"q": "x", "k": 0}).status_code == 400
    assert client.get(url, {"q": "x", "mode": "magic"}).status_code == 400


def test_an_uploaded_html_page_is_downloaded_never_rendered(api_world):
    response = _upload(
        _client(api_world), api_world, "page.html", b"<!doctype html><script>alert(1)</script>"
    )
    assert response.status_code == 201
    download = _client(api_world, "viewer").get(response.json()["file_url"])
    assert download["Content-Type"] == "application/octet-stream"
    assert download["Content-Disposition"].startswith("attachment")
    assert download["Content-Security-Policy"] == "sandbox"


def test_search_caps_the_text_of_a_huge_chunk(api_world):
    from knowledge.api.search import SEARCH_TEXT_MAX_CHARS
    from knowledge.ingest import index_after_change

    chunk = api_world.document.chunks.get()
    chunk.text = "BM25 baseline " + "x" * (3 * SEARCH_TEXT_MAX_CHARS)
    chunk.save(update_fields=["text"])
    index_after_change(api_world.collection)
    url = reverse("api:search", kwargs={"slug": api_world.collection.slug})
    response = _client(api_world, "viewer").get(url, {"q": "BM25 baseline", "k": 3})
    (top,) = response.json()["results"]
    assert len(top["text"]) == SEARCH_TEXT_MAX_CHARS and top["text_truncated"] is True
    assert len(response.content) < 2 * SEARCH_TEXT_MAX_CHARS
