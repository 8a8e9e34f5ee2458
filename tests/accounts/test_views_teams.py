from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts.models import TeamMembership
from accounts.services import team_create, team_member_add

pytestmark = pytest.mark.django_db


def _login(client, user, password):
    assert client.login(username=user.username, password=password)
    return client


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_only_team_admins_change_team_members(client, alice, bob, charlie, password):
    team = team_create(name="IR group", user=alice)
    team_member_add(team=team, user=bob)
    _login(client, bob, password)
    response = client.post(reverse("accounts:team_detail", kwargs={"slug": team.slug}), {"username": "charlie"})
    assert response.status_code == 403
    client.logout()
    _login(client, charlie, password)
    assert client.get(reverse("accounts:team_detail", kwargs={"slug": team.slug})).status_code == 404


def test_login_page_and_password_change_render(client, alice, password):
    assert client.get(reverse("login")).status_code == 200
    _login(client, alice, password)
    assert client.get(reverse("password_change")).status_code == 200


def test_the_last_team_admin_cannot_demote_themself(client, alice, bob, password):
    team = team_create(name="IR group", user=alice)
    team_member_add(team=team, user=bob)
    with pytest.raises(ValidationError):
        team_member_add(team=team, user=alice, is_admin=False)
    _login(client, alice, password)
    response = client.post(reverse("accounts:team_detail", kwargs={"slug": team.slug}), {"username": "alice"}, follow=True)
    assert TeamMembership.objects.get(team=team, user=alice).is_admin
    assert any("at least one admin" in m for m in _messages(response))
    # With a second admin, the first may step down.
    team_member_add(team=team, user=bob, is_admin=True)
    team_member_add(team=team, user=alice, is_admin=False)
    assert not TeamMembership.objects.get(team=team, user=alice).is_admin
