"""Property-based tests of the live OpenAPI schema with schemathesis (in-process, over WSGI).

For every operation in /api/schema/, generated requests (valid by the schema) are sent as
alice with a real API token, half of them aimed at real objects (her collection, a document,
a run) so the code past the 404 is exercised too. Every response must: not be a 500, have a
status code, content type, headers and body that the schema documents.

Bounded: GROUNDED_SCHEMATHESIS_EXAMPLES examples per operation (default 12) and a time budget
(GROUNDED_SCHEMATHESIS_SECONDS, default 90) after which remaining operations get 3 examples.
"""

from __future__ import annotations

import os
import time

import pytest

EXAMPLES = int(os.environ.get("GROUNDED_SCHEMATHESIS_EXAMPLES", "12"))
BUDGET_SECONDS = float(os.environ.get("GROUNDED_SCHEMATHESIS_SECONDS", "90"))


def _explore(strategy, examples: int, label: str, headers, checks, seen, failures) -> None:  # type: ignore[no-untyped-def]
    """Send `examples` generated cases; record status codes in `seen`, failures in `failures`."""
    from hypothesis import HealthCheck, Phase, given, settings

    @given(case=strategy)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:  # type: ignore[no-untyped-def]
        try:
            response = case.call_and_validate(headers=headers, checks=checks)
            seen.setdefault(label, set()).add(response.status_code)
        # schemathesis raises its FailureGroup, a BaseExceptionGroup, not an Exception.
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{label}: {str(exc)[:800]}")
            raise

    # Failures are recorded in `failures`; keep testing the other operations.
    # A failing case was recorded by `run`; keep testing the other operations. Anything
    # else (a strategy that cannot be drawn, a misuse) is a failure of this test too.
    recorded = len(failures)
    try:
        run()
    except (Exception, BaseExceptionGroup) as exc:
        if len(failures) == recorded:
            failures.append(f"{label}: could not test: {exc!r}"[:800])


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_operation_conforms_to_the_schema_and_never_fails_with_500(api_world, monkeypatch, settings):
    import schemathesis
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    from accounts.api_auth import api_token_create
    from knowledge.api_schema import SchemaApi
    from portal.wsgi import application
    from tests.api_support import WEB_MARKER, enable_web_search
    from tests.factories import thread_of

    # With web search on, every endpoint exists and the web fields are in the schema and the
    # bodies (docs/web-search.md); the schema is built per process, so build it afresh.
    enable_web_search(settings, api_world)
    monkeypatch.setattr(SchemaApi, "_built", {})

    # Committed uploads and questions would publish real tasks to the shared broker; keep them here.
    queued: list[tuple[str, tuple]] = []
    monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: queued.append((task.name, args)))
    _, token = api_token_create(user=api_world.users["owner"], name="schemathesis")
    headers = {"Authorization": f"Bearer {token}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]
    real = {"slug": api_world.collection.slug}
    failures: list[str] = []
    seen: dict[str, set[int]] = {}
    operations = 0
    started = time.monotonic()

    # Deletions last: a random small id can be the id of the shared document or run.
    all_operations = sorted(
        (r.ok() for r in schema.get_all_operations()), key=lambda op: op.method.upper() == "DELETE"
    )
    for operation in all_operations:
        operations += 1
        label = f"{operation.method.upper()} {operation.path}"
        strategies = [operation.as_strategy()]
        params = {p.name for p in operation.path_parameters}
        # Aimed cases hit real objects; DELETE stays random so the world survives the run.
        if params and operation.method.upper() != "DELETE":
            fixed = {**real}
            if "id" in params:
                fixed["id"] = (api_world.run.pk if "/runs/" in operation.path
                               else thread_of(api_world).pk if "/threads/" in operation.path
                               else api_world.document.pk)
            if "username" in params:
                fixed["username"] = "bob"
            if "marker" in params:
                fixed["marker"] = WEB_MARKER
            strategies.append(
                operation.as_strategy(path_parameters={k: v for k, v in fixed.items() if k in params})
            )
        if operation.method.upper() == "POST" and operation.path.endswith("/runs/"):
            asked = {"collection": api_world.collection.slug, "question": "Which baseline is used?"}
            strategies.append(operation.as_strategy(body=asked, media_type="application/json"))
        examples = EXAMPLES if time.monotonic() - started < BUDGET_SECONDS else 3
        for strategy in strategies:
            _explore(strategy, examples, label, headers, checks, seen, failures)

    assert operations >= 20, f"only {operations} operations in the schema"
    assert not failures, "\n\n".join(dict.fromkeys(failures))
    # The aimed cases must have reached real objects, not just bounced off 404s.
    only_missed = [op for op, codes in seen.items() if not op.startswith("DELETE") and codes <= {401, 404}]
    assert not only_missed, f"operations that never got past the lookup: {only_missed}"


@pytest.mark.django_db
def test_the_schema_describes_the_bearer_token_and_the_error_shape(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["components"]["securitySchemes"]["tokenAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["tokenAuth"]["description"],
    }
    upload = schema["paths"]["/api/v1/collections/{slug}/documents/"]["post"]
    assert {"201", "200", "401", "403", "404", "413", "415", "429"} <= set(upload["responses"])
    error = upload["responses"]["413"]["content"]["application/json"]["schema"]["$ref"]
    assert error == "#/components/schemas/Error"
    assert "multipart/form-data" in upload["requestBody"]["content"]


@pytest.mark.django_db
def test_swagger_ui_is_served_without_a_cdn(client):
    import re

    html = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in html
    external = re.findall(r"""(?:src|href)=["'](https?://[^"']+)""", html)
    assert external == []
    asset = re.search(r"""src=["']([^"']*swagger-ui-bundle\.js)""", html)
    assert asset, html


@pytest.mark.django_db
def test_every_operation_is_complete_enough_for_a_generated_client(client):
    schema = client.get("/api/schema/?format=json").json()
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method, op in item.items()
    ]
    assert len(operations) >= 20
    ids = [op["operationId"] for _, _, op in operations]
    assert len(set(ids)) == len(ids)
    for path, method, op in operations:
        where = f"{method.upper()} {path}"
        assert {"tokenAuth": []} in op["security"], where
        for status in ("401", "429"):
            ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
            assert ref == "#/components/schemas/Error", where
        ok = [s for s in op["responses"] if s.startswith("2")]
        assert ok, where
        for status in ok:
            if status != "204":
                assert op["responses"][status].get("content"), f"{where} {status} has no body schema"
        if method in ("post", "patch") and not path.endswith("/retry/"):
            assert op.get("requestBody", {}).get("content"), f"{where} has no request body schema"
