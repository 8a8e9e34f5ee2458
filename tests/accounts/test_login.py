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
    for name in ("login", "password_change", "knowledge:collection_create", "accounts:team_list"):
        body = client.get(reverse(name)).content.decode()
        assert body.count("<form") == body.count("csrfmiddlewaretoken"), name


def _fail(client, username: str = "alice", path: str = "/accounts/login/", **extra) -> int:
    return client.post(path, {"username": username, "password": "guess"}, **extra).status_code


def _logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_the_admin_login_counts_and_obeys_the_same_lock_out(client, django_user_model, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    django_user_model.objects.create_superuser("root", "root@example.org", password)
    for _ in range(3):
        _fail(client, "root", path="/admin/login/")
    client.post("/admin/login/", {"username": "root", "password": password})
    assert not _logged_in(client)
    # The main login sees the same counter.
    assert client.post(reverse("login"), {"username": "root", "password": password}).status_code == 429


def test_failures_on_the_main_login_lock_the_admin_login(client, django_user_model, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    django_user_model.objects.create_superuser("root", "root@example.org", password)
    for _ in range(3):
        _fail(client, "root")
    client.post("/admin/login/", {"username": "root", "password": password})
    assert not _logged_in(client)


@pytest.mark.parametrize("look_alike", ["\uff41lice", "\U0001d41alice", "ALICE", "Alice "])
def test_look_alike_usernames_share_the_lock_of_the_account(client, alice, password, settings, look_alike):
    settings.LOGIN_MAX_FAILURES_PER_USER = 3
    # From several addresses, so only the account's own counter can lock it.
    for n in range(3):
        _fail(client, look_alike, REMOTE_ADDR=f"198.51.100.{n}")
    response = client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="192.0.2.1")
    assert response.status_code == 429
    assert not _logged_in(client)


def test_a_username_is_locked_per_address_so_others_can_still_log_in(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        _fail(client, REMOTE_ADDR="198.51.100.9")
    assert _fail(client, REMOTE_ADDR="198.51.100.9") == 429
    response = client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="192.0.2.1")
    assert response.status_code == 302


def test_failures_from_many_addresses_reach_a_global_ceiling(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    settings.LOGIN_MAX_FAILURES_PER_USER = 6
    for n in range(6):
        _fail(client, REMOTE_ADDR=f"198.51.100.{n}")
    response = client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="192.0.2.1")
    assert response.status_code == 429


def test_one_address_trying_many_usernames_is_stopped(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES_PER_ADDRESS = 5
    for n in range(5):
        _fail(client, f"user{n}", REMOTE_ADDR="198.51.100.7")
    response = client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="198.51.100.7")
    assert response.status_code == 429


def test_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    settings.TRUSTED_PROXIES = []
    # An attacker cannot escape the lock by sending a new X-Forwarded-For each time.
    for n in range(3):
        _fail(client, REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")
    assert _fail(client, REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="203.0.113.99") == 429


def test_behind_a_trusted_proxy_each_client_address_has_its_own_lock(client, alice, password, settings):
    settings.LOGIN_MAX_FAILURES = 3
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    for _ in range(3):
        _fail(client, HTTP_X_FORWARDED_FOR="203.0.113.5, 10.0.0.3", **proxy)
    assert _fail(client, HTTP_X_FORWARDED_FOR="203.0.113.5", **proxy) == 429
    # A client spoofing the left-most entry is still known by the address the proxy saw.
    assert _fail(client, HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.5", **proxy) == 429
    response = client.post(
        reverse("login"),
        {"username": "alice", "password": password},
        HTTP_X_FORWARDED_FOR="192.0.2.1",
        **proxy,
    )
    assert response.status_code == 302


@pytest.mark.django_db(transaction=True)
def test_concurrent_wrong_passwords_get_at_most_the_limit_of_answers(alice, settings):
    """40 simultaneous guesses: only LOGIN_MAX_FAILURES of them may reach the password check."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection
    from django.test import Client

    settings.LOGIN_MAX_FAILURES = 10

    def guess(n: int) -> int:
        try:
            return Client().post(reverse("login"), {"username": "alice", "password": f"guess-{n}"}).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=40) as pool:
        codes = list(pool.map(guess, range(40)))
    assert codes.count(200) <= 10, codes
    assert codes.count(429) >= 30
