"""Login lock-out, enforced in the authentication backend so every login form obeys it.

Both /accounts/login/ and /admin/login/ call `authenticate()`, which reaches
`LockoutModelBackend` before any password is checked. Three counters, each in the shared
cache and each counted atomically *before* the password check (accounts.ratelimit):

- the account from one client address: `LOGIN_MAX_FAILURES` (10) attempts. This is the
  lock a guesser meets, and it does not lock the owner out from another address;
- the account from all addresses: `LOGIN_MAX_FAILURES_PER_USER` (100), a ceiling for a
  guesser who rotates addresses;
- one client address over all accounts: `LOGIN_MAX_FAILURES_PER_ADDRESS` (100), against
  one address trying a few passwords on many accounts.

Counting first and checking after means N concurrent guesses take N slots, so at most the
limit ever reach the password check. A successful login gives its slots back: the account's
counters start again, the address's loses this one attempt.

The account is keyed by its user id when the typed name, NFKC-normalised and case-folded
as Django normalises it, names an account (fullwidth or mathematical-bold letters and any case all name alice); else
by that normalised name, so unknown names are counted the same way. The client address is
`ratelimit.client_address`, which believes X-Forwarded-For only from `TRUSTED_PROXIES`.
"""

from __future__ import annotations

import hashlib
import unicodedata

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from accounts.ratelimit import client_address, counter_hit, counter_reset

# Set on the request when the lock-out refused it, so the login view can answer 429.
LOCKED_ATTRIBUTE = "login_locked_out"


def normalise_username(raw: str) -> str:
    return unicodedata.normalize("NFKC", raw).strip().casefold()


def _account_key(raw_username: str) -> str:
    name = normalise_username(raw_username)
    user_model = get_user_model()
    field = user_model.USERNAME_FIELD
    ids = [
        pk
        for pk, username in user_model._default_manager.filter(**{f"{field}__iexact": name}).values_list("pk", field)
        if normalise_username(username) == name
    ][:2]
    if len(ids) == 1:
        return f"id:{ids[0]}"
    return "name:" + hashlib.sha256(name.encode()).hexdigest()


def _keys(request: HttpRequest | None, username: str) -> dict[str, tuple[str, int]]:
    """The three counters of this attempt: name -> (cache key, limit)."""
    account = _account_key(username)
    address = client_address(request) if request is not None else ""
    address_hash = hashlib.sha256(address.encode()).hexdigest()
    return {
        "pair": (f"login-fail:pair:{account}:{address_hash}", settings.LOGIN_MAX_FAILURES),
        "account": (f"login-fail:account:{account}", settings.LOGIN_MAX_FAILURES_PER_USER),
        "address": (f"login-fail:address:{address_hash}", settings.LOGIN_MAX_FAILURES_PER_ADDRESS),
    }


class LockoutModelBackend(ModelBackend):
    """Django's ModelBackend behind an atomic lock-out: see the module docstring."""

    def authenticate(self, request, username=None, password=None, **kwargs):  # type: ignore[no-untyped-def]
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        keys = _keys(request, username)
        window = settings.LOGIN_LOCKOUT_SECONDS
        counts = {name: counter_hit(key, window=window) for name, (key, _) in keys.items()}
        if any(counts[name] > limit for name, (_, limit) in keys.items()):
            # A refused attempt gives back its slot on the counters that were not full, so
            # hammering a locked pair does not go on to lock the account everywhere.
            for name, (key, limit) in keys.items():
                if counts[name] <= limit:
                    counter_hit(key, window=window, amount=-1)
            if request is not None:
                setattr(request, LOCKED_ATTRIBUTE, True)
            # PermissionDenied stops authenticate() at once: no other backend is tried.
            raise PermissionDenied("Too many failed logins.")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            counter_reset(keys["pair"][0])
            counter_reset(keys["account"][0])
            counter_hit(keys["address"][0], window=window, amount=-1)
        return user
