"""Personal API tokens: `Authorization: Bearer <token>`; only the token's sha256 is stored.

The token itself is shown once, when it is created (settings page "API tokens"); after that
only its first characters (`prefix`) identify it. Revoking sets `revoked_at`, so the row
stays for the record but no longer authenticates.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts.models import ApiToken

TOKEN_PREFIX = "gr_"
# Enough to tell tokens apart on the settings page; far too short to guess the rest.
SHOWN_PREFIX_LENGTH = 10
LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def generate_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def api_token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Create a token for `user`. Returns the row and the plain token, which is never stored."""
    token = generate_token()
    row = ApiToken(
        user=user, name=name.strip()[:100], prefix=token[:SHOWN_PREFIX_LENGTH], token_hash=hash_token(token)
    )
    row.full_clean()
    row.save()
    return row, token


def api_token_list(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at")


def api_token_revoke(*, user: AbstractBaseUser, pk: int) -> ApiToken:
    """Revoke one of the user's own tokens; someone else's token is a 404."""
    row = ApiToken.objects.filter(user=user, pk=pk).first()
    if row is None:
        raise Http404("No such token.")
    if row.revoked_at is None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
    return row


class HashedTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):  # type: ignore[no-untyped-def]
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in (b"bearer", b"token"):
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Send the token as 'Authorization: Bearer <token>'.")
        try:
            token = header[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("The token contains invalid characters.") from None
        row = (
            ApiToken.objects.select_related("user")
            .filter(token_hash=hash_token(token), revoked_at__isnull=True)
            .first()
        )
        if row is None or not row.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        now = timezone.now()
        # One write a minute at most: a polling client must not turn every GET into a write.
        if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        return (row.user, row)

    def authenticate_header(self, request) -> str:  # type: ignore[no-untyped-def]
        return self.keyword


class HashedTokenScheme(OpenApiAuthenticationExtension):
    """Describes the token to drf-spectacular, so generated clients send `Authorization: Bearer`."""

    target_class = "accounts.api_auth.HashedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token from Settings > API tokens: `Authorization: Bearer gr_...`.",
        }
