"""Joining by invitation (signed, expiring, single-use links sent by e-mail) and open sign-up."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail, signing
from django.urls import reverse
from django.utils import timezone

from knowledge.models import Invitation, Membership, Role

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-unusual-passphrase-42"


def _invite(client, collection, owner, password, *, email="dana@example.org", role="editor"):
    """Alice invites by the form; returns the path of the link the e-mail carries."""
    assert client.login(username=owner.username, password=password)
    response = client.post(reverse("knowledge:invitation_new", args=[collection.slug]), {"email": email, "role": role})
    assert response.status_code == 302
    client.logout()
    link = re.search(r"http://testserver(/invitations/\S+/)", mail.outbox[-1].body)
    assert link, mail.outbox[-1].body
    return link.group(1)


def _accept(client, path, username="dana", password=NEW_PASSWORD):
    return client.post(path, {"username": username, "password1": password, "password2": password})


def test_an_owner_invites_by_email_and_the_link_makes_the_account_and_membership(
    client, collection, alice, password, django_user_model
):
    path = _invite(client, collection, alice, password)
    message = mail.outbox[0]
    assert message.to == ["dana@example.org"] and collection.name in message.subject
    invitation = Invitation.objects.get()
    # Only a hash of the link's secret is stored.
    assert invitation.token_hash not in path and invitation.used_at is None
    page = client.get(path)
    assert page.status_code == 200 and "dana@example.org" in page.content.decode()
    response = _accept(client, path)
    assert response.status_code == 302 and response["Location"] == reverse(
        "knowledge:collection_detail", args=[collection.slug])
    dana = django_user_model.objects.get(username="dana")
    assert dana.email == "dana@example.org" and dana.check_password(NEW_PASSWORD)
    assert Membership.objects.get(collection=collection, user=dana).role == Role.EDITOR
    assert int(client.session["_auth_user_id"]) == dana.pk
    invitation.refresh_from_db()
    assert invitation.used_at is not None and invitation.used_by == dana


def test_a_used_link_is_refused_the_second_time(client, collection, alice, password, django_user_model):
    path = _invite(client, collection, alice, password)
    assert _accept(client, path).status_code == 302
    client.logout()
    again = _accept(client, path, username="eve")
    assert again.status_code == 410 and "already been used" in again.content.decode()
    assert client.get(path).status_code == 410
    assert not django_user_model.objects.filter(username="eve").exists()


def test_an_expired_link_is_refused(client, collection, alice, password, django_user_model, settings):
    path = _invite(client, collection, alice, password)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = _accept(client, path)
    assert response.status_code == 410 and "expired" in response.content.decode()
    assert not django_user_model.objects.filter(username="dana").exists()


def test_the_signatures_own_age_bounds_the_link_whatever_the_row_says(
    client, collection, alice, monkeypatch, settings
):
    import time

    from knowledge.invitations import invitation_create

    settings.INVITATION_MAX_AGE_SECONDS = 60
    real_time = time.time
    # Signed two minutes ago: the signature is too old although the row says a week.
    monkeypatch.setattr("django.core.signing.time.time", lambda: real_time() - 120)
    _, token = invitation_create(collection=collection, inviter=alice, email="dana@example.org", role="viewer")
    monkeypatch.undo()
    Invitation.objects.update(expires_at=timezone.now() + timedelta(days=7))
    response = _accept(client, reverse("knowledge:invitation_accept", args=[token]))
    assert response.status_code == 410 and "expired" in response.content.decode()


def test_a_link_with_a_wrong_signature_is_not_found(client, collection, alice, password, django_user_model):
    path = _invite(client, collection, alice, password)
    token = path.split("/")[2]
    tampered = token[:-1] + ("A" if token[-1] != "A" else "B")
    forged = signing.dumps("guessed-secret", salt="another.salt")
    for bad in (tampered, forged, "not-a-token"):
        response = _accept(client, reverse("knowledge:invitation_accept", args=[bad]))
        assert response.status_code == 404, bad
    assert not django_user_model.objects.filter(username="dana").exists()
    assert Invitation.objects.get().used_at is None


def test_only_an_owner_may_invite_outsiders_get_404_members_403(client, collection, bob, charlie, password):
    url = reverse("knowledge:invitation_new", args=[collection.slug])
    data = {"email": "mallory@example.org", "role": "owner"}
    client.login(username=charlie.username, password=password)
    assert client.post(url, data).status_code == 404
    client.login(username=bob.username, password=password)
    assert client.post(url, data).status_code == 403
    assert not Invitation.objects.exists() and mail.outbox == []


def test_a_revoked_invitation_no_longer_works(client, collection, alice, password):
    path = _invite(client, collection, alice, password)
    invitation = Invitation.objects.get()
    client.login(username=alice.username, password=password)
    body = client.get(reverse("knowledge:collection_detail", args=[collection.slug])).content.decode()
    assert "dana@example.org" in body and "pending until" in body
    client.post(reverse("knowledge:invitation_cancel", args=[collection.slug, invitation.pk]))
    client.logout()
    assert client.get(path).status_code == 404


def test_a_signed_in_user_joins_with_their_account_and_is_never_demoted(client, collection, alice, bob, password):
    path = _invite(client, collection, alice, password, email="bob@example.org", role="reviewer")
    client.login(username=bob.username, password=password)
    assert client.post(path).status_code == 302
    assert Membership.objects.get(collection=collection, user=bob).role == Role.REVIEWER
    client.logout()
    lower = _invite(client, collection, alice, password, email="bob@example.org", role="viewer")
    client.login(username=bob.username, password=password)
    assert client.post(lower).status_code == 302
    assert Membership.objects.get(collection=collection, user=bob).role == Role.REVIEWER


def test_the_account_form_refuses_taken_names_look_alikes_and_weak_passwords(
    client, collection, alice, password, django_user_model
):
    path = _invite(client, collection, alice, password)
    assert _accept(client, path, username="ALICE").status_code == 400
    assert _accept(client, path, username="\uff41lice").status_code == 400  # fullwidth a
    weak = _accept(client, path, password="12345678")
    assert weak.status_code == 400 and "too common" in weak.content.decode()
    assert Invitation.objects.get().used_at is None  # a failed form does not spend the link
    assert _accept(client, path).status_code == 302


def test_invitation_and_signup_forms_are_throttled_per_address(client, collection, alice, password, settings):
    settings.SIGNUP_MAX_PER_ADDRESS = 3
    settings.OPEN_SIGNUP = True
    path = _invite(client, collection, alice, password)
    for _ in range(2):
        assert _accept(client, path, password="short").status_code == 400
    assert client.post(reverse("knowledge:signup"), {"username": "x"}).status_code == 400
    assert _accept(client, path).status_code == 429
    assert client.post(reverse("knowledge:signup"), {"username": "x"}).status_code == 429
    assert Invitation.objects.get().used_at is None
    # Another address is not affected.
    other = client.post(path, {"username": "dana", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
                        REMOTE_ADDR="198.51.100.7")
    assert other.status_code == 302


def test_open_signup_is_off_by_default_and_makes_an_account_without_collections_when_on(
    client, collection, settings, django_user_model
):
    url = reverse("knowledge:signup")
    assert client.get(url).status_code == 404
    assert "Create an account" not in client.get(reverse("login")).content.decode()
    settings.OPEN_SIGNUP = True
    assert "Create an account" in client.get(reverse("login")).content.decode()
    data = {"username": "erin", "email": "erin@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    assert client.post(url, data).status_code == 302
    erin = django_user_model.objects.get(username="erin")
    assert erin.email == "erin@example.org" and not Membership.objects.filter(user=erin).exists()
    assert client.get(reverse("knowledge:collection_detail", args=[collection.slug])).status_code == 404


def test_an_email_that_cannot_be_sent_keeps_no_invitation(client, collection, alice, password, monkeypatch):
    import smtplib

    def refuse(*args, **kwargs):
        raise smtplib.SMTPConnectError(421, "no")

    monkeypatch.setattr("knowledge.invitations.send_mail", refuse)
    client.login(username=alice.username, password=password)
    response = client.post(reverse("knowledge:invitation_new", args=[collection.slug]),
                           {"email": "dana@example.org", "role": "viewer"}, follow=True)
    assert "could not be sent" in response.content.decode()
    assert not Invitation.objects.exists()
