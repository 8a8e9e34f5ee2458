"""Writes for teams and their members. API tokens are written by accounts.api_auth."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import Team, TeamMembership
from accounts.slugs import unique_slug


@transaction.atomic
def team_create(*, name: str, user: AbstractBaseUser) -> Team:
    """Create a team; its creator becomes its first admin."""
    team = Team(name=name.strip(), created_by=user)
    team.slug = unique_slug(Team, team.name)
    team.full_clean()
    team.save()
    TeamMembership.objects.create(team=team, user=user, is_admin=True)
    return team


@transaction.atomic
def team_member_add(*, team: Team, user: AbstractBaseUser, is_admin: bool = False) -> TeamMembership:
    """Add a member or change their admin flag; the team's last admin cannot step down."""
    current = TeamMembership.objects.select_for_update().filter(team=team, user=user).first()
    if (
        current is not None
        and current.is_admin
        and not is_admin
        and not team.memberships.filter(is_admin=True).exclude(pk=current.pk).exists()
    ):
        raise ValidationError("A team needs at least one admin: make someone else admin first.")
    membership, _ = TeamMembership.objects.update_or_create(
        team=team, user=user, defaults={"is_admin": is_admin}
    )
    return membership


def team_member_remove(*, team: Team, user: AbstractBaseUser) -> None:
    membership = TeamMembership.objects.filter(team=team, user=user).first()
    if membership is None:
        return
    if membership.is_admin and team.memberships.filter(is_admin=True).count() <= 1 and team.memberships.count() > 1:
        raise ValidationError("A team needs at least one admin: make someone else admin first.")
    membership.delete()
