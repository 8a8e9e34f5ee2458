"""API tokens: created on the settings page, shown once, stored hashed, revocable."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.api_auth import api_token_create, hash_token
from accounts.models import ApiToken

pytestmark = pytest.mark.django_db


def _token_in(html: str) -> str:
    match = re.search(r'value="(gr_[A-Za-z0-9_\-]+)"', html)
    assert match, "the new token is not on the page"
    return match.group(1)


def test_it_shows_a_new_token_once_and_stores_only_its_hash(client, alice):
    client.force_login(alice)
    response = client.post(reverse("accounts:api_tokens"), {"name": "notebook"})
    assert response.status_code == 200
    token = _token_in(response.content.decode())
    row = ApiToken.objects.get(user=alice)
    assert row.name == "notebook"
    assert row.token_hash == hash_token(token)
    assert token not in {row.prefix, row.token_hash, row.name}
    assert token.startswith(row.prefix)
    # The list page later shows the prefix, never the token.
    listing = client.get(reverse("accounts:api_tokens")).content.decode()
    assert token not in listing
    assert row.prefix in listing


def test_it_refuses_a_token_without_a_name(client, alice):
    client.force_login(alice)
    response = client.post(reverse("accounts:api_tokens"), {"name": "  "}, follow=True)
    assert ApiToken.objects.count() == 0
    assert "Give the token a name" in response.content.decode()


def test_a_token_authenticates_api_calls_as_its_user(alice, collection):
    _, token = api_token_create(user=alice, name="ci")
    api = APIClient()
    response = api.get(reverse("api:collection_list"), HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()["results"]] == [collection.slug]
    assert ApiToken.objects.get(user=alice).last_used_at is not None


def test_a_revoked_token_gets_401_with_the_error_shape(client, alice):
    row, token = api_token_create(user=alice, name="old")
    client.force_login(alice)
    response = client.post(reverse("accounts:api_token_revoke", kwargs={"pk": row.pk}))
    assert response.status_code == 302
    row.refresh_from_db()
    assert row.revoked_at is not None
    api = APIClient()
    response = api.get(reverse("api:collection_list"), HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_wrong_token_and_no_token_get_401(alice):
    api = APIClient()
    wrong = api.get(reverse("api:collection_list"), HTTP_AUTHORIZATION="Bearer gr_not-a-token")
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "authentication_failed"
    missing = api.get(reverse("api:collection_list"))
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "not_authenticated"


def test_charlie_cannot_see_or_revoke_alices_token(client, alice, charlie):
    row, _token = api_token_create(user=alice, name="alice's")
    client.force_login(charlie)
    assert "alice&#x27;s" not in client.get(reverse("accounts:api_tokens")).content.decode()
    response = client.post(reverse("accounts:api_token_revoke", kwargs={"pk": row.pk}))
    assert response.status_code == 404
    row.refresh_from_db()
    assert row.revoked_at is None


def test_the_token_page_needs_a_login(client):
    response = client.get(reverse("accounts:api_tokens"))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_last_used_is_written_at_most_once_a_minute(alice, django_assert_num_queries):
    from datetime import timedelta

    from django.utils import timezone

    row, token = api_token_create(user=alice, name="poller")
    api = APIClient()
    url = reverse("api:config_list")
    api.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
    first = ApiToken.objects.get(pk=row.pk).last_used_at
    api.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ApiToken.objects.get(pk=row.pk).last_used_at == first
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now() - timedelta(minutes=2))
    api.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ApiToken.objects.get(pk=row.pk).last_used_at > first


def test_a_browser_session_needs_the_csrf_token_for_unsafe_calls(alice):
    api = APIClient(enforce_csrf_checks=True)
    api.force_login(alice)
    assert api.get(reverse("api:collection_list")).status_code == 200
    response = api.post(reverse("api:collection_list"), {"name": "Forged"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    # A bearer token is not a cookie a forged page could send: no CSRF token needed.
    _, token = api_token_create(user=alice, name="script")
    bearer = APIClient(enforce_csrf_checks=True)
    created = bearer.post(
        reverse("api:collection_list"),
        {"name": "Scripted"},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert created.status_code == 201
