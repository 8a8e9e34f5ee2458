from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_a_wrong_password_says_so(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_logins_lock_out_after_repeated_failures(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert client.post(reverse("login"), {"username": "alice", "password": "guess"}).status_code == 200
    locked = client.post(reverse("login"), {"username": "alice", "password": password})
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_good_login_clears_earlier_failures(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(2):
        client.post(reverse("login"), {"username": "alice", "password": "guess"})
    assert client.post(reverse("login"), {"username": "alice", "password": password}).status_code == 302
    client.logout()
    for _ in range(2):
        client.post(reverse("login"), {"username": "alice", "password": "guess"})
    assert client.post(reverse("login"), {"username": "alice", "password": password}).status_code == 302


def test_every_form_carries_a_csrf_token(client, alice, password):
    client.login(username="alice", password=password)
    for name in ("login", "password_change", "knowledge:collection_create", "knowledge:team_list"):
        body = client.get(reverse(name)).content.decode()
        assert body.count("<form") == body.count("csrfmiddlewaretoken"), name
