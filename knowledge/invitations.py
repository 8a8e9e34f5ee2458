"""Joining Grounded: an owner's invitation by e-mail, and the optional open sign-up.

An invitation link is `/invitations/<token>/`, where the token is a random 256-bit secret
signed with django.core.signing (salt `SALT`, so no other signed value of the site fits):

1. A tampered or foreign token fails the signature check and is answered 404, before any
   database lookup.
2. The signature's timestamp and the row's `expires_at` both bound its age
   (`INVITATION_MAX_AGE_SECONDS`); an expired link is answered 410.
3. The row stores only sha256(secret): whoever reads the database cannot use a link.
4. Accepting claims the row with a conditional UPDATE (`used_at` from NULL to now) inside
   the transaction that creates the account and the membership, so two concurrent
   acceptances of one link make one account; the second gets 410.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from accounts.ratelimit import client_address, counter_hit
from knowledge.models import ROLE_RANK, Collection, Invitation, Membership, Role

SALT = "knowledge.invitation"


class InvitationInvalid(Exception):
    """The link cannot be used; `status` is the HTTP answer (404 unknown, 410 expired or used)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def invitation_create(
    *, collection: Collection, inviter: AbstractBaseUser, email: str, role: Role | str
) -> tuple[Invitation, str]:
    """A new invitation and its link token (returned once; only its hash is kept)."""
    if role not in Role.values:
        raise ValidationError("Choose a role: owner, editor, reviewer or viewer.")
    secret = secrets.token_urlsafe(32)
    invitation = Invitation(
        collection=collection,
        email=email.strip(),
        role=Role(role),
        token_hash=_hash(secret),
        invited_by=inviter,
        expires_at=timezone.now() + timedelta(seconds=settings.INVITATION_MAX_AGE_SECONDS),
    )
    invitation.full_clean()
    invitation.save()
    return invitation, signing.dumps(secret, salt=SALT)


def invitation_send(*, invitation: Invitation, link: str) -> None:
    """E-mail the link through Django's mail backend (console unless PORTAL_EMAIL_HOST is set)."""
    inviter = invitation.invited_by.get_username() if invitation.invited_by else "An owner"
    days = max(1, settings.INVITATION_MAX_AGE_SECONDS // 86400)
    body = (
        f"{inviter} invites you to the collection \"{invitation.collection.name}\" on Grounded, "
        f"as {invitation.get_role_display().lower()}.\n\n"
        f"Open this link to choose a username and a password (it works once, for {days} day{'s' * (days != 1)}):\n\n"
        f"{link}\n\nIf you did not expect this, ignore this message.\n"
    )
    send_mail(f"Invitation to {invitation.collection.name} on Grounded", body, None, [invitation.email])


def invitation_check(*, token: str) -> Invitation:
    """The pending invitation of a link, or InvitationInvalid saying why not."""
    try:
        secret = signing.loads(token, salt=SALT, max_age=settings.INVITATION_MAX_AGE_SECONDS)
    except signing.SignatureExpired:
        raise InvitationInvalid("This invitation has expired. Ask the owner for a new one.", status=410) from None
    except signing.BadSignature:
        raise InvitationInvalid("This invitation link is not valid. Check that it was copied whole.",
                                status=404) from None
    invitation = Invitation.objects.select_related("collection").filter(token_hash=_hash(str(secret))).first()
    if invitation is None:
        # Revoked, or its collection was deleted.
        raise InvitationInvalid("This invitation no longer exists. Ask the owner for a new one.", status=404)
    if invitation.used_at is not None:
        raise InvitationInvalid("This invitation has already been used. Log in instead.", status=410)
    if invitation.expires_at <= timezone.now():
        raise InvitationInvalid("This invitation has expired. Ask the owner for a new one.", status=410)
    return invitation


@transaction.atomic
def invitation_accept(
    *, token: str, user: AbstractBaseUser | None = None, username: str = "", password: str = ""
) -> tuple[AbstractBaseUser, Invitation]:
    """Claim the invitation, create the account unless `user` is given, and grant the role.

    The caller validates `username` and `password` (a UserCreationForm) first. An existing
    member keeps a higher role than the invited one: an invitation never demotes.
    """
    invitation = invitation_check(token=token)
    now = timezone.now()
    claimed = Invitation.objects.filter(pk=invitation.pk, used_at__isnull=True).update(used_at=now)
    if claimed != 1:
        raise InvitationInvalid("This invitation has already been used. Log in instead.", status=410)
    if user is None:
        user = get_user_model().objects.create_user(username=username, email=invitation.email, password=password)
    membership = Membership.objects.filter(collection=invitation.collection, user=user).first()
    if membership is None:
        Membership.objects.create(collection=invitation.collection, user=user, role=invitation.role)
    elif ROLE_RANK[Role(membership.role)] < ROLE_RANK[Role(invitation.role)]:
        membership.role = invitation.role
        membership.save(update_fields=["role"])
    invitation.used_at, invitation.used_by = now, user
    invitation.save(update_fields=["used_at", "used_by"])
    return user, invitation


def invitation_revoke(*, collection: Collection, pk: int) -> bool:
    """Delete a pending invitation of the collection; a used one stays as the record of who joined."""
    deleted, _ = Invitation.objects.filter(collection=collection, pk=pk, used_at__isnull=True).delete()
    return deleted > 0


def invitation_list(*, collection: Collection):
    return collection.invitations.select_related("invited_by", "used_by").order_by("-created_at")[:50]


def signup_throttled(request: HttpRequest) -> bool:
    """Count one post of a sign-up or invitation form from this address; True once over the limit.

    Counted before the form is checked, like the login lock-out, so concurrent posts cannot
    slip past the limit.
    """
    address = hashlib.sha256(client_address(request).encode()).hexdigest()
    hits = counter_hit(f"signup:address:{address}", window=settings.LOGIN_LOCKOUT_SECONDS)
    return hits > settings.SIGNUP_MAX_PER_ADDRESS
