"""Reads, always scoped to the user who asks. An outsider sees nothing: lookups raise Http404."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import Http404

from knowledge.models import ROLE_RANK, Collection, Document, IngestJob, Membership, Role, TeamAccess

AnyUser = AbstractBaseUser | AnonymousUser


def collection_list(*, user: AnyUser) -> QuerySet[Collection]:
    """Collections the user can see, directly or through a team."""
    if not user.is_authenticated:
        return Collection.objects.none()
    return Collection.objects.filter(
        Q(memberships__user=user) | Q(team_accesses__team__memberships__user=user)
    ).distinct()


def collection_search(*, user: AnyUser, q: str = "", ordering: str = "name") -> QuerySet[Collection]:
    """The user's collections whose name contains `q`, with their document counts, in `ordering`."""
    queryset = collection_list(user=user)
    if q:
        queryset = queryset.filter(name__icontains=q)
    return _with_counts(queryset).order_by(ordering, "pk")


def collection_with_counts(*, pk: int) -> Collection:
    """One collection, already authorised, with the document count its API shape shows."""
    return _with_counts(Collection.objects.filter(pk=pk)).get()


def _with_counts(queryset: QuerySet[Collection]) -> QuerySet[Collection]:
    return queryset.annotate(document_count=Count("documents", distinct=True))


def collection_roles(*, user: AnyUser) -> dict[int, Role]:
    """The user's effective role on each of their collections, in two queries (not two per row)."""
    roles: dict[int, Role] = {}
    pairs = list(Membership.objects.filter(user=user).values_list("collection_id", "role"))
    pairs += TeamAccess.objects.filter(team__memberships__user=user).values_list("collection_id", "role")
    for collection_id, role in pairs:
        current = roles.get(collection_id)
        if current is None or ROLE_RANK[Role(role)] > ROLE_RANK[current]:
            roles[collection_id] = Role(role)
    return roles


def collection_role(*, user: AnyUser, collection: Collection) -> Role | None:
    """The user's effective role: the highest of their own and their teams' roles."""
    if not user.is_authenticated:
        return None
    roles = list(
        Membership.objects.filter(collection=collection, user=user).values_list("role", flat=True)
    )
    roles += TeamAccess.objects.filter(collection=collection, team__memberships__user=user).values_list(
        "role", flat=True
    )
    if not roles:
        return None
    return max((Role(r) for r in roles), key=ROLE_RANK.__getitem__)


def role_at_least(role: Role | None, minimum: Role) -> bool:
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[minimum]


def collection_get(*, user: AnyUser, slug: str, minimum: Role = Role.VIEWER) -> tuple[Collection, Role]:
    """The collection and the user's role on it.

    Raises Http404 for an outsider (whatever exists is not revealed) and PermissionDenied
    for a member whose role is below `minimum`.
    """
    from django.core.exceptions import PermissionDenied

    collection = Collection.objects.filter(slug=slug).first()
    role = collection_role(user=user, collection=collection) if collection else None
    if collection is None or role is None:
        raise Http404("No such collection.")
    if not role_at_least(role, minimum):
        raise PermissionDenied(f"This needs the {minimum.label.lower()} role on {collection.name}.")
    return collection, role


def membership_list(*, collection: Collection) -> QuerySet[Membership]:
    return collection.memberships.select_related("user").order_by("user__username")


def team_access_list(*, collection: Collection) -> QuerySet[TeamAccess]:
    return collection.team_accesses.select_related("team").order_by("team__name")


def document_list(*, user: AnyUser, collection: Collection) -> QuerySet[Document]:
    if collection_role(user=user, collection=collection) is None:
        return Document.objects.none()
    return collection.documents.all()


def document_search(
    *, user: AnyUser, collection: Collection, status: str = "", q: str = "", ordering: str = "title"
) -> QuerySet[Document]:
    """Documents of the collection in `status` whose title or file name contains `q`, with their latest job."""
    queryset = document_list(user=user, collection=collection)
    if status:
        queryset = queryset.filter(status=status)
    if q:
        queryset = queryset.filter(Q(title__icontains=q) | Q(original_name__icontains=q))
    return _with_jobs(queryset.order_by(ordering, "pk"))


def document_with_jobs(*, pk: int) -> Document:
    """One document, already authorised, with the ingestion jobs its API shape shows (newest first)."""
    return _with_jobs(Document.objects.filter(pk=pk)).get()


def _with_jobs(queryset: QuerySet[Document]) -> QuerySet[Document]:
    jobs = IngestJob.objects.order_by("-created_at", "-pk")
    return queryset.select_related("collection").prefetch_related(Prefetch("jobs", jobs, to_attr="latest_jobs"))


def document_get(*, user: AnyUser, pk: int, minimum: Role = Role.VIEWER) -> tuple[Document, Role]:
    document = Document.objects.select_related("collection").filter(pk=pk).first()
    if document is None:
        raise Http404("No such document.")
    _, role = collection_get(user=user, slug=document.collection.slug, minimum=minimum)
    return document, role
