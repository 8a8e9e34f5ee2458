"""Writes for collections, memberships and teams. Document ingestion lives in knowledge.ingest."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from knowledge.models import Collection, Membership, Role, Team, TeamAccess, TeamMembership


def _unique_slug(model: type, name: str) -> str:
    base = slugify(name)[:180] or "collection"
    slug, n = base, 2
    while model.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def collection_create(*, name: str, user: AbstractBaseUser, description: str = "") -> Collection:
    """Create a collection; its creator becomes its owner."""
    name = name.strip()
    collection = Collection(name=name, description=description.strip(), created_by=user)
    collection.slug = _unique_slug(Collection, name)
    collection.full_clean()
    collection.save()
    Membership.objects.create(collection=collection, user=user, role=Role.OWNER)
    return collection


def collection_update(*, collection: Collection, name: str | None = None, description: str | None = None) -> Collection:
    if name is not None:
        collection.name = name.strip()
    if description is not None:
        collection.description = description.strip()
    collection.full_clean()
    collection.save(update_fields=["name", "description"])
    return collection


def collection_delete(*, collection: Collection) -> None:
    """Delete a collection with its memberships, documents, chunks and runs.

    Stored files are content-addressed and may be shared with other collections, so they
    are left on disk; the collection's index folder is derived data and goes with it.
    """
    import shutil

    from django.conf import settings

    index_dir = Path(settings.INDEX_ROOT) / str(collection.pk)
    collection.delete()
    shutil.rmtree(index_dir, ignore_errors=True)


def _owner_count(collection: Collection) -> int:
    return collection.memberships.filter(role=Role.OWNER).count()


@transaction.atomic
def membership_set(*, collection: Collection, user: AbstractBaseUser, role: Role | str) -> Membership:
    """Add a member or change their role. The last owner cannot be demoted."""
    role = Role(role)
    # Lock the collection's memberships so two concurrent demotions cannot both pass the check.
    list(Membership.objects.select_for_update().filter(collection=collection))
    membership = Membership.objects.filter(collection=collection, user=user).first()
    if membership is None:
        return Membership.objects.create(collection=collection, user=user, role=role)
    if membership.role == Role.OWNER and role != Role.OWNER and _owner_count(collection) <= 1:
        raise ValidationError("A collection needs at least one owner: make someone else owner first.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, collection: Collection, user: AbstractBaseUser) -> None:
    list(Membership.objects.select_for_update().filter(collection=collection))
    membership = Membership.objects.filter(collection=collection, user=user).first()
    if membership is None:
        return
    if membership.role == Role.OWNER and _owner_count(collection) <= 1:
        raise ValidationError("The last owner cannot be removed: make someone else owner first.")
    membership.delete()


@transaction.atomic
def team_create(*, name: str, user: AbstractBaseUser) -> Team:
    """Create a team; its creator becomes its first admin."""
    team = Team(name=name.strip(), created_by=user)
    team.slug = _unique_slug(Team, team.name)
    team.full_clean()
    team.save()
    TeamMembership.objects.create(team=team, user=user, is_admin=True)
    return team


def team_member_add(*, team: Team, user: AbstractBaseUser, is_admin: bool = False) -> TeamMembership:
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


def team_access_set(*, collection: Collection, team: Team, role: Role | str) -> TeamAccess:
    access, _ = TeamAccess.objects.update_or_create(collection=collection, team=team, defaults={"role": Role(role)})
    return access


def team_access_remove(*, collection: Collection, team: Team) -> None:
    TeamAccess.objects.filter(collection=collection, team=team).delete()
