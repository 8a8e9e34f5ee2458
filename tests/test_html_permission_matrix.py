"""Every HTML view x every role, from one table (the API's matrix is tests/test_api_permission_matrix.py).

Members below the needed role get 403, outsiders 404 (nothing of a collection they are not
in is revealed, not even that it exists), anonymous visitors are sent to the login page.
`test_it_has_a_row_for_every_html_view` walks the URL resolver, so a new page fails the
suite until it has a row here.
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
LOGIN = 302


def needs(minimum: str, ok: int) -> dict[str, int]:
    expected = {role: ok if MEMBER_RANK[role] >= MEMBER_RANK[minimum] else 403 for role in MEMBER_RANK}
    return {**expected, "outsider": 404, "anonymous": LOGIN}


def signed_in(ok: int) -> dict[str, int]:
    return {**dict.fromkeys(("owner", "editor", "reviewer", "viewer", "outsider"), ok), "anonymous": LOGIN}


@dataclass(frozen=True)
class Row:
    name: str
    method: str
    expected: dict[str, int]
    kwargs: Callable[[ApiWorld], dict[str, Any]] = lambda w: {}
    data: Callable[[ApiWorld], dict[str, Any]] = lambda w: {}
    web: bool = False  # needs a web search provider configured (docs/web-search.md)


slug = lambda w: {"slug": w.collection.slug}  # noqa: E731
doc = lambda w: {"pk": w.document.pk}  # noqa: E731
run = lambda w: {"pk": w.run.pk}  # noqa: E731
bench = lambda w: {"slug": w.collection.slug, "set_id": w.benchmark_set.pk}  # noqa: E731
report = lambda w: {**bench(w), "label": w.benchmark_label}  # noqa: E731

TABLE: list[Row] = [
    Row("knowledge:collection_list", "get", signed_in(200)),
    Row("knowledge:collection_create", "get", signed_in(200)),
    Row("knowledge:collection_detail", "get", needs("viewer", 200), slug),
    Row("knowledge:member_set", "post", needs("owner", 302), slug, lambda w: {"username": "dave", "role": "viewer"}),
    Row("knowledge:member_remove", "post", needs("owner", 302), lambda w: {**slug(w), "user_id": w.users["viewer"].pk}),
    Row("knowledge:team_access_set", "post", needs("owner", 302), slug),
    Row("knowledge:team_access_remove", "post", needs("owner", 302), lambda w: {**slug(w), "team_slug": "ir-group"}),
    Row("knowledge:invitation_new", "post", needs("owner", 302), slug,
        lambda w: {"email": "dave@example.org", "role": "viewer"}),
    Row("knowledge:invitation_cancel", "post", needs("owner", 302), lambda w: {**slug(w), "pk": w.invitation.pk}),
    Row("knowledge:collection_search", "get", needs("viewer", 200), slug, lambda w: {"q": "BM25"}),
    Row("knowledge:document_upload", "post", needs("editor", 302), slug,
        lambda w: {"files": SimpleUploadedFile("notes.md", b"# Notes\n\nRank fusion.\n", "text/markdown")}),
    Row("knowledge:document_status", "get", needs("viewer", 200), slug),
    Row("knowledge:document_file", "get", needs("viewer", 200), doc),
    Row("knowledge:document_text", "get", needs("viewer", 200), doc),
    # The PDF viewer page (its PDF comes from document_file); a text source redirects to the reader.
    Row("knowledge:document_viewer", "get", needs("viewer", 200), lambda w: {"pk": w.failed_document.pk}),
    Row("knowledge:document_viewer", "get", needs("viewer", 302), doc),
    Row("knowledge:document_delete", "post", needs("editor", 302), doc),
    Row("knowledge:document_update", "post", needs("editor", 302), doc, lambda w: {"title": "Renamed", "year": "2021"}),
    Row("knowledge:document_retry", "post", needs("editor", 302), lambda w: {"pk": w.failed_document.pk}),
    Row("accounts:team_list", "get", signed_in(200)),
    Row("accounts:team_detail", "get", {**signed_in(404), "owner": 200}, lambda w: {"slug": "ir-group"}),
    Row("accounts:api_tokens", "get", signed_in(200)),
    Row("accounts:api_token_revoke", "post", {**signed_in(404), "owner": 302}, lambda w: {"pk": w.token.pk}),
    Row("agent:ask", "get", signed_in(200)),
    Row("agent:collection_ask", "post", needs("viewer", 302), slug,
        lambda w: {"question": "What is the baseline?", "config": "hybrid"}),
    Row("agent:run_history", "get", needs("viewer", 200), slug),
    Row("agent:run_detail", "get", needs("viewer", 200), run),
    Row("agent:run_status", "get", needs("viewer", 200), run),
    Row("agent:run_retry", "post", needs("viewer", 302), lambda w: {"pk": w.failed_run.pk}),
    # Staff only (no role here is staff; tests/test_sweeper_health.py checks a staff user).
    Row("agent:operations_status", "get", signed_in(404)),
    Row("agent:citation_panel", "get", needs("viewer", 200), lambda w: {**run(w), "marker": 1}),
    # The world's citation is of a text source: the viewer sends it to the text reader.
    Row("agent:citation_viewer", "get", needs("viewer", 302), lambda w: {**run(w), "marker": 1}),
    Row("agent:run_follow_up", "post", needs("viewer", 302), run, lambda w: {"question": "And what about BM25F?"}),
    Row("agent:thread_detail", "get", needs("viewer", 200), lambda w: {"pk": thread_of(w).pk}),
    Row("agent:run_export", "get", needs("viewer", 200), lambda w: {**run(w), "fmt": "md"}),
    Row("agent:thread_export", "get", needs("viewer", 200), lambda w: {"pk": thread_of(w).pk}),
    Row("agent:benchmark_list", "get", needs("viewer", 200), slug),
    Row("agent:benchmark_import", "post", needs("editor", 302), slug, lambda w: {
        "name": "imported", "file": SimpleUploadedFile("set.json", b'[{"question_id": "Q9", "question": "What is BM25?", '
        b'"category": "single", "expected_behavior": "ANSWER"}]', "application/json")}),
    Row("agent:benchmark_set", "get", needs("viewer", 200), bench),
    Row("agent:benchmark_start", "post", needs("editor", 302), bench, lambda w: {"configs": ["hybrid"]}),
    Row("agent:benchmark_compare", "get", needs("viewer", 200), bench, lambda w: {"label": w.benchmark_label}),
    Row("agent:benchmark_report", "get", needs("viewer", 200), report),
    Row("agent:benchmark_progress", "get", needs("viewer", 200), report),
    Row("agent:benchmark_export", "get", needs("viewer", 200), lambda w: {**report(w), "fmt": "csv"}),
    Row("agent:review_queue", "get", needs("reviewer", 200), slug),
    Row("agent:review_submit", "post", needs("reviewer", 302), lambda w: {**slug(w), "run_id": w.run.pk},
        lambda w: {"grade": "correct"}),
    # Web search: the owner's switch, and an editor adding a web citation's page.
    Row("knowledge:collection_web_search", "post", needs("owner", 302), slug, lambda w: {"enabled": "on"}, web=True),
    Row("agent:citation_save", "post", needs("editor", 302), lambda w: {**run(w), "marker": WEB_MARKER}, web=True),
    Row("agent:citation_panel", "get", needs("viewer", 200), lambda w: {**run(w), "marker": WEB_MARKER}, web=True),
    Row("agent:run_history", "get", needs("viewer", 200), slug, lambda w: {"web": "1"}, web=True),
    Row("agent:ask", "get", signed_in(200), web=True),
]

# Pages outside the collection model: reachable by anyone (login) or by any signed-in user.
# The OpenAPI schema and Swagger UI are public on purpose (docs/api.md): they hold no data.
# The invitation link and open sign-up are for people without an account: their rules (bad,
# expired, used links; sign-up off by default; throttling) are in tests/knowledge/test_invitations.py.
NOT_IN_TABLE = {"login", "logout", "password_change", "password_change_done", "api-schema", "api-docs",
                "knowledge:invitation_accept", "knowledge:signup"}


@pytest.fixture
def world(api_world: ApiWorld, alice, monkeypatch) -> ApiWorld:
    from accounts.api_auth import api_token_create
    from accounts.services import team_create
    from agent.models import BenchmarkQuestion, BenchmarkRun, BenchmarkSet, Run

    # Runs the tests create must not reach a broker.
    monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: True)
    team = team_create(name="IR group", user=alice)
    assert team.slug == "ir-group"
    benchmark_set = BenchmarkSet.objects.create(collection=api_world.collection, name="dev", created_by=alice)
    question = BenchmarkQuestion.objects.create(
        benchmark_set=benchmark_set, question_id="Q1", question="What baseline is used?", category="single",
        expected_behavior="ANSWER",
    )
    benchmark_run = BenchmarkRun.objects.create(benchmark_set=benchmark_set, config_name="agentic", label="first")
    api_world.run.benchmark_run = benchmark_run
    api_world.run.benchmark_question = question
    api_world.run.save()
    object.__setattr__(api_world, "benchmark_set", benchmark_set)
    object.__setattr__(api_world, "benchmark_label", "first")
    failed_run = Run.objects.create(
        collection=api_world.collection, user=alice, question="What failed?", config_name="hybrid",
        config_hash="y" * 64, status=Run.Status.FAILED, error="The worker stopped.",
    )
    object.__setattr__(api_world, "failed_run", failed_run)
    object.__setattr__(api_world, "token", api_token_create(user=alice, name="ci")[0])
    from knowledge.invitations import invitation_create

    invitation, _ = invitation_create(collection=api_world.collection, inviter=alice, email="erin@example.org",
                                      role="viewer")
    object.__setattr__(api_world, "invitation", invitation)
    return api_world


@pytest.mark.django_db
@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r.method} {r.name}{' web' if r.web else ''}")
@pytest.mark.parametrize("role", ROLES)
def test_html_view_answers_each_role_as_the_table_says(client, world, row: Row, role: str, settings):
    if row.web:
        enable_web_search(settings, world)
    if role != "anonymous":
        client.force_login(world.users[role])
    url = reverse(row.name, kwargs=row.kwargs(world))
    response = getattr(client, row.method)(url, row.data(world))
    expected = row.expected[role]
    assert response.status_code == expected, f"{role} {row.method.upper()} {url}: {response.status_code}"
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


def _named_html_views() -> set[str]:
    names: set[str] = set()

    def walk(patterns: list, namespace: str | None) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace in ("admin", "api"):
                    continue
                walk(pattern.url_patterns, pattern.namespace or namespace)
            elif isinstance(pattern, URLPattern) and pattern.name:
                names.add(f"{namespace}:{pattern.name}" if namespace else pattern.name)

    walk(get_resolver().url_patterns, None)
    return names


def test_it_has_a_row_for_every_html_view():
    covered = {row.name for row in TABLE} | NOT_IN_TABLE
    missing = _named_html_views() - covered
    assert not missing, f"add rows for: {sorted(missing)}"
