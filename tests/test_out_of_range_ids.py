"""Ids too large for the database, in paths and in query parameters: 400 or 404, never 500."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999"  # above 2**63: SQLite cannot even bind it
BIG = str(2**63)


def _api_routes() -> list[tuple[str, list[str]]]:
    """(route template, view methods) for every /api/v1/ view, read from the resolver."""
    routes = []

    def walk(patterns: list, prefix: str) -> None:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route)
            elif isinstance(p, URLPattern) and route.startswith("api/v1/"):
                view = p.callback.view_class
                methods = [m for m in ("get", "post", "patch", "put", "delete") if hasattr(view, m)]
                routes.append((route, methods))

    walk(get_resolver().url_patterns, "")
    return routes


def _fill(route: str, number: str, slug: str) -> str:
    return "/" + (
        route.replace("<int:pk>", number).replace("<slug:slug>", slug).replace("<str:username>", "bob")
    )


@pytest.mark.parametrize("number", [HUGE, BIG])
def test_every_api_endpoint_answers_an_out_of_range_id_with_404(api_world, number):
    client = api_world.client("owner")
    checked = 0
    for route, methods in _api_routes():
        if "<int:pk>" not in route:
            continue
        url = _fill(route, number, api_world.collection.slug)
        for method in methods:
            response = getattr(client, method)(url, {}, format="json")
            assert response.status_code == 404, f"{method.upper()} {url}: {response.status_code}"
            checked += 1
    assert checked >= 8


@pytest.mark.parametrize("number", [HUGE, BIG, "-1", "0"])
def test_out_of_range_ids_in_query_parameters_are_a_400(api_world, number):
    client = api_world.client("owner")
    slug = api_world.collection.slug
    response = client.get(f"/api/v1/collections/{slug}/search/?q=bm25&document={number}")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"


@pytest.mark.parametrize("number", [HUGE, BIG])
def test_html_pages_answer_an_out_of_range_id_with_404(api_world, client, number):
    client.force_login(api_world.users["owner"])
    for path in (
        f"/documents/{number}/file/",
        f"/runs/{number}/",
        f"/runs/{number}/status/",
        f"/runs/{number}/citations/1/",
    ):
        assert client.get(path).status_code == 404, path
    slug = api_world.collection.slug
    for path in (f"/documents/{number}/delete/", f"/documents/{number}/retry/", f"/settings/tokens/{number}/revoke/",
                 f"/collections/{slug}/invitations/{number}/revoke/"):
        assert client.post(path).status_code == 404, path


def test_llm_rerank_on_the_search_api_is_a_clear_400(api_world):
    """The web process never calls the LLM: LLM reranking runs only inside a question's run."""
    slug = api_world.collection.slug
    response = api_world.client("viewer").get(f"/api/v1/collections/{slug}/search/?q=bm25&rerank=llm")
    assert response.status_code == 400
    assert "runs" in str(response.json()["error"]["detail"]["rerank"])


_SCHEMA_RACE = """
import json, threading
import django
django.setup()
from django.test import Client
barrier = threading.Barrier(8)
codes = []
def fetch():
    barrier.wait()
    codes.append(Client(HTTP_HOST="localhost").get("/api/schema/").status_code)
threads = [threading.Thread(target=fetch) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(codes))
"""


@pytest.mark.parametrize("attempt", range(3))
def test_concurrent_first_requests_for_the_schema_all_succeed(tmp_path, attempt):
    """A fresh process whose first eight requests ask for /api/schema/ at the same moment."""
    import json
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = dict(os.environ)
    env.update(PORTAL_DEBUG="1", PORTAL_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="portal.settings")
    env.pop("PORTAL_REDIS_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", _SCHEMA_RACE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [200] * 8, out.stderr[-3000:]
