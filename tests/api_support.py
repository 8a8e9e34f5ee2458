"""Shared set-up for API tests: one user per role on one collection, and a few objects in it.

tests/conftest.py registers this module as a plugin, so these fixtures are available to every test.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from tests.factories import make_chunk, make_document

ROLES = ("owner", "editor", "reviewer", "viewer", "outsider", "anonymous")


@dataclass
class ApiWorld:
    users: dict[str, Any]
    collection: Any
    document: Any
    failed_document: Any
    run: Any
    extra: dict[str, Any] = field(default_factory=dict)

    def client(self, role: str) -> APIClient:
        client = APIClient()
        if role != "anonymous":
            client.force_authenticate(self.users[role])
        return client


def store_file(content: bytes) -> tuple[str, str]:
    sha = hashlib.sha256(content).hexdigest()
    name = default_storage.save(f"files/{sha[:2]}/{sha}", ContentFile(content))
    return name, sha


@pytest.fixture
def api_world(alice, bob, charlie, django_user_model, collection) -> ApiWorld:
    """alice owner, erin editor, rita reviewer, bob viewer, charlie outsider."""
    from agent.models import Citation, Run
    from agent.types import Outcome
    from knowledge import services
    from knowledge.models import Document, Role

    erin = django_user_model.objects.create_user("erin", "erin@example.org", "pw-erin-123456")
    rita = django_user_model.objects.create_user("rita", "rita@example.org", "pw-rita-123456")
    django_user_model.objects.create_user("dave", "dave@example.org", "pw-dave-123456")
    services.membership_set(collection=collection, user=erin, role=Role.EDITOR)
    services.membership_set(collection=collection, user=rita, role=Role.REVIEWER)

    content = b"Dense retrieval uses BM25 as a baseline.\n"
    path, sha = store_file(content)
    document = make_document(
        collection=collection,
        title="BM25 notes",
        original_name="bm25.txt",
        file=path,
        sha256=sha,
        size_bytes=len(content),
    )
    chunk = make_chunk(document=document, text=content.decode())
    failed_path, failed_sha = store_file(b"not really a pdf")
    failed = make_document(
        collection=collection,
        title="Broken",
        original_name="broken.pdf",
        file=failed_path,
        sha256=failed_sha,
        media_type="application/pdf",
        status=Document.Status.FAILED,
        error="Not a PDF.",
    )
    run = Run.objects.create(
        collection=collection,
        user=alice,
        question="What baseline is used?",
        config_name="agentic",
        config_hash="x" * 64,
        status=Run.Status.DONE,
        outcome=Outcome.ANSWER,
        answer="BM25 is the baseline [1].",
    )
    Citation.objects.create(
        run=run,
        marker=1,
        chunk=chunk,
        document_title=document.title,
        page=1,
        chunk_text=chunk.text,
        quote="uses BM25 as a baseline",
        quote_start=chunk.text.index("uses BM25"),
        verified=True,
    )
    users = {"owner": alice, "editor": erin, "reviewer": rita, "viewer": bob, "outsider": charlie}
    return ApiWorld(users=users, collection=collection, document=document, failed_document=failed, run=run)


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """API throttles count in the default cache; start every test with empty buckets.

    SQLite reuses user ids after a rollback, so without this one test's "alice" would
    inherit the previous test's request count and a long suite could see 429s.
    """
    from django.core.cache import cache

    cache.clear()


WEB_MARKER = 2


def enable_web_search(settings, world: ApiWorld) -> None:
    """Turn the web search feature on (a provider is configured) and give world.run a web
    citation [2] whose page bytes are kept, for the rows of the web search views."""
    from django.utils import timezone

    from agent.models import Citation, WebPage

    settings.WEB_SEARCH_PROVIDER, settings.WEB_SEARCH_URL = "searxng", "http://searxng.invalid:8080"
    body = b"<!doctype html><html><head><title>Tides</title></head><body><p>The tide rises twice a day.</p></body></html>"
    page = WebPage.objects.create(
        run=world.run, url="https://example.org/tides", final_url="https://example.org/tides", title="Tides",
        content_type="text/html", sha256=hashlib.sha256(body).hexdigest(), body=body, fetched_at=timezone.now(),
    )
    Citation.objects.create(
        run=world.run, marker=WEB_MARKER, chunk=None, document_title="Tides", page=1,
        chunk_text="The tide rises twice a day.", quote="The tide rises twice a day.", quote_start=0, verified=True,
        source_url=page.url, fetched_at=page.fetched_at, web_page=page,
    )
