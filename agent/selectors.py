"""Reads for runs, always scoped to the user. An outsider gets Http404, never a hint that a run exists."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from agent.models import Citation, Run, Thread
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
    runs = hide_unreadable(Run.objects.filter(collection=collection, benchmark_run__isnull=True), user=user)
    if mine:
        runs = runs.filter(user=user)
    if outcome == Run.Status.FAILED.upper():
        runs = runs.filter(status=Run.Status.FAILED)
    elif outcome in {o.value for o in Outcome}:
        runs = runs.filter(outcome=outcome)
    for word in q.split()[:HISTORY_SEARCH_MAX_WORDS]:
        runs = runs.filter(question__icontains=word)
    return runs.order_by("-created_at")


def hide_unreadable(runs: QuerySet[Run], *, user: AnyUser) -> QuerySet[Run]:
    """Without the runs that also searched a collection the user cannot read: their answers
    may quote it."""
    return runs.exclude(extra_collections__in=Collection.objects.exclude(pk__in=collection_list(user=user)))


def run_readable(*, user: AnyUser, run: Run) -> bool:
    """The user has a role on the run's collection and on every other collection it searched."""
    if collection_role(user=user, collection=run.collection) is None:
        return False
    return all(collection_role(user=user, collection=c) is not None for c in run.extra_collections.all())


def run_get(*, user: AnyUser, pk: int) -> Run:
    """A run of a collection the user is in (any role), or Http404.

    A run that searched several collections needs a role on each of them."""
    run = Run.objects.select_related("collection", "user").filter(pk=pk).first()
    if run is None or not run_readable(user=user, run=run):
        raise Http404("No such run.")
    return run


def thread_list(*, user: AnyUser, collection: Collection | None = None, mine: bool = True) -> QuerySet[Thread]:
    """Threads the user can read (every turn readable), newest activity first."""
    readable = collection_list(user=user)
    threads = Thread.objects.filter(collection__in=readable).exclude(
        turns__extra_collections__in=Collection.objects.exclude(pk__in=readable))
    if collection is not None:
        threads = threads.filter(collection=collection)
    if mine:
        threads = threads.filter(user=user)
    return threads.distinct().order_by("-updated_at", "-pk")


def thread_get(*, user: AnyUser, pk: int) -> Thread:
    """A thread whose turns the user may all read, or Http404."""
    thread = Thread.objects.select_related("collection", "user").filter(pk=pk).first()
    if thread is None or collection_role(user=user, collection=thread.collection) is None:
        raise Http404("No such thread.")
    if not all(run_readable(user=user, run=r) for r in thread.turns.select_related("collection")):
        raise Http404("No such thread.")
    return thread


def thread_turns(thread: Thread) -> QuerySet[Run]:
    return thread.turns.select_related("collection", "user").order_by("pk")


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


def ask_collections_get(*, user: AnyUser, slugs: list[str], everything: bool = False) -> list[Collection]:
    """The collections a question is asked across, in the order given (deduplicated).

    `everything`: every collection the user can read. Otherwise each slug must name a
    collection the user can read: one that is not is Http404 (knowledge.selectors
    .collection_get), never silently left out of the search.
    """
    from knowledge.selectors import collection_get

    if everything:
        return list(collection_list(user=user).order_by("name"))
    return [collection_get(user=user, slug=slug)[0] for slug in dict.fromkeys(s for s in slugs if s)]


def run_search(
    *,
    user: AnyUser,
    collection: Collection | None = None,
    mine: bool = True,
    status: str = "",
    outcome: str = "",
    config: str = "",
    q: str = "",
    used_web: bool | None = None,
    ordering: str = "-created_at",
) -> QuerySet[Run]:
    """The API's list of questions: in every collection the user can read, or in `collection`
    (authorised by the caller), filtered, with what a run's summary shows, in `ordering`."""
    if collection is not None:
        runs = run_list(user=user, collection=collection, mine=False)
    else:
        runs = hide_unreadable(
            Run.objects.filter(collection__in=collection_list(user=user), benchmark_run__isnull=True), user=user
        )
    if mine:
        runs = runs.filter(user=user)
    if status:
        runs = runs.filter(status=status)
    if outcome:
        runs = runs.filter(outcome=outcome)
    if config:
        runs = runs.filter(config_name=config)
    if q:
        runs = runs.filter(question__icontains=q)
    if used_web is not None:
        runs = runs.filter(used_web=used_web)
    return runs.select_related("collection", "user").prefetch_related("extra_collections").order_by(ordering, "-pk")
