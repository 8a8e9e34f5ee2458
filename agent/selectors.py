"""Reads for runs, always scoped to the user. An outsider gets Http404, never a hint that a run exists."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from agent.models import Citation, Run
from agent.types import Outcome
from knowledge.models import Collection
from knowledge.selectors import AnyUser, collection_list, collection_role

# A history search is a handful of words; more would only add LIKE clauses to the query.
HISTORY_SEARCH_MAX_WORDS = 8


def run_list(
    *, user: AnyUser, collection: Collection, outcome: str = "", mine: bool = True, q: str = ""
) -> QuerySet[Run]:
    """The runs of a collection the user can see; by default only the user's own questions.

    `outcome` filters by agent.types.Outcome; the pseudo outcome "FAILED" selects failed runs
    (they have no outcome), so a user can find the questions that need a retry. `q` keeps the
    questions that contain every one of its words (case-insensitive), in any order.
    """
    if collection_role(user=user, collection=collection) is None:
        return Run.objects.none()
    runs = Run.objects.filter(collection=collection, benchmark_run__isnull=True)
    if mine:
        runs = runs.filter(user=user)
    if outcome == Run.Status.FAILED.upper():
        runs = runs.filter(status=Run.Status.FAILED)
    elif outcome in {o.value for o in Outcome}:
        runs = runs.filter(outcome=outcome)
    for word in q.split()[:HISTORY_SEARCH_MAX_WORDS]:
        runs = runs.filter(question__icontains=word)
    return runs.order_by("-created_at")


def run_get(*, user: AnyUser, pk: int) -> Run:
    """A run of a collection the user is in (any role), or Http404."""
    run = Run.objects.select_related("collection", "user").filter(pk=pk).first()
    if run is None or collection_role(user=user, collection=run.collection) is None:
        raise Http404("No such run.")
    return run


def citation_get(*, user: AnyUser, run_pk: int, marker: int) -> Citation:
    run = run_get(user=user, pk=run_pk)
    citation = (
        Citation.objects.select_related("chunk", "chunk__document").filter(run=run, marker=marker).first()
    )
    if citation is None:
        raise Http404("No such citation.")
    return citation


def askable_collections(*, user: AnyUser) -> QuerySet[Collection]:
    """Collections the global ask page offers in its picker."""
    return collection_list(user=user).order_by("name")
