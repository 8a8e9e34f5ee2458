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

    from knowledge.api_auth import api_token_create

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
from knowledge.ratelimit import counter_hit
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
