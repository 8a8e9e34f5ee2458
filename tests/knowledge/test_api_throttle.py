"""The API throttle counts atomically in the shared cache: concurrent clients cannot outrun it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.urls import reverse

from tests.conftest import ROOT


def _cache_settings(kind: str, tmp_path) -> dict:
    if kind == "redis":
        url = os.environ.get("PORTAL_REDIS_URL")
        if not url:
            pytest.skip("PORTAL_REDIS_URL is not set: the Redis case runs in CI")
        return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    if kind == "file":
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(tmp_path / "cache"),
            }
        }
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": str(tmp_path)}}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["memory", "file", "redis"])
def test_concurrent_clients_on_one_token_get_no_more_than_the_rate(kind, alice, settings, tmp_path, monkeypatch):
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from rest_framework.throttling import UserRateThrottle

    from accounts.api_auth import api_token_create

    settings.CACHES = _cache_settings(kind, tmp_path)
    cache.clear()
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "25/min", "anon": "25/min"})
    _, token = api_token_create(user=alice, name="load")
    url = reverse("api:config_list")

    def burst(_: int) -> list[int]:
        try:
            client = Client()
            return [client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}").status_code for _ in range(10)]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = [code for batch in pool.map(burst, range(8)) for code in batch]
    assert codes.count(200) == 25, codes
    assert codes.count(429) == 80 - 25
    cache.clear()


_CHILD = """
import json, os, sys
import django
django.setup()
from accounts.ratelimit import counter_hit
print(json.dumps([counter_hit("shared-counter", window=60) for _ in range(int(sys.argv[1]))]))
"""


def test_the_file_cache_counter_is_atomic_across_processes(tmp_path):
    """Four processes sharing var/cache (the laptop default) each add 25: every total is seen once."""
    env = dict(os.environ)
    env.update(
        PORTAL_DEBUG="1", PORTAL_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="portal.settings"
    )
    env.pop("PORTAL_REDIS_URL", None)
    children = [
        subprocess.Popen([sys.executable, "-c", _CHILD, "25"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    seen = []
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        seen += json.loads(out)
    assert sorted(seen) == list(range(1, 101))


@pytest.mark.django_db
def test_a_slow_embedding_service_cannot_hold_a_web_request(collection, alice, settings):
    """The search API embeds the query in the web process: that call is bounded, then a 503."""
    import time

    from rest_framework.test import APIClient

    from knowledge.embedding_cache import default_embedder
    from knowledge.embeddings import _cached_embedder
    from tests.conftest import ingest_markdown
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(embedding_dim=1536) as server:
        settings.EMBEDDING_BACKEND = "openai"
        settings.EMBEDDING_MODEL = "text-embedding-3-small"
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_TIMEOUT_SECONDS = 30.0
        settings.WEB_OUTBOUND_TIMEOUT_SECONDS = 0.5
        _cached_embedder.cache_clear()
        try:
            document = ingest_markdown(collection, alice, "fusion.md", "# Fusion\n\nReciprocal rank fusion merges rankings.\n")
            assert document.status == "ready", document.error
            server.embedding_latency = 5.0
            api = APIClient()
            api.force_authenticate(alice)
            started = time.monotonic()
            response = api.get(f"/api/v1/collections/{collection.slug}/search/?q=how+are+rankings+merged&mode=dense")
            elapsed = time.monotonic() - started
            assert response.status_code == 503, response.content
            assert response.json()["error"]["code"] == "upstream_unavailable"
            assert elapsed < 3.0
            # The quick search page says so instead of hanging.
            from django.test import Client

            page = Client()
            page.force_login(alice)
            started = time.monotonic()
            html = page.get(f"/collections/{collection.slug}/search/", {"q": "which rankings merge"}).content.decode()
            assert "did not answer in time" in html and time.monotonic() - started < 3.0
            # A worker (no bound) still waits for the slow service and gets its answer.
            server.embedding_latency = 1.0
            assert default_embedder().embed(["a slow but fine call"]).shape[0] == 1
        finally:
            _cached_embedder.cache_clear()
