"""Every API endpoint x every role, from one table.

A row says who may call an endpoint and what everyone else gets: members below the needed
role get 403, outsiders 404 (the object's existence is not revealed), anonymous callers 401.
`test_it_has_a_row_for_every_api_endpoint` walks the URL resolver, so a new endpoint or a
new method on an existing one fails the suite until it has a row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.api_support import ROLES, WEB_MARKER, ApiWorld, enable_web_search
from tests.factories import thread_of

MEMBER_RANK = {"viewer": 1, "reviewer": 2, "editor": 3, "owner": 4}


def needs(minimum: str, ok: int) -> dict[str, int]:
    """`ok` for members at or above `minimum`, 403 below it, 404 for outsiders, 401 anonymous."""
    expected = {role: ok if MEMBER_RANK[role] >= MEMBER_RANK[minimum] else 403 for role in MEMBER_RANK}
    return {**expected, "outsider": 404, "anonymous": 401}


def signed_in(ok: int) -> dict[str, int]:
    """Endpoints not tied to one collection: every signed-in user gets `ok`."""
    return {**dict.fromkeys(("owner", "editor", "reviewer", "viewer", "outsider"), ok), "anonymous": 401}


@dataclass(frozen=True)
class Row:
    name: str  # URL name in the "api" namespace
    method: str
    expected: dict[str, int]
    kwargs: Callable[[ApiWorld], dict[str, Any]] = lambda w: {}
    body: Callable[[ApiWorld], Any] = lambda w: None
    query: str = ""
    multipart: bool = False
    web: bool = False  # needs a web search provider configured (docs/web-search.md)


slug = lambda w: {"slug": w.collection.slug}  # noqa: E731
doc = lambda w: {"pk": w.document.pk}  # noqa: E731
run = lambda w: {"pk": w.run.pk}  # noqa: E731
thread = lambda w: {"pk": thread_of(w).pk}  # noqa: E731
follow_up = lambda w: {"question": "And what about BM25F?"}  # noqa: E731


def _upload(w: ApiWorld) -> dict[str, Any]:
    return {"file": SimpleUploadedFile("notes.md", b"# Notes\n\nReciprocal rank fusion.\n", "text/markdown")}


TABLE: list[Row] = [
    Row("collection_list", "get", signed_in(200)),
    Row("collection_list", "post", signed_in(201), body=lambda w: {"name": "Mine"}),
    Row("collection_detail", "get", needs("viewer", 200), slug),
    Row("collection_detail", "patch", needs("owner", 200), slug, body=lambda w: {"description": "New"}),
    Row("collection_detail", "delete", needs("owner", 204), slug),
    Row("member_list", "get", needs("viewer", 200), slug),
    Row(
        "member_list",
        "post",
        needs("owner", 202),
        slug,
        body=lambda w: {"username": "dave", "role": "viewer"},
    ),
    Row(
        "member_detail",
        "patch",
        needs("owner", 200),
        lambda w: {**slug(w), "username": "bob"},
        body=lambda w: {"role": "reviewer"},
    ),
    Row("member_detail", "delete", needs("owner", 204), lambda w: {**slug(w), "username": "bob"}),
    Row("document_list", "get", needs("viewer", 200), slug),
    Row("document_list", "post", needs("editor", 201), slug, body=_upload, multipart=True),
    Row("search", "get", needs("viewer", 200), slug, query="q=BM25+baseline"),
    Row("document_detail", "get", needs("viewer", 200), doc),
    Row("document_detail", "patch", needs("editor", 200), doc, lambda w: {"tags": ["ir"]}),
    Row("document_detail", "delete", needs("editor", 204), doc),
    Row("document_file", "get", needs("viewer", 200), doc),
    Row("document_retry", "post", needs("editor", 202), lambda w: {"pk": w.failed_document.pk}),
    Row("run_list", "get", signed_in(200)),
    Row(
        "run_list",
        "post",
        needs("viewer", 202),
        body=lambda w: {"collection": w.collection.slug, "question": "Which baseline do the papers use?"},
    ),
    Row("run_detail", "get", needs("viewer", 200), run),
    Row("run_review_list", "get", needs("viewer", 200), run),
    Row("run_review_list", "post", needs("reviewer", 201), run, body=lambda w: {"grade": "correct"}),
    Row("config_list", "get", signed_in(200)),
    Row("run_follow_up", "post", needs("viewer", 202), run, body=follow_up),
    Row("run_export", "get", needs("viewer", 200), lambda w: {**run(w), "fmt": "bib"}),
    Row("thread_list", "get", signed_in(200)),
    Row("thread_detail", "get", needs("viewer", 200), thread),
    Row("thread_turn_list", "post", needs("viewer", 202), thread, body=follow_up),
    Row("thread_export", "get", needs("viewer", 200), thread),
    # Web search: an editor adds a web citation's page to the collection; a viewer cannot.
    Row("citation_save", "post", needs("editor", 201), lambda w: {**run(w), "marker": WEB_MARKER}, web=True),
]


def _api_routes() -> set[tuple[str, str]]:
    """(url name, method) for every view under /api/v1/, from the resolver itself."""
    routes: set[tuple[str, str]] = set()

    def walk(patterns: list, prefix: str, namespace: str | None) -> None:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route, p.namespace or namespace)
            elif isinstance(p, URLPattern) and route.startswith("api/v1/"):
                view_class = getattr(p.callback, "view_class", None)
                assert view_class is not None, f"{route} is not a class-based API view"
                assert namespace == "api", f"{route} is outside the 'api' namespace"
                for method in view_class.http_method_names:
                    if method not in ("options", "head", "trace") and hasattr(view_class, method):
                        routes.add((p.name, method))

    walk(get_resolver().url_patterns, "", None)
    return routes


def test_it_has_a_row_for_every_api_endpoint():
    routes = _api_routes()
    rows = {(row.name, row.method) for row in TABLE}
    assert routes - rows == set(), "API endpoints without a row in the permission table"
    assert rows - routes == set(), "rows in the permission table for endpoints that do not exist"


def test_every_row_names_every_role():
    for row in TABLE:
        assert set(row.expected) == set(ROLES), row


CASES = [(row, role) for row in TABLE for role in ROLES]


@pytest.mark.django_db
@pytest.mark.parametrize(("row", "role"), CASES, ids=[f"{r.name}-{r.method}-{role}" for r, role in CASES])
def test_role_matrix(api_world, row: Row, role: str, settings, monkeypatch):
    if row.web:
        enable_web_search(settings, api_world)
        monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: True)
    url = reverse(f"api:{row.name}", kwargs=row.kwargs(api_world))
    if row.query:
        url = f"{url}?{row.query}"
    client = api_world.client(role)
    body = row.body(api_world)
    call = getattr(client, row.method)
    response = (
        call(url, body, format="multipart" if row.multipart else "json") if body is not None else call(url)
    )
    expected = row.expected[role]
    assert response.status_code == expected, (
        f"{row.method.upper()} {url} as {role}: {response.status_code}, expected {expected}: "
        f"{getattr(response, 'data', b'')!r}"
    )
    if expected >= 400:
        # Every refusal has the API's one error shape with a machine-readable code.
        assert set(response.json()["error"]) == {"code", "message", "detail"}
        assert (
            response.json()["error"]["code"]
            in {
                401: {"not_authenticated"},
                403: {"permission_denied"},
                404: {"not_found"},
            }[expected]
        )


@pytest.mark.django_db
def test_it_serves_no_uploaded_file_under_a_public_url(api_world, client):
    """Uploads live outside every static/media route; only the checked API/HTML views read them."""
    from django.conf import settings
    from django.urls import Resolver404, resolve

    stored = api_world.document.file
    for prefix in ("/media/", f"/{settings.MEDIA_URL.strip('/')}/" if settings.MEDIA_URL else "/media/"):
        with pytest.raises(Resolver404):
            resolve(prefix + stored)
    client.force_login(api_world.users["outsider"])
    assert client.get(reverse("api:document_file", kwargs=doc(api_world))).status_code == 404


# ---------------------------------------------------------------------------
# File downloads in the HTML UI: the same roles, and a login redirect for anonymous users
# ---------------------------------------------------------------------------


def html_needs(minimum: str, ok: int) -> dict[str, int]:
    return {**needs(minimum, ok), "anonymous": 302}


def _benchmark(w: ApiWorld) -> dict[str, Any]:
    from agent.models import BenchmarkRun, BenchmarkSet

    bset = BenchmarkSet.objects.create(collection=w.collection, name="Smoke", created_by=w.users["owner"])
    BenchmarkRun.objects.create(
        benchmark_set=bset, config_name="bm25", label="first", created_by=w.users["owner"]
    )
    return {"slug": w.collection.slug, "set_id": bset.pk, "label": "first"}


DOWNLOADS: list[Row] = [
    Row("knowledge:document_file", "get", html_needs("viewer", 200), doc),
    Row(
        "agent:benchmark_export", "get", html_needs("viewer", 200), lambda w: {**_benchmark(w), "fmt": "csv"}
    ),
    Row("agent:run_export", "get", html_needs("viewer", 200), lambda w: {**run(w), "fmt": "md"}),
    Row("agent:thread_export", "get", html_needs("viewer", 200), thread),
]
# URL names that hand out files or exports; each must have a row in DOWNLOADS.
DOWNLOAD_NAME_HINTS = ("file", "export", "download")


def test_it_has_a_row_for_every_html_download():
    names: set[str] = set()

    def walk(patterns: list, prefix: str, namespace: str | None) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
            elif (
                isinstance(p, URLPattern)
                and not (prefix + str(p.pattern)).startswith("api/")
                and p.name
                and any(hint in p.name for hint in DOWNLOAD_NAME_HINTS)
            ):
                names.add(f"{namespace}:{p.name}" if namespace else p.name)

    walk(get_resolver().url_patterns, "", None)
    assert names, "no download views found: the name hints are stale"
    assert names == {row.name for row in DOWNLOADS}


DOWNLOAD_CASES = [(row, role) for row in DOWNLOADS for role in ROLES]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("row", "role"), DOWNLOAD_CASES, ids=[f"{r.name}-{role}" for r, role in DOWNLOAD_CASES]
)
def test_download_matrix(api_world, client, row: Row, role: str):
    url = reverse(row.name, kwargs=row.kwargs(api_world))
    if role != "anonymous":
        client.force_login(api_world.users[role])
    response = client.get(url)
    assert response.status_code == row.expected[role], f"GET {url} as {role}: {response.status_code}"
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
    if response.status_code == 200:
        assert (
            "attachment" in response.get("Content-Disposition", "")
            or response.get("Content-Security-Policy") == "sandbox"
        )
