"""Teams and API tokens.

These models were born in `knowledge` and moved here without touching the database
(accounts/migrations/0001_initial.py): `db_table` keeps each on its old table, so a
deployment that migrates keeps every row, and knowledge.TeamAccess still points at
the same table.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Team(models.Model):
    """A named group of users (a research group) that can be given a role on collections."""

    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "knowledge_team"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TeamMembership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships"
    )
    is_admin = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "knowledge_teammembership"
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="unique_team_member")]

    def __str__(self) -> str:
        return f"{self.user_id} in team {self.team_id}"


class ApiToken(models.Model):
    """A personal API token. Only its sha256 is stored; the token is shown once on creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "knowledge_apitoken"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["token_hash"], condition=Q(revoked_at__isnull=True), name="live_token")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}...)"
