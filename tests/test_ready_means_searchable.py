"""A document the API calls `ready` is in the index that searches load: the documented polling
condition (docs/api.md: poll GET /documents/{id}/ until `status == "ready"`) is enough.

Through the REST API with a real worker process: upload, poll fast, and search the moment the
document says `ready`. The document has a few hundred distinct sentences, so the index
rebuild that follows its chunks (it embeds every new sentence) takes long enough for a poll
to land in between if `ready` came before it.
"""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from knowledge.models import Collection

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "zorblaxite"
WORDS = ("granite", "harbour", "lantern", "meadow", "orchid", "pylon", "quarry", "saddle", "thimble", "velvet",
         "walnut", "yarrow", "bramble", "cobalt", "dune", "ember", "fjord", "glacier", "hollow", "ivory")


def _long_markdown() -> str:
    sentences = [f"The {MARKER} survey records how the {WORDS[i % 20]} near {WORDS[(i * 7) % 20]} site {i} "
                 f"changed with the {WORDS[(i * 3) % 20]} season of year {1800 + i}." for i in range(400)]
    paragraphs = [" ".join(sentences[i:i + 8]) for i in range(0, len(sentences), 8)]
    return "# Field survey\n\n" + "\n\n".join(paragraphs) + "\n"


def test_a_document_is_searchable_the_moment_the_api_says_ready(celery_worker_process, collection, alice):
    client = APIClient()
    client.force_authenticate(alice)
    upload = client.post(
        reverse("api:document_list", kwargs={"slug": collection.slug}),
        {"file": SimpleUploadedFile("survey.md", _long_markdown().encode(), "text/markdown")}, format="multipart",
    )
    assert upload.status_code == 201, upload.content
    document_id = upload.json()["id"]
    detail_url = reverse("api:document_detail", kwargs={"pk": document_id})
    version_before = Collection.objects.get(pk=collection.pk).index_version

    statuses: list[str] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        cache.clear()  # polling this fast would be throttled; the throttle is not under test here
        status = client.get(detail_url).json()["status"]
        if not statuses or statuses[-1] != status:
            statuses.append(status)
        if status in ("ready", "failed"):
            break
        time.sleep(0.02)
    else:
        celery_worker_process(lambda: False, timeout=0.1)  # fails with the worker's log
    assert statuses[-1] == "ready", statuses

    # At once, as a client following the documented polling condition would.
    hits = client.get(reverse("api:search", kwargs={"slug": collection.slug}),
                      {"q": MARKER, "mode": "bm25", "k": 5}).json()["results"]
    assert hits, (f"the API said ready ({' -> '.join(statuses)}) but a search finds nothing; index version "
                  f"{Collection.objects.get(pk=collection.pk).index_version} (was {version_before})")
    assert {hit["document_id"] for hit in hits} == {document_id}
