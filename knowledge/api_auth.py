"""Personal API tokens: `Authorization: Bearer <token>`; only the token's sha256 is stored."""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone
from rest_framework import authentication, exceptions

from knowledge.models import ApiToken

TOKEN_PREFIX = "gr_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def generate_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


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
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
        return (row.user, row)

    def authenticate_header(self, request) -> str:  # type: ignore[no-untyped-def]
        return self.keyword
