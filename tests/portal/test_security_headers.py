"""Production headers: a Content-Security-Policy without inline script, no caching of a new
token, HSTS from settings, and the API schema and docs public on purpose."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.conftest import ROOT
from tests.portal.test_settings_helpers import _manage

pytestmark = pytest.mark.django_db

_PROD = {
    "PORTAL_DEBUG": "0",
    "PORTAL_SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-value-0123456789",
    "PORTAL_ALLOWED_HOSTS": "grounded.example.org",
}


def _directives(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.parametrize("name", ["login", "api-docs"])
def test_public_pages_carry_a_policy_that_forbids_inline_script(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    policy = _directives(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]


def test_member_pages_carry_the_policy(client, collection, alice):
    client.force_login(alice)
    for url in (reverse("knowledge:collection_list"), reverse("knowledge:collection_detail", args=[collection.slug])):
        assert "script-src 'self'" in client.get(url)["Content-Security-Policy"], url


def test_no_template_has_inline_script_or_event_handlers():
    offenders = []
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        for match in re.finditer(r"<script\b[^>]*>", text):
            if "src=" not in match.group(0):
                offenders.append(f"{path.name}: {match.group(0)}")
        offenders += [f"{path.name}: {m}" for m in re.findall(r"\son[a-z]+\s*=", text)]
        offenders += [f"{path.name}: style attribute" for m in re.findall(r"\sstyle\s*=", text)]
        offenders += [f"{path.name}: javascript: URL" for m in re.findall(r"javascript:", text)]
    assert offenders == []


def test_the_page_showing_a_new_token_is_never_stored(client, alice):
    client.force_login(alice)
    response = client.post(reverse("accounts:api_tokens"), {"name": "ci"})
    assert "gr_" in response.content.decode()
    assert "no-store" in response["Cache-Control"]


def test_the_schema_and_the_api_docs_are_public_and_hold_no_data(client, collection):
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    assert collection.name not in schema.content.decode()
    assert client.get("/api/docs/").status_code == 200
    # What they describe is not public.
    assert client.get(reverse("api:collection_list")).status_code == 401


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "31536000 True True"),
        ({"PORTAL_HSTS_INCLUDE_SUBDOMAINS": "0", "PORTAL_HSTS_PRELOAD": "0"}, "31536000 False False"),
        ({"PORTAL_HSTS_SECONDS": "600", "PORTAL_HSTS_PRELOAD": "0"}, "600 True False"),
    ],
)
def test_hsts_comes_from_settings(tmp_path, env, expected):
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD)"
    )
    result = _manage("shell", "-c", code, PORTAL_VAR_DIR=str(tmp_path), **_PROD, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected
